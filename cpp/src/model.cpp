#include "headlab/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "headlab/lm_kernels.hpp"  // embeddings


namespace headlab {

ParamLayout param_layout(const ModelConfig& c) {
  const std::size_t d = c.d_model, rv = c.num_relations * c.vocab;
  ParamLayout l{};
  l.tok_emb = 0;
  l.pos_emb = l.tok_emb + c.vocab * d;
  l.w_q = l.pos_emb + c.seq_len * d;
  l.w_k = l.w_q + d * d;
  l.w_v = l.w_k + d * d;
  l.w_o = l.w_v + d * d;
  l.b_q = l.w_o + d * d;
  l.b_k = l.b_q + d;
  l.b_v = l.b_k + d;
  l.b_o = l.b_v + d;
  l.w_read = l.b_o + d;
  l.b_read = l.w_read + d * rv;
  l.total = l.b_read + rv;
  return l;
}

namespace {

// The size of every buffer a Model allocates, in elements; the constructor and
// buffer_bytes() both read it.
struct BufferSizes {
  MhaShape shape, full;  // the query-row attention of training; the full map of the probe
  std::size_t params, x, xq, key_mask, cache, attn, h, probs, dlogits, dh, dxq, dx, fws, bws, map_x, map_out,
      map_ws;

  std::size_t float_count() const {
    return 2 * params + x + xq + cache + attn + h + probs + dlogits + dh + dxq + dx + fws + bws + map_x +
           map_out + map_ws;
  }
};

BufferSizes buffer_sizes(const ModelConfig& c) {
  const std::size_t d = c.d_model, t = c.seq_len, b = c.max_batch, rv = c.num_relations * c.vocab;
  BufferSizes s{};
  s.shape.t_q = 1;
  s.shape.t_k = t;
  s.shape.d_model = d;
  s.shape.num_heads = c.num_heads;
  mha_resolve_shape(s.shape);
  s.full = s.shape;
  s.full.t_q = t;
  s.full.causal = c.causal;
  s.params = param_layout(c).total;
  s.x = s.dx = b * t * d;
  s.xq = s.attn = s.h = s.dh = s.dxq = b * d;
  s.key_mask = b * t;
  s.cache = mha_cache_floats(s.shape, b);
  s.probs = s.dlogits = b * rv;
  s.fws = mha_forward_cached_workspace_floats(s.shape);
  s.bws = mha_backward_workspace_floats(s.shape, b);
  s.map_x = s.map_out = t * d;
  s.map_ws = mha_workspace_floats(s.full) + 4;  // + slack to align to 16 bytes
  return s;
}

}  // namespace

std::size_t Model::buffer_bytes(const ModelConfig& c) {
  const BufferSizes s = buffer_sizes(c);
  return s.float_count() * sizeof(float) + s.key_mask + c.num_heads;
}

Model::Model(const ModelConfig& c) : config_(c), layout_(param_layout(c)) {
  const BufferSizes s = buffer_sizes(c);
  shape_ = s.shape;
  params_.assign(s.params, 0.0f);
  grads_.assign(s.params, 0.0f);
  head_enabled_.assign(c.num_heads, 1);
  x_.assign(s.x, 0.0f);
  xq_.assign(s.xq, 0.0f);
  key_mask_.assign(s.key_mask, 1);
  cache_store_.assign(s.cache, 0.0f);
  cache_ = mha_cache_view(shape_, c.max_batch, cache_store_.data());
  attn_.assign(s.attn, 0.0f);
  h_.assign(s.h, 0.0f);
  probs_.assign(s.probs, 0.0f);
  dlogits_.assign(s.dlogits, 0.0f);
  dh_.assign(s.dh, 0.0f);
  dxq_.assign(s.dxq, 0.0f);
  dx_.assign(s.dx, 0.0f);
  fws_.assign(s.fws, 0.0f);
  bws_.assign(s.bws, 0.0f);
  map_x_.assign(s.map_x, 0.0f);
  map_out_.assign(s.map_out, 0.0f);
  map_ws_.assign(s.map_ws, 0.0f);
}

void Model::init(Rng& rng) {
  const ParamLayout& l = layout_;
  const std::size_t d = config_.d_model, rv = config_.num_relations * config_.vocab;
  float* p = params_.data();
  const float s_in = std::sqrt(0.5f / float(d)), s_lin = std::sqrt(1.0f / (3.0f * float(d)));
  const float s_emb = std::sqrt(0.5f);  // X = E + P then has unit variance
  fill_normal(rng, p + l.tok_emb, config_.vocab * d, s_emb);
  fill_normal(rng, p + l.pos_emb, config_.seq_len * d, s_emb);
  fill_normal(rng, p + l.w_q, d * d, s_in);
  fill_normal(rng, p + l.w_k, d * d, s_in);
  fill_normal(rng, p + l.w_v, d * d, s_in);
  fill_normal(rng, p + l.w_o, d * d, s_lin);
  std::fill(p + l.b_q, p + l.w_read, 0.0f);
  fill_normal(rng, p + l.w_read, d * rv, s_lin);
  fill_normal(rng, p + l.b_read, rv, s_lin);
}

void Model::embed(const TaskBatch& batch, std::size_t n, Path path) {
  const std::size_t d = config_.d_model, t = config_.seq_len;
  const float* tok = params_.data() + layout_.tok_emb;
  const float* pos = params_.data() + layout_.pos_emb;
  embedding_forward(path, batch.tokens.data(), n, t, d, tok, pos, x_.data());
  for (std::size_t b = 0; b < n; ++b) {
    const std::size_t q = std::size_t(batch.query[b]);
    std::copy(x_.data() + (b * t + q) * d, x_.data() + (b * t + q + 1) * d, xq_.data() + b * d);
    if (config_.causal)
      for (std::size_t j = 0; j < t; ++j) key_mask_[b * t + j] = j <= q ? 1 : 0;
  }
}

BatchResult Model::forward(const TaskBatch& batch, std::size_t n, bool backward, Path path) {
  const std::size_t d = config_.d_model, t = config_.seq_len, r_count = config_.num_relations;
  const std::size_t v = config_.vocab, rv = r_count * v;
  embed(batch, n, path);
  MhaInputs in;
  in.query = xq_.data();
  in.key = x_.data();
  in.value = x_.data();
  in.key_mask = config_.causal ? key_mask_.data() : nullptr;
  const MhaWeights w = mha_weights_at(params_.data(), layout_);
  mha_forward_cached(shape_, n, in, w, head_enabled_.data(), cache_, attn_.data(), fws_.data(), path);
  add(path, xq_.data(), attn_.data(), h_.data(), n * d);  // residual

  const float* w_read = params_.data() + layout_.w_read;
  const float* b_read = params_.data() + layout_.b_read;
  gemm(path, {n, rv, d, h_.data(), d, w_read, rv, probs_.data(), rv, b_read, false});

  // Cross-entropy per (example, relation). log-sum-exp from the softmax itself:
  // the arg-max entry is 1/sum, so log(sum) = -log(p_max) with p_max >= 1/vocab.
  BatchResult res;
  res.examples = n;
  double loss = 0;
  for (std::size_t b = 0; b < n; ++b) {
    bool all = true;
    for (std::size_t r = 0; r < r_count; ++r) {
      float* z = probs_.data() + b * rv + r * v;
      const std::size_t best = std::size_t(std::max_element(z, z + v) - z);
      const std::size_t ans = std::size_t(batch.answers[b * r_count + r]);
      const float margin = z[ans] - z[best];
      softmax_rows(path, z, 1, v, v);
      loss += double(-std::log(z[best])) - double(margin);
      if (best == ans)
        ++res.answers_right[r];
      else
        all = false;
    }
    if (all) ++res.all_right;
  }
  res.loss = float(loss / double(n * r_count));
  if (!backward) return res;

  // d loss / d logits = (p - onehot) / (n R).
  const float inv = 1.0f / float(n * r_count);
  for (std::size_t b = 0; b < n; ++b) {
    float* dz = dlogits_.data() + b * rv;
    const float* p = probs_.data() + b * rv;
    for (std::size_t j = 0; j < rv; ++j) dz[j] = p[j] * inv;
    for (std::size_t r = 0; r < r_count; ++r) dz[r * v + std::size_t(batch.answers[b * r_count + r])] -= inv;
  }
  float* g = grads_.data();
  const ParamLayout& l = layout_;
  gemm(path, {d, rv, n, h_.data(), d, dlogits_.data(), rv, g + l.w_read, rv, nullptr, false, true, false});
  column_sums(path, dlogits_.data(), n, rv, rv, g + l.b_read, false);
  gemm(path, {n, d, rv, dlogits_.data(), rv, w_read, rv, dh_.data(), d, nullptr, false, false, true});

  MhaGrads mg = mha_grads_at(g, l);
  mg.query = dxq_.data();
  mg.key = dx_.data();
  mg.value = dx_.data();  // keys and values are the same X: gradients add
  mha_backward(shape_, n, in, w, head_enabled_.data(), cache_, dh_.data(), mg, bws_.data(), path);

  // The query row of X also reaches H directly (residual) and through W^Q.
  for (std::size_t b = 0; b < n; ++b) {
    float* row = dx_.data() + (b * t + std::size_t(batch.query[b])) * d;
    add(path, row, dh_.data() + b * d, row, d);
    add(path, row, dxq_.data() + b * d, row, d);
  }
  embedding_backward(path, batch.tokens.data(), n, t, d, config_.vocab, dx_.data(), g + l.tok_emb, g + l.pos_emb);
  return res;
}

void Model::attention_map(const std::int32_t* tokens, float* out) {
  const std::size_t d = config_.d_model, t = config_.seq_len;
  embedding_forward(Path::simd, tokens, 1, t, d, params_.data() + layout_.tok_emb, params_.data() + layout_.pos_emb,
                    map_x_.data());
  MhaShape full = shape_;
  full.t_q = t;
  full.causal = config_.causal;
  MhaInputs in;
  in.query = in.key = in.value = map_x_.data();
  MhaOutputs o;
  o.output = map_out_.data();
  o.weights = out;
  float* ws = map_ws_.data();
  while (reinterpret_cast<std::uintptr_t>(ws) % 16 != 0) ++ws;
  mha_forward(full, in, mha_weights_at(params_.data(), layout_), o, ws, Path::simd);
}

}  // namespace headlab
