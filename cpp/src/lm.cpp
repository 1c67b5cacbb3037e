#include "headlab/lm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "headlab/lm_kernels.hpp"

namespace headlab {

namespace {

std::size_t round4(std::size_t n) {
  return (n + 3) & ~std::size_t{3};
}

MhaShape lm_mha_shape(const LmConfig& c) {
  MhaShape s;
  s.t_q = s.t_k = c.seq_len;
  s.d_model = c.d_model;
  s.num_heads = c.num_heads;
  s.causal = true;
  mha_resolve_shape(s);
  return s;
}

// Activation floats per layer and at the end, for max_batch sequences.
struct ActSizes {
  std::size_t rows, per_layer, cache, final_floats, total;
};

ActSizes act_sizes(const LmConfig& c) {
  ActSizes s{};
  const std::size_t d = c.d_model, f = 4 * d;
  s.rows = c.max_batch * c.seq_len;
  const std::size_t rd = round4(s.rows * d), r2 = round4(2 * s.rows);
  s.cache = round4(mha_cache_floats(lm_mha_shape(c), c.max_batch));
  s.per_layer = rd + rd + r2 + s.cache;                             // resid, ln1, ln1 stats, cache
  if (c.mlp) s.per_layer += rd + rd + r2 + 2 * round4(s.rows * f);  // mid, ln2, stats, fc, act
  s.final_floats = rd + rd + r2;                                    // X_L, LN_f output, stats
  s.total = c.num_layers * s.per_layer + s.final_floats;
  return s;
}

struct ScratchSizes {
  std::size_t attn_out, dresid, dtmp, dfc, dlogits, fws, bws, probs;
};

ScratchSizes scratch_sizes(const LmConfig& c) {
  const std::size_t d = c.d_model, f = 4 * d, v = c.vocab, rows = c.max_batch * c.seq_len;
  ScratchSizes s{};
  s.attn_out = s.dresid = s.dtmp = rows * d;
  s.dfc = c.mlp ? rows * f : 0;
  s.dlogits = s.probs = rows * v;
  const MhaShape shape = lm_mha_shape(c);
  s.fws = mha_forward_cached_workspace_floats(shape);
  s.bws = mha_backward_workspace_floats(shape, c.max_batch);
  return s;
}

}  // namespace

const char* lm_config_error(const LmConfig& c) {
  if (c.vocab < 2) return "vocab must be at least 2";
  if (c.seq_len < 1) return "seq_len must be positive";
  if (c.d_model < 1) return "d_model must be positive";
  if (c.num_heads < 1 || c.d_model % c.num_heads != 0) return "num_heads must divide d_model";
  if (c.num_layers < 1 || c.num_layers > kLmMaxLayers) return "num_layers must be 1..4";
  if (c.max_batch < 1) return "max_batch must be positive";
  return "";
}

LmLayout lm_layout(const LmConfig& c) {
  const std::size_t d = c.d_model, f = c.mlp ? 4 * d : 0;
  LmLayout l{};
  std::size_t o = 0;
  l.tok_emb = o, o += c.vocab * d;
  l.pos_emb = o, o += c.seq_len * d;
  for (std::size_t i = 0; i < c.num_layers; ++i) {
    LmLayerLayout& y = l.layers[i];
    y.ln1_g = o, o += d;
    y.ln1_b = o, o += d;
    y.w_q = o, o += d * d;
    y.w_k = o, o += d * d;
    y.w_v = o, o += d * d;
    y.w_o = o, o += d * d;
    y.b_q = o, o += d;
    y.b_k = o, o += d;
    y.b_v = o, o += d;
    y.b_o = o, o += d;
    const std::size_t dm = c.mlp ? d : 0;
    y.ln2_g = o, o += dm;
    y.ln2_b = o, o += dm;
    y.w_fc = o, o += d * f;
    y.b_fc = o, o += f;
    y.w_proj = o, o += f * d;
    y.b_proj = o, o += dm;
  }
  l.lnf_g = o, o += d;
  l.lnf_b = o, o += d;
  l.w_unembed = o, o += d * c.vocab;
  l.b_unembed = o, o += c.vocab;
  l.total = o;
  return l;
}

std::size_t LanguageModel::buffer_bytes(const LmConfig& c) {
  const ScratchSizes s = scratch_sizes(c);
  const std::size_t floats = 2 * lm_layout(c).total + act_sizes(c).total + s.attn_out + s.dresid + s.dtmp +
                             s.dfc + s.dlogits + s.fws + s.bws + s.probs;
  const std::size_t rows = c.max_batch * c.seq_len;
  return floats * sizeof(float) + rows * sizeof(std::int32_t) * 2 + c.num_layers * c.num_heads;
}

LanguageModel::LanguageModel(const LmConfig& c)
    : config_(c), layout_(lm_layout(c)), shape_(lm_mha_shape(c)), rows_max_(c.max_batch * c.seq_len) {
  const std::size_t d = c.d_model, f = 4 * d, rows = rows_max_;
  params_.assign(layout_.total, 0.0f);
  grads_.assign(layout_.total, 0.0f);
  head_enabled_.assign(c.num_layers * c.num_heads, 1);

  const ActSizes a = act_sizes(c);
  act_.assign(a.total, 0.0f);
  const std::size_t rd = round4(rows * d), r2 = round4(2 * rows), rf = round4(rows * f);
  float* p = act_.data();
  for (std::size_t l = 0; l < c.num_layers; ++l) {
    resid_[l] = p, p += rd;
    ln1_[l] = p, p += rd;
    ln1_stats_[l] = p, p += r2;
    caches_[l] = mha_cache_view(shape_, c.max_batch, p), p += a.cache;
    if (c.mlp) {
      mid_[l] = p, p += rd;
      ln2_[l] = p, p += rd;
      ln2_stats_[l] = p, p += r2;
      fc_[l] = p, p += rf;
      act_fc_[l] = p, p += rf;
    } else {
      mid_[l] = ln2_[l] = ln2_stats_[l] = fc_[l] = act_fc_[l] = nullptr;
    }
  }
  resid_[c.num_layers] = p, p += rd;
  lnf_ = p, p += rd;
  lnf_stats_ = p, p += r2;
  if (!c.mlp)
    for (std::size_t l = 0; l < c.num_layers; ++l) mid_[l] = resid_[l + 1];

  const ScratchSizes s = scratch_sizes(c);
  probs_.assign(s.probs, 0.0f);
  argmax_.assign(rows, 0);
  no_targets_.assign(c.seq_len, -1);
  attn_out_.assign(s.attn_out, 0.0f);
  dresid_.assign(s.dresid, 0.0f);
  dtmp_.assign(s.dtmp, 0.0f);
  dfc_.assign(s.dfc, 0.0f);
  dlogits_.assign(s.dlogits, 0.0f);
  fws_.assign(s.fws, 0.0f);
  bws_.assign(s.bws, 0.0f);
}

void LanguageModel::init(Rng& rng) {
  const LmConfig& c = config_;
  const std::size_t d = c.d_model, f = 4 * d;
  float* p = params_.data();
  std::fill(params_.begin(), params_.end(), 0.0f);
  const float s_emb = 1.0f, s_pos = 0.1f;
  const float s_qk = std::sqrt(2.0f / float(d)), s_in = std::sqrt(0.5f / float(d));
  const float s_lin = std::sqrt(1.0f / (3.0f * float(d))), s_proj = std::sqrt(1.0f / (3.0f * float(f)));
  fill_normal(rng, p + layout_.tok_emb, c.vocab * d, s_emb);
  fill_normal(rng, p + layout_.pos_emb, c.seq_len * d, s_pos);
  for (std::size_t l = 0; l < c.num_layers; ++l) {
    const LmLayerLayout& y = layout_.layers[l];
    std::fill(p + y.ln1_g, p + y.ln1_g + d, 1.0f);
    fill_normal(rng, p + y.w_q, d * d, s_qk);
    fill_normal(rng, p + y.w_k, d * d, s_qk);
    fill_normal(rng, p + y.w_v, d * d, s_in);
    fill_normal(rng, p + y.w_o, d * d, s_lin);
    if (c.mlp) {
      std::fill(p + y.ln2_g, p + y.ln2_g + d, 1.0f);
      fill_normal(rng, p + y.w_fc, d * f, s_lin);
      fill_normal(rng, p + y.w_proj, f * d, s_proj);
    }
  }
  std::fill(p + layout_.lnf_g, p + layout_.lnf_g + d, 1.0f);
  fill_normal(rng, p + layout_.w_unembed, d * c.vocab, s_lin);
}

void LanguageModel::set_head_enabled(std::size_t layer, std::size_t head, bool on) {
  head_enabled_[layer * config_.num_heads + head] = on ? 1 : 0;
}

bool LanguageModel::head_enabled(std::size_t layer, std::size_t head) const {
  return head_enabled_[layer * config_.num_heads + head] != 0;
}

// The model's GEMMs go through gemm(Path) (gemm_simd), not gemm_packed_simd:
// with k = d_model = 32 packing does not pay, and the packed kernel's 16-column
// panels pad a 33-token vocabulary to 48 columns.

LmResult LanguageModel::forward(const LmBatch& batch, std::size_t n, bool backward, Path path) {
  return run(batch.tokens.data(), batch.targets.data(), n, backward, path);
}

void LanguageModel::forward_logits(const std::int32_t* tokens, std::size_t n, Path path) {
  const LmConfig& c = config_;
  const std::size_t d = c.d_model, f = 4 * d, t = c.seq_len, v = c.vocab, h = c.num_heads;
  const std::size_t rows = n * t, big_l = c.num_layers;
  const float* p = params_.data();
  embedding_forward(path, tokens, n, t, d, p + layout_.tok_emb, p + layout_.pos_emb, resid_[0]);
  for (std::size_t l = 0; l < big_l; ++l) {
    const LmLayerLayout& y = layout_.layers[l];
    layernorm_forward(path, {rows, d, resid_[l], p + y.ln1_g, p + y.ln1_b, ln1_[l], ln1_stats_[l],
                             ln1_stats_[l] + rows_max_, c.ln_eps});
    MhaInputs in;
    in.query = in.key = in.value = ln1_[l];
    mha_forward_cached(shape_, n, in, mha_weights_at(p, layout_.layers[l]), head_enabled_.data() + l * h, caches_[l],
                       attn_out_.data(), fws_.data(), path);
    add(path, resid_[l], attn_out_.data(), mid_[l], rows * d);
    if (!c.mlp) continue;
    layernorm_forward(path, {rows, d, mid_[l], p + y.ln2_g, p + y.ln2_b, ln2_[l], ln2_stats_[l],
                             ln2_stats_[l] + rows_max_, c.ln_eps});
    gemm(path, {rows, f, d, ln2_[l], d, p + y.w_fc, f, fc_[l], f, p + y.b_fc, false});
    gelu_forward(path, fc_[l], act_fc_[l], rows * f);
    gemm(path, {rows, d, f, act_fc_[l], f, p + y.w_proj, d, attn_out_.data(), d, p + y.b_proj, false});
    add(path, mid_[l], attn_out_.data(), resid_[l + 1], rows * d);
  }
  layernorm_forward(path, {rows, d, resid_[big_l], p + layout_.lnf_g, p + layout_.lnf_b, lnf_, lnf_stats_,
                           lnf_stats_ + rows_max_, c.ln_eps});
  gemm(path, {rows, v, d, lnf_, d, p + layout_.w_unembed, v, probs_.data(), v, p + layout_.b_unembed, false});
}

LmResult LanguageModel::run(const std::int32_t* tokens, const std::int32_t* targets, std::size_t n,
                            bool backward, Path path) {
  const LmConfig& c = config_;
  const std::size_t d = c.d_model, f = 4 * d, t = c.seq_len, v = c.vocab, h = c.num_heads;
  const std::size_t rows = n * t, big_l = c.num_layers;
  const float* p = params_.data();

  forward_logits(tokens, n, path);
  LmResult res;
  for (std::size_t r = 0; r < rows; ++r) res.predictions += targets[r] >= 0 ? 1 : 0;
  const float scale = res.predictions ? 1.0f / float(res.predictions) : 0.0f;
  const CrossEntropyArgs ce{
      rows, v, probs_.data(), targets, nullptr, backward ? dlogits_.data() : nullptr, argmax_.data(), scale};
  const double total = cross_entropy_rows(path, ce);
  res.loss = res.predictions ? float(total / double(res.predictions)) : 0.0f;
  for (std::size_t r = 0; r < rows; ++r) res.correct += targets[r] >= 0 && argmax_[r] == targets[r] ? 1 : 0;
  if (!backward) return res;

  // ---- Backward. dresid carries d loss / d X_l down the residual stream.
  float* g = grads_.data();
  float* dresid = dresid_.data();
  float* dtmp = dtmp_.data();
  const float* dlogits = dlogits_.data();
  // logits = LN_f W_U + b_U
  gemm(path, {d, v, rows, lnf_, d, dlogits, v, g + layout_.w_unembed, v, nullptr, false, true, false});
  column_sums(path, dlogits, rows, v, v, g + layout_.b_unembed, false);
  gemm(path, {rows, d, v, dlogits, v, p + layout_.w_unembed, v, dtmp, d, nullptr, false, false, true});
  layernorm_backward(path, {rows, d, resid_[big_l], p + layout_.lnf_g, lnf_stats_, lnf_stats_ + rows_max_,
                            dtmp, dresid, g + layout_.lnf_g, g + layout_.lnf_b, false});

  for (std::size_t l = big_l; l-- > 0;) {
    const LmLayerLayout& y = layout_.layers[l];
    if (c.mlp) {
      // X_{l+1} = M + GELU(LN2(M) W_fc + b_fc) W_proj + b_proj
      float* dfc = dfc_.data();
      gemm(path, {f, d, rows, act_fc_[l], f, dresid, d, g + y.w_proj, d, nullptr, false, true, false});
      column_sums(path, dresid, rows, d, d, g + y.b_proj, false);
      gemm(path, {rows, f, d, dresid, d, p + y.w_proj, d, dfc, f, nullptr, false, false, true});
      gelu_backward(path, fc_[l], dfc, dfc, rows * f);
      gemm(path, {d, f, rows, ln2_[l], d, dfc, f, g + y.w_fc, f, nullptr, false, true, false});
      column_sums(path, dfc, rows, f, f, g + y.b_fc, false);
      gemm(path, {rows, d, f, dfc, f, p + y.w_fc, f, dtmp, d, nullptr, false, false, true});
      layernorm_backward(path, {rows, d, mid_[l], p + y.ln2_g, ln2_stats_[l], ln2_stats_[l] + rows_max_, dtmp,
                                dresid, g + y.ln2_g, g + y.ln2_b, true});
    }
    // M = X + MultiHead(LN1(X)); query, key and value are one buffer: gradients add.
    MhaInputs in;
    in.query = in.key = in.value = ln1_[l];
    MhaGrads mg = mha_grads_at(g, y);
    mg.query = mg.key = mg.value = dtmp;
    mha_backward(shape_, n, in, mha_weights_at(p, y), head_enabled_.data() + l * h, caches_[l], dresid, mg,
                 bws_.data(), path);
    layernorm_backward(path, {rows, d, resid_[l], p + y.ln1_g, ln1_stats_[l], ln1_stats_[l] + rows_max_, dtmp,
                              dresid, g + y.ln1_g, g + y.ln1_b, true});
  }
  embedding_backward(path, tokens, n, t, d, v, dresid, g + layout_.tok_emb, g + layout_.pos_emb);
  return res;
}

void LanguageModel::attention_maps(const std::int32_t* tokens, float* out) {
  const std::size_t t = config_.seq_len, h = config_.num_heads;
  run(tokens, no_targets_.data(), 1, false, Path::simd);
  for (std::size_t l = 0; l < config_.num_layers; ++l)
    std::copy(caches_[l].weights, caches_[l].weights + h * t * t, out + l * h * t * t);
}

void LanguageModel::log_probabilities(const std::int32_t* tokens, float* out) {
  const std::size_t t = config_.seq_len, v = config_.vocab;
  forward_logits(tokens, 1, Path::simd);
  for (std::size_t r = 0; r < t; ++r) {
    const float* z = probs_.data() + r * v;
    const float top = *std::max_element(z, z + v);
    double sum = 0;
    for (std::size_t i = 0; i < v; ++i) sum += std::exp(double(z[i]) - double(top));
    const double lse = double(top) + std::log(sum);
    for (std::size_t i = 0; i < v; ++i) out[r * v + i] = float(double(z[i]) - lse);
  }
  // The logits become probabilities, as after run().
  cross_entropy_rows(Path::simd, {t, v, probs_.data(), no_targets_.data(), nullptr, nullptr, argmax_.data(), 0.0f});
}

}  // namespace headlab
