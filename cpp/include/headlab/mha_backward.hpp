// Multi-head attention over a batch of independent sequences, forward with a
// cache and the matching backward pass. Same weight layouts as mha.hpp:
//   w_q, w_k [d_model, h*d_k] (head i in columns i*d_k..), w_v [d_model, h*d_v],
//   w_o [h*d_v, d_model], optional biases b_q, b_k [h*d_k], b_v [h*d_v], b_o [d_model].
// Batched inputs are stacked along rows:
//   query [batch*t_q, d_model]; key, value [batch*t_k, d_model];
//   in.key_mask [batch, t_k] here (0 = padding), or nullptr.
// head_enabled [h] (nullptr = all on): a disabled head still computes its
// weights, but its output is zeroed before W^O, so it gets no gradient.
// Pure functions: no allocation, workspace passed in (any float alignment).
#pragma once

#include <cstddef>
#include <cstdint>

#include "headlab/kernels.hpp"
#include "headlab/mha.hpp"

namespace headlab {

// What the backward pass needs from the forward pass:
//   q       [batch*t_q, h*d_k]  Q projections (bias included), head i in columns i*d_k..
//   k       [batch*t_k, h*d_k]
//   v       [batch*t_k, h*d_v]
//   weights [batch, h, t_q, t_k] softmax weights, exactly 0 where masked
//   concat  [batch*t_q, h*d_v]  Concat(head_1..head_h), zero for disabled heads
struct MhaCache {
  float* q = nullptr;
  float* k = nullptr;
  float* v = nullptr;
  float* weights = nullptr;
  float* concat = nullptr;
};

// Floats a cache needs, and the cache laid out in `storage` (that many floats).
std::size_t mha_cache_floats(const MhaShape& shape, std::size_t batch);
MhaCache mha_cache_view(const MhaShape& shape, std::size_t batch, float* storage);

// Forward pass that fills the cache. output [batch*t_q, d_model].
// The shape must have passed mha_resolve_shape (causal needs t_q == t_k).
// The workspace is 0 floats now (K_i^T is read in place through GemmArgs'
// trans_b); the argument stays so callers need not change.
std::size_t mha_forward_cached_workspace_floats(const MhaShape& shape);
void mha_forward_cached(const MhaShape& shape, std::size_t batch, const MhaInputs& in, const MhaWeights& w,
                        const std::uint8_t* head_enabled, const MhaCache& cache, float* output,
                        float* workspace, Path path = Path::simd);

// Gradients, each shaped like what it differentiates. Every pointer may be
// null (that gradient is skipped). All are overwritten, except that `query`,
// `key` and `value` may alias one another (self-attention): an aliased buffer
// receives the sum of the aliased gradients.
struct MhaGrads {
  float* w_q = nullptr;
  float* w_k = nullptr;
  float* w_v = nullptr;
  float* w_o = nullptr;
  float* b_q = nullptr;
  float* b_k = nullptr;
  float* b_v = nullptr;
  float* b_o = nullptr;
  float* query = nullptr;  // [batch*t_q, d_model]
  float* key = nullptr;    // [batch*t_k, d_model]
  float* value = nullptr;  // [batch*t_k, d_model]
};

// The weight gradients of a model that keeps them in one buffer laid out as
// its parameters (mha_weights_at); the input gradients stay null.
template <typename Layout>
MhaGrads mha_grads_at(float* grads, const Layout& layout) {
  MhaGrads g;
  g.w_q = grads + layout.w_q;
  g.w_k = grads + layout.w_k;
  g.w_v = grads + layout.w_v;
  g.w_o = grads + layout.w_o;
  g.b_q = grads + layout.b_q;
  g.b_k = grads + layout.b_k;
  g.b_v = grads + layout.b_v;
  g.b_o = grads + layout.b_o;
  return g;
}

// d_output [batch*t_q, d_model]. `in`, `w`, `head_enabled` and `cache` must be
// those of the forward pass that filled the cache. Masked weights and
// all-masked rows contribute exactly zero gradient.
std::size_t mha_backward_workspace_floats(const MhaShape& shape, std::size_t batch);
void mha_backward(const MhaShape& shape, std::size_t batch, const MhaInputs& in, const MhaWeights& w,
                  const std::uint8_t* head_enabled, const MhaCache& cache, const float* d_output,
                  const MhaGrads& grads, float* workspace, Path path = Path::simd);

}  // namespace headlab
