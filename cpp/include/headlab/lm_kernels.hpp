// Kernels the language model needs beyond attention: LayerNorm, GELU,
// softmax cross-entropy over vocabulary rows, token + position embeddings.
// Pure functions over raw pointers, no allocation; every kernel has a scalar
// reference (`*_ref`, written for reading) and an xsimd version (`*_simd`)
// that tests compare with it, and a dispatch on Path (kernels.hpp) beside
// them. The residual add (add_*) is in kernels.hpp. All matrices are
// row-major and dense (leading dimension = number of columns).
#pragma once

#include <cstddef>
#include <cstdint>

#include "headlab/kernels.hpp"

namespace headlab {

// LayerNorm over the last axis (biased variance, as torch.nn.LayerNorm):
//   mean_r = avg_c x[r,c],  rstd_r = 1 / sqrt(avg_c (x[r,c] - mean_r)^2 + eps)
//   y[r,c] = (x[r,c] - mean_r) * rstd_r * gamma[c] + beta[c]
// x, y [rows, d] (may alias); gamma, beta [d]; mean, rstd [rows] (saved for backward).
struct LayerNormArgs {
  std::size_t rows, d;
  const float* x;
  const float* gamma;
  const float* beta;
  float* y;
  float* mean;
  float* rstd;
  float eps;
};
void layernorm_forward_ref(const LayerNormArgs& a);
void layernorm_forward_simd(const LayerNormArgs& a);
void layernorm_forward(Path path, const LayerNormArgs& a);

// Backward of layernorm_forward given dy [rows, d] and the saved mean, rstd:
//   xhat = (x - mean) rstd,  g = dy * gamma
//   dx   = rstd * (g - avg_c g - xhat * avg_c (g xhat))
//   dgamma[c] = sum_r dy[r,c] xhat[r,c],  dbeta[c] = sum_r dy[r,c]
// dx [rows, d] is added to (a residual stream's gradient) when accumulate_dx,
// else overwritten; dgamma, dbeta [d] are overwritten. dx must not alias dy.
struct LayerNormBackwardArgs {
  std::size_t rows, d;
  const float* x;
  const float* gamma;
  const float* mean;
  const float* rstd;
  const float* dy;
  float* dx;
  float* dgamma;
  float* dbeta;
  bool accumulate_dx;
};
void layernorm_backward_ref(const LayerNormBackwardArgs& a);
void layernorm_backward_simd(const LayerNormBackwardArgs& a);
void layernorm_backward(Path path, const LayerNormBackwardArgs& a);

// GELU, tanh approximation (torch.nn.GELU(approximate="tanh")):
//   gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
// y[i] = gelu(x[i]) for n elements (y may alias x).
void gelu_forward_ref(const float* x, float* y, std::size_t n);
void gelu_forward_simd(const float* x, float* y, std::size_t n);
void gelu_forward(Path path, const float* x, float* y, std::size_t n);
// dx[i] = dy[i] * gelu'(x[i]) (dx may alias dy).
void gelu_backward_ref(const float* x, const float* dy, float* dx, std::size_t n);
void gelu_backward_simd(const float* x, const float* dy, float* dx, std::size_t n);
void gelu_backward(Path path, const float* x, const float* dy, float* dx, std::size_t n);

// Softmax cross-entropy over each row of logits [rows, vocab], in place:
// logits become probabilities. targets [rows]: the right token, or -1 for a
// row that carries no loss. loss[r] = -log p[r, target] (0 for ignored rows).
// dlogits [rows, vocab] (may alias logits): (p - onehot(target)) * grad_scale,
// all zero for ignored rows; null to skip. argmax [rows] (null to skip): the
// most probable token of each row. Returns the sum of loss[r] (in double).
struct CrossEntropyArgs {
  std::size_t rows, vocab;
  float* logits;
  const std::int32_t* targets;
  float* loss;
  float* dlogits;
  std::int32_t* argmax;
  float grad_scale;
};
double cross_entropy_rows_ref(const CrossEntropyArgs& a);
double cross_entropy_rows_simd(const CrossEntropyArgs& a);
double cross_entropy_rows(Path path, const CrossEntropyArgs& a);

// x[b*t_len + t, :] = tok_emb[tokens[b*t_len + t], :] + pos_emb[t, :]
// tokens [batch, t_len]; tok_emb [vocab, d]; pos_emb [>= t_len, d]; x [batch*t_len, d].
void embedding_forward_ref(const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                           const float* tok_emb, const float* pos_emb, float* x);
void embedding_forward_simd(const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                            const float* tok_emb, const float* pos_emb, float* x);
void embedding_forward(Path path, const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                       const float* tok_emb, const float* pos_emb, float* x);
// Scatter-add of dx [batch*t_len, d] into g_tok [vocab, d] and g_pos [t_len, d]
// (both overwritten: rows of tokens that do not occur become 0).
void embedding_backward_ref(const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                            std::size_t vocab, const float* dx, float* g_tok, float* g_pos);
void embedding_backward_simd(const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                             std::size_t vocab, const float* dx, float* g_tok, float* g_pos);
void embedding_backward(Path path, const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                        std::size_t vocab, const float* dx, float* g_tok, float* g_pos);

}  // namespace headlab
