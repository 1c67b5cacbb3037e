// LayerNorm, forward and backward. Tests: tests/cpp/test_kernels_lm.cpp.
#pragma once

#include <cstddef>

#include "headlab/kernels/path.hpp"

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

}  // namespace headlab

namespace headlab {

// RMSNorm over the last axis (Llama, Gemma), in float32 as Hugging Face computes it:
//   rstd_r = 1 / sqrt(avg_c x[r,c]^2 + eps)
//   y[r,c] = x[r,c] * rstd_r * w[c]           (one_plus false: Llama, Qwen2, Mistral, Phi-3)
//   y[r,c] = x[r,c] * rstd_r * (1 + w[c])     (one_plus true: Gemma stores w - 1)
// x, y [rows, d] (may alias); w [d].
struct RmsNormArgs {
  std::size_t rows, d;
  const float* x;
  const float* w;
  float* y;
  float eps;
  bool one_plus;
};
void rmsnorm_forward_ref(const RmsNormArgs& a);
void rmsnorm_forward_simd(const RmsNormArgs& a);
void rmsnorm_forward(Path path, const RmsNormArgs& a);

}  // namespace headlab
