// The causal tools on the pretrained block: activation patching of head outputs, patching
// every head at once (patch_heads), and direct logit attribution. The definitions are those
// of tests/golden/findings/README.md and docs/findings.md; the float64 answers the tests
// compare against come from tests/golden/findings/make_findings.py.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "pretrained_arch.hpp"
#include "pretrained_causal.hpp"

namespace headlab {

namespace {

// Rows the batched runs of patch_heads hold at once (their activations grow with it).
constexpr std::size_t kPatchRows = 256;

std::string token_error(const char* name, std::int32_t id, std::size_t vocab) {
  if (id >= 0 && std::size_t(id) < vocab) return "";
  return std::string(name) + " must be a token id in 0.." + std::to_string(vocab - 1) + ", not " + std::to_string(id);
}

}  // namespace

void PretrainedModel::trace_run(Path path, const std::int32_t* tokens, std::size_t t,
                                const PretrainedRunOptions& options, PretrainedRunResult* result, Trace* trace) {
  const std::size_t big_l = config_.num_layers, d = config_.d_model, hw = block_.heads * block_.head_dim;
  trace->z.assign(big_l * t * hw, 0.0f);
  trace->x.assign(trace->keep_x ? big_l * t * d : 0, 0.0f);
  trace->qkv.assign(trace->keep_qkv ? big_l * t * qkv_width() : 0, 0.0f);
  trace->x_final.assign(d, 0.0f);
  forward(tokens, 0, t, options, result, path, false, trace, nullptr);
}

std::string PretrainedModel::run_patched(const std::int32_t* tokens, std::size_t t,
                                         const PretrainedRunOptions& options, PretrainedRunResult* result,
                                         Path path) {
  if (!options.patch_source) return "patch: no source sequence was given";
  if (options.patch_source_length != t)
    return "patch.source is " + std::to_string(options.patch_source_length) + " tokens long and the run " +
           std::to_string(t) +
           ": a patched head takes its output at every position from the source run, so both must have "
           "the same length";
  const std::string error = check(options.patch_source, t);
  if (!error.empty()) return "patch.source: " + error;
  PretrainedRunOptions source;
  source.token_types = options.token_types;
  Trace trace;
  trace_run(path, options.patch_source, t, source, result, &trace);
  forward(tokens, 0, t, options, result, path, false, nullptr, trace.z.data());
  return "";
}

void PretrainedModel::unembed_difference(std::int32_t answer, std::int32_t wrong, std::vector<float>* u,
                                         float* bias) const {
  const Tensor& w = unembedding();
  const std::size_t d = config_.d_model, v = config_.vocab;
  std::vector<float> b(d);
  u->assign(d, 0.0f);
  // Every unembedding is [vocab, d] by rows (an embedding, or nn.Linear's [out, in]): a row is a token's.
  embed_wide(Path::ref, &answer, 1, d, w.data, w.dtype, nullptr, w.dtype, u->data(), w.packed ? v : 0);
  embed_wide(Path::ref, &wrong, 1, d, w.data, w.dtype, nullptr, w.dtype, b.data(), w.packed ? v : 0);
  for (std::size_t j = 0; j < d; ++j) (*u)[j] -= b[j];
  const Tensor& ub = globals_[unembed_b];
  *bias = ub.present ? ub.values[answer] - ub.values[wrong] : 0.0f;
}

std::string PretrainedModel::patch_heads_begin(const PatchHeadsArgs& args, PatchHeadsResult* out, Path path) {
  patch_heads_end();
  const PretrainedConfig& c = config_;
  if (block_.hidden_output)
    return "activation patching measures logit[answer] - logit[wrong], and this model has no head (" +
           std::string(arch::architecture(c.architecture).name) + "): it gives hidden states, not logits";
  std::string error = check(args.clean, args.t);
  if (!error.empty()) return "clean: " + error;
  error = check(args.corrupted, args.t);
  if (!error.empty()) return "corrupted: " + error;
  error = check_types(args.token_types, args.t);
  if (!error.empty()) return "token_types: " + error;
  error = token_error("answer", args.answer, c.vocab);
  if (error.empty()) error = token_error("wrong", args.wrong, c.vocab);
  if (!error.empty()) return error;
  if (args.at >= args.t)
    return "position " + std::to_string(args.at) + " is outside 0.." + std::to_string(args.t - 1) + " (the tokens)";
  auto s = std::make_unique<PatchSession>();
  s->ids.assign(args.clean, args.clean + args.t);
  s->ids.insert(s->ids.end(), args.corrupted, args.corrupted + args.t);
  s->args = args;
  s->args.clean = s->ids.data();
  s->args.corrupted = s->ids.data() + args.t;
  if (args.token_types) s->types.assign(args.token_types, args.token_types + args.t);
  s->args.token_types = args.token_types ? s->types.data() : nullptr;
  const std::size_t t = args.t, at = args.at, d = c.d_model, big_l = c.num_layers, nh = block_.heads;
  // A decoder's rows before the first difference are the same in every run, and rows after
  // `at` never reach it: only rows p0..at are recomputed. An encoder recomputes every row.
  if (block_.causal) {
    std::size_t first = 0;
    while (first < t && args.clean[first] == args.corrupted[first]) ++first;
    s->p0 = std::min(first, at);
    s->end = at + 1;
  } else {
    s->p0 = 0;
    s->end = t;
  }
  PretrainedRunOptions o;
  o.all_logits = at != t - 1;
  o.token_types = s->args.token_types;
  PretrainedRunResult r;
  const auto metric = [&](const PretrainedRunResult& res) {
    const float* row = res.logits.data() + (o.all_logits ? at * c.vocab : 0);
    return row[args.answer] - row[args.wrong];
  };
  trace_run(path, s->args.clean, t, o, &r, &s->clean);
  out->metric_clean = metric(r);
  s->corrupted.keep_x = s->corrupted.keep_qkv = true;
  trace_run(path, s->args.corrupted, t, o, &r, &s->corrupted);
  out->metric_corrupted = metric(r);
  out->effects.assign(big_l * nh, 0.0f);
  unembed_difference(args.answer, args.wrong, &s->u, &s->bias);
  const std::size_t n = s->end - s->p0;
  s->group = std::max<std::size_t>(1, std::min(nh, kPatchRows / n));
  s->kv.assign(s->group * s->end * qkv_width(), 0.0f);
  s->rows.assign(s->group * d, 0.0f);
  reserve(std::max(s->group * n, t), false, false, false);
  patch_ = std::move(s);
  return "";
}

void PretrainedModel::patch_heads_end() {
  patch_.reset();
}

// x_ and heads_ hold `seqs` runs of rows p0..end-1 at layer l, just after its attention;
// metrics[s]: each run's metric at the end.
std::string PretrainedModel::patch_continue(Path path, std::size_t l, std::size_t seqs, float* metrics) {
  PatchSession& s = *patch_;
  const BlockSpec& b = block_;
  const std::size_t d = config_.d_model, nh = b.heads, hw = nh * b.head_dim, qw = qkv_width(), p0 = s.p0,
                    end = s.end, n = end - p0, rows = seqs * n;
  float *x = x_.data(), *heads = heads_.data();
  if (b.positions == BlockSpec::Positions::rotary) rope_table(b.rope, p0, n, rope_cos_.data(), rope_sin_.data());
  layer_rest(path, l, x, heads, rows, nullptr);
  for (std::size_t k = l + 1; k < config_.num_layers; ++k) {
    float* qkv = qkv_.data();
    layer_qkv(path, k, x, seqs, n, qkv);
    // Each run's keys and values: the shared rows before p0 (the corrupted run's), then its own.
    const float* prefix = s.corrupted.qkv.data() + k * s.args.t * qw;
    for (std::size_t q = 0; q < seqs; ++q) {
      float* kv = s.kv.data() + q * end * qw;
      std::copy(prefix, prefix + p0 * qw, kv);
      std::copy(qkv + q * n * qw, qkv + (q + 1) * n * qw, kv + p0 * qw);
    }
    parallel(seqs * nh, [&](std::size_t i, std::size_t worker) {
      const std::size_t q = i / nh, h = i % nh;
      attend_head(path, k, h, p0, end, s.kv.data() + q * end * qw, nullptr, nullptr, nullptr, heads + q * n * hw,
                  worker);
    });
    layer_rest(path, k, x, heads, rows, nullptr);
  }
  const std::size_t at = s.args.at - p0;
  for (std::size_t q = 0; q < seqs; ++q)
    std::copy(x + (q * n + at) * d, x + (q * n + at + 1) * d, s.rows.data() + q * d);
  head(path, s.rows.data(), seqs, ln_.data());
  for (std::size_t q = 0; q < seqs; ++q) {
    const float* y = ln_.data() + q * d;
    double m = 0;
    for (std::size_t j = 0; j < d; ++j) m += double(y[j]) * s.u[j];
    metrics[q] = float(m) + s.bias;
  }
  return "";
}

std::string PretrainedModel::patch_heads_layer(std::size_t l, PatchHeadsResult* out, Path path, bool naive) {
  if (!patch_) return "patch_heads_layer: patch_heads_begin first";
  if (l >= config_.num_layers)
    return "layer " + std::to_string(l) + " is outside 0.." + std::to_string(config_.num_layers - 1);
  PatchSession& s = *patch_;
  const BlockSpec& b = block_;
  const std::size_t nh = b.heads, dk = b.head_dim, hw = nh * dk, d = config_.d_model, t = s.args.t, p0 = s.p0,
                    n = s.end - p0;
  std::vector<float> metrics(s.group);
  if (naive) {
    // A whole patched run per head, the clean run's outputs in place of the head's.
    std::vector<std::uint8_t> mask(config_.num_layers * nh, 0);
    PretrainedRunOptions o;
    o.all_logits = s.args.at != t - 1;
    o.token_types = s.args.token_types;
    o.patch_heads = mask.data();
    PretrainedRunResult r;
    for (std::size_t h = 0; h < nh; ++h) {
      mask[l * nh + h] = 1;
      forward(s.args.corrupted, 0, t, o, &r, path, false, nullptr, s.clean.z.data());
      mask[l * nh + h] = 0;
      const float* row = r.logits.data() + (o.all_logits ? s.args.at * config_.vocab : 0);
      out->effects[l * nh + h] = (row[s.args.answer] - row[s.args.wrong]) - out->metric_corrupted;
    }
    return "";
  }
  for (std::size_t h0 = 0; h0 < nh; h0 += s.group) {
    const std::size_t seqs = std::min(s.group, nh - h0);
    for (std::size_t q = 0; q < seqs; ++q) {
      const float* x = s.corrupted.x.data() + (l * t + p0) * d;
      std::copy(x, x + n * d, x_.data() + q * n * d);
      const float *zc = s.corrupted.z.data() + (l * t + p0) * hw, *zs = s.clean.z.data() + (l * t + p0) * hw;
      float* heads = heads_.data() + q * n * hw;
      std::copy(zc, zc + n * hw, heads);
      const std::size_t h = h0 + q;
      for (std::size_t i = 0; i < n; ++i)
        std::copy(zs + i * hw + h * dk, zs + i * hw + (h + 1) * dk, heads + i * hw + h * dk);
    }
    const std::string error = patch_continue(path, l, seqs, metrics.data());
    if (!error.empty()) return error;
    for (std::size_t q = 0; q < seqs; ++q) out->effects[l * nh + h0 + q] = metrics[q] - out->metric_corrupted;
  }
  return "";
}

std::string PretrainedModel::patch_heads(const PatchHeadsArgs& args, PatchHeadsResult* out, Path path,
                                         bool naive) {
  std::string error = patch_heads_begin(args, out, path);
  for (std::size_t l = 0; error.empty() && l < config_.num_layers; ++l) error = patch_heads_layer(l, out, path, naive);
  patch_heads_end();
  return error;
}

std::string PretrainedModel::direct_logit_attribution(const std::int32_t* tokens, std::size_t t,
                                                      std::int32_t answer, std::int32_t wrong, std::size_t at,
                                                      LogitAttribution* out, Path path) {
  const PretrainedConfig& c = config_;
  const BlockSpec& b = block_;
  if (b.hidden_output)
    return "direct logit attribution needs logits, and this model has no head (" +
           std::string(arch::architecture(c.architecture).name) + "): it gives hidden states";
  if (b.post_norm || b.mlm_head)
    return "direct logit attribution needs a decoder whose residual reaches the logits through one final "
           "norm; this model normalises the residual after every layer" +
           std::string(b.mlm_head ? " and its masked-LM head has a dense layer and GELU before the logits" : "") +
           ", so its logits are not a sum of the heads' and MLPs' parts (activation patching works on it)";
  std::string error = check(tokens, t);
  if (error.empty()) error = token_error("answer", answer, c.vocab);
  if (error.empty()) error = token_error("wrong", wrong, c.vocab);
  if (!error.empty()) return error;
  if (at >= t) return "position " + std::to_string(at) + " is outside 0.." + std::to_string(t - 1) + " (the tokens)";
  const std::size_t big_l = c.num_layers, nh = b.heads, dk = b.head_dim, hw = nh * dk, d = c.d_model;
  Trace trace;
  trace.at = at;
  trace.mlp.assign(big_l * d, 0.0f);
  PretrainedRunOptions o;
  o.all_logits = at != t - 1;
  PretrainedRunResult r;
  trace_run(path, tokens, t, o, &r, &trace);
  const float* row = r.logits.data() + (o.all_logits ? at * c.vocab : 0);
  out->logit_diff = row[answer] - row[wrong];

  // The final norm with its divisor frozen at the whole residual's: g = weight * u / s, and a
  // LayerNorm's centring applied to each part (a linear map, so the parts still add up).
  std::vector<float> u;
  float bias = 0;
  unembed_difference(answer, wrong, &u, &bias);
  const float* x = trace.x_final.data();
  const bool layer = b.norm == BlockSpec::Norm::layer;
  double mean = 0, var = 0;
  for (std::size_t j = 0; j < d; ++j) mean += x[j];
  mean = layer ? mean / double(d) : 0.0;
  for (std::size_t j = 0; j < d; ++j) var += (x[j] - mean) * (x[j] - mean);
  const double scale = std::sqrt(var / double(d) + double(b.eps));
  out->scale = float(scale);
  const float* gamma = globals_[final_w].values;
  std::vector<double> g(d);
  for (std::size_t j = 0; j < d; ++j)
    g[j] = (b.norm == BlockSpec::Norm::rms_one_plus ? 1.0 + gamma[j] : double(gamma[j])) * u[j] / scale;
  const auto attribute = [&](const float* part) {
    double m = 0, sum = 0;
    if (layer) {
      for (std::size_t j = 0; j < d; ++j) m += part[j];
      m /= double(d);
    }
    for (std::size_t j = 0; j < d; ++j) sum += (part[j] - m) * g[j];
    return float(sum);
  };

  // Each head's output at `at` alone through W_o (no bias): one product per layer, a row per head.
  reserve(std::max(t, nh), false, false, false);
  std::vector<float> alone(nh * hw), parts(nh * d);
  const Tensor none{};
  out->heads.assign(big_l * nh, 0.0f);
  out->mlps.assign(big_l, 0.0f);
  for (std::size_t l = 0; l < big_l; ++l) {
    std::fill(alone.begin(), alone.end(), 0.0f);
    const float* z = trace.z.data() + (l * t + at) * hw;
    for (std::size_t h = 0; h < nh; ++h) std::copy(z + h * dk, z + (h + 1) * dk, alone.data() + h * hw + h * dk);
    linear(path, alone.data(), hw, nh, layers_[l].t[o_w], none, parts.data(), d);
    for (std::size_t h = 0; h < nh; ++h) out->heads[l * nh + h] = attribute(parts.data() + h * d);
    out->mlps[l] = attribute(trace.mlp.data() + l * d);
  }
  return "";
}

}  // namespace headlab
