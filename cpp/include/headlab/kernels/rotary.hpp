// Rotary position embedding (RoPE) in the "rotate half" layout Hugging Face uses
// for Llama, Qwen2, Mistral, Phi-3, Gemma and GPT-NeoX. Tests:
// tests/cpp/test_kernels_block.cpp.
#pragma once

#include <cstddef>

#include "headlab/kernels/path.hpp"

namespace headlab {

// The inverse frequencies of a head's first rot_dim dimensions (rot_dim even):
//   inv_freq[i] = theta^(-2i / rot_dim),  i < rot_dim / 2
// and, with llama3 scaling (factor > 0), Llama 3.1's rescaling of them: wavelengths
// 2 pi / f longer than original_context / low_freq_factor are divided by factor,
// shorter than original_context / high_freq_factor kept, and those between
// interpolated with s = (original_context / wavelength - low) / (high - low):
//   f' = (1 - s) f / factor + s f.
struct RopeArgs {
  std::size_t rot_dim;
  double theta;
  double factor = 0;  // 0: no scaling
  double low_freq_factor = 1, high_freq_factor = 4, original_context = 8192;
};
// out [rot_dim / 2], in double (the table is built from it once per model).
void rope_inv_freq(const RopeArgs& r, double* out);

// cos/sin of (p0 + t) * inv_freq[i] for t < rows, i < rot_dim / 2, computed in double and
// rounded once: cos_out, sin_out [rows, rot_dim / 2].
void rope_table(const RopeArgs& r, std::size_t p0, std::size_t rows, float* cos_out, float* sin_out);

// Rotates the first rot_dim dimensions of every head of every row in place; the rest
// of each head passes through (partial rotary, GPT-NeoX's rotary_pct):
//   half = rot_dim / 2, for i < half, with c = cos[t, i], s = sin[t, i]:
//   x'[i] = x[i] c - x[i + half] s,   x'[i + half] = x[i + half] c + x[i] s
// x: row t at x + t * ld, head h at + h * head_dim; cos, sin [rows, half] from rope_table.
struct RotaryArgs {
  std::size_t rows, heads, head_dim, rot_dim;
  float* x;
  std::size_t ld;
  const float* cos;
  const float* sin;
};
void rotary_apply_ref(const RotaryArgs& a);
void rotary_apply_simd(const RotaryArgs& a);
void rotary_apply(Path path, const RotaryArgs& a);

}  // namespace headlab
