// Multi-head attention, exactly as the course text writes it:
//   MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O
//   head_i = softmax(Q W_i^Q (K W_i^K)^T / sqrt(d_k)) V W_i^V
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "headlab/kernels.hpp"

namespace headlab {

struct MhaShape {
  std::size_t t_q = 0;       // query rows
  std::size_t t_k = 0;       // key/value rows (== t_q for self-attention)
  std::size_t d_model = 0;
  std::size_t num_heads = 0;
  std::size_t d_k = 0;       // per-head query/key width
  std::size_t d_v = 0;       // per-head value width
  bool causal = false;       // query i sees key j only where j <= i
};

// Weights. Layouts (row-major):
//   w_q, w_k: [d_model, h*d_k], columns i*d_k .. (i+1)*d_k-1 are W_i
//   w_v:      [d_model, h*d_v]
//   w_o:      [h*d_v, d_model]
// Biases are optional (nullptr): b_q, b_k [h*d_k], b_v [h*d_v], b_o [d_model].
struct MhaWeights {
  const float* w_q = nullptr;
  const float* w_k = nullptr;
  const float* w_v = nullptr;
  const float* w_o = nullptr;
  const float* b_q = nullptr;
  const float* b_k = nullptr;
  const float* b_v = nullptr;
  const float* b_o = nullptr;
};

// The weights of a model that keeps them in one parameter buffer: `layout`
// has the offsets (in floats) w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, as
// model.hpp's ParamLayout and lm.hpp's LmLayerLayout do.
template <typename Layout>
MhaWeights mha_weights_at(const float* params, const Layout& layout) {
  MhaWeights w;
  w.w_q = params + layout.w_q;
  w.w_k = params + layout.w_k;
  w.w_v = params + layout.w_v;
  w.w_o = params + layout.w_o;
  w.b_q = params + layout.b_q;
  w.b_k = params + layout.b_k;
  w.b_v = params + layout.b_v;
  w.b_o = params + layout.b_o;
  return w;
}

// query [t_q, d_model]; key, value [t_k, d_model]; key_mask [t_k] (0 = padding,
// never attended) or nullptr; head_mask [h] (0 = that head's output is switched
// off before W^O: the output equals that of W^O with the head's d_v rows zeroed,
// while its weights, head output and columns of the concat intermediate are
// reported as computed) or nullptr.
struct MhaInputs {
  const float* query = nullptr;
  const float* key = nullptr;
  const float* value = nullptr;
  const std::uint8_t* key_mask = nullptr;
  const std::uint8_t* head_mask = nullptr;
};

// Optional teaching intermediates, each nullptr when not wanted:
//   q [h, t_q, d_k], k [h, t_k, d_k], v [h, t_k, d_v]      per-head projections
//   scores [h, t_q, t_k]        raw Q_i K_i^T for every pair, masks ignored
//   scaled_scores [h, t_q, t_k] scores / sqrt(d_k), -infinity where masked
//   head_outputs [h, t_q, d_v]  softmax(...) V_i
//   concat [t_q, h*d_v]         Concat(head_1..head_h)
struct MhaIntermediates {
  float* q = nullptr;
  float* k = nullptr;
  float* v = nullptr;
  float* scores = nullptr;
  float* scaled_scores = nullptr;
  float* head_outputs = nullptr;
  float* concat = nullptr;
};

// output [t_q, d_model]; weights [h, t_q, t_k] or nullptr.
// A query row that can attend to no key (all masked) gets all-zero weights and
// a zero head output.
struct MhaOutputs {
  float* output = nullptr;
  float* weights = nullptr;
  MhaIntermediates intermediates;
};

// Fills in d_k / d_v when zero (d_model / num_heads) and checks the shape.
// Returns "" when valid, else a message naming the offending argument.
std::string mha_resolve_shape(MhaShape& shape);

// Floats of scratch memory mha_forward needs for this shape, whatever outputs
// are requested.
std::size_t mha_workspace_floats(const MhaShape& shape);

// Which outputs the workspace must serve. mha_forward takes the fused path (no
// t_q x t_k buffer: O((t_q + t_k) * d) floats) when out.weights and every
// intermediate are null, and materialises the scores otherwise.
enum class MhaWorkspaceFor {
  any,          // same as mha_workspace_floats(shape)
  output_only,  // enough only when out.weights and all intermediates are null
};
std::size_t mha_workspace_floats(const MhaShape& shape, MhaWorkspaceFor use);

// Runs the forward pass. The shape must have passed mha_resolve_shape.
// workspace: mha_workspace_floats(shape) floats (or, when only out.output is
// requested, mha_workspace_floats(shape, MhaWorkspaceFor::output_only)),
// 16-byte aligned. Path::ref uses the scalar reference kernels on either path.
void mha_forward(const MhaShape& shape, const MhaInputs& in, const MhaWeights& w,
                 const MhaOutputs& out, float* workspace, Path path = Path::simd);

struct ParameterCount {
  std::uint64_t w_q = 0, w_k = 0, w_v = 0, w_o = 0;
  std::uint64_t bias = 0;   // b_q + b_k + b_v + b_o when bias is on, else 0
  std::uint64_t weights = 0;  // w_q + w_k + w_v + w_o
  std::uint64_t total = 0;  // weights + bias
};

// d_k / d_v of 0 mean d_model / num_heads (an error when h does not divide
// d_model). Returns "" and fills `count` when valid.
std::string parameter_count(std::size_t d_model, std::size_t num_heads, std::size_t d_k,
                            std::size_t d_v, bool bias, ParameterCount& count);

}  // namespace headlab
