// Elementwise kernels: exp, 2^x, add, scale, GELU, and column sums (bias
// gradients). Tests: tests/cpp/test_kernels_elementwise.cpp, test_kernels_lm.cpp.
#pragma once

#include <cstddef>

#include "headlab/kernels/path.hpp"

namespace headlab {

// y[i] = exp(x[i]) for n elements. exp_simd uses range reduction and a
// polynomial on xsimd batches, building 2^n with integer shifts (no
// float->int lane conversion, which WASM SIMD emulates slowly).
// Accurate to a few ulp over [-87, 88]; below -87.3 it returns 0.
void exp_ref(const float* x, float* y, std::size_t n);
void exp_simd(const float* x, float* y, std::size_t n);

// y[i] = 2^x[i] for x[i] <= 0 (softmax-shaped input: a row minus its maximum,
// already multiplied by log2(e)); -infinity and anything below -126.5 give 0.
// Relative error below 3e-7. Same integer-shift construction as exp_simd, with
// no Cody-Waite reduction (the caller folded log2(e) into an earlier multiply).
void exp2_nonpositive_ref(const float* x, float* y, std::size_t n);
void exp2_nonpositive_simd(const float* x, float* y, std::size_t n);
// No dispatch: exp_* and exp2_nonpositive_* are building blocks of the softmax,
// attention and GELU kernels, which pick theirs; no model calls them.

// dst[i] = a[i] + b[i] for n elements (dst may alias a or b): residual
// connections, embedding sums and their gradients.
void add_ref(const float* a, const float* b, float* dst, std::size_t n);
void add_simd(const float* a, const float* b, float* dst, std::size_t n);
void add(Path path, const float* a, const float* b, float* dst, std::size_t n);

// x[i] *= s for n elements.
void scale_ref(float* x, std::size_t n, float s);
void scale_simd(float* x, std::size_t n, float s);
void scale(Path path, float* x, std::size_t n, float s);

// ------------------------------------------------------------------- GELU

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

// ---------------------------------------------------------------- column sums

// out[c] (+)= sum over rows of x[r, c], x [rows, cols] with leading dimension
// ld, out [cols]: bias gradients. `accumulate` adds into out.
void column_sums_ref(const float* x, std::size_t rows, std::size_t cols, std::size_t ld, float* out,
                     bool accumulate);
void column_sums_simd(const float* x, std::size_t rows, std::size_t cols, std::size_t ld, float* out,
                      bool accumulate);
void column_sums(Path path, const float* x, std::size_t rows, std::size_t cols, std::size_t ld, float* out,
                 bool accumulate);

}  // namespace headlab

namespace headlab {

// ------------------------------------------------- erf-GELU and gated products

// GELU, exact form (torch.nn.GELU(), BERT's "gelu"): y = 0.5 x (1 + erf(x / sqrt 2)).
// y[i] = gelu_erf(x[i]) for n elements (y may alias x). The SIMD version uses
// Abramowitz-Stegun 7.1.26 for erfc (absolute error below 1.5e-7 in erf).
void gelu_erf_forward_ref(const float* x, float* y, std::size_t n);
void gelu_erf_forward_simd(const float* x, float* y, std::size_t n);
void gelu_erf_forward(Path path, const float* x, float* y, std::size_t n);

// Gated MLP products over n elements (out may alias gate or up):
//   swiglu: out[i] = silu(gate[i]) * up[i],      silu(x) = x / (1 + exp(-x))   (Llama's SiLU gate)
//   geglu:  out[i] = gelu_tanh(gate[i]) * up[i]                                 (Gemma's gelu_pytorch_tanh)
void swiglu_ref(const float* gate, const float* up, float* out, std::size_t n);
void swiglu_simd(const float* gate, const float* up, float* out, std::size_t n);
void swiglu(Path path, const float* gate, const float* up, float* out, std::size_t n);
void geglu_ref(const float* gate, const float* up, float* out, std::size_t n);
void geglu_simd(const float* gate, const float* up, float* out, std::size_t n);
void geglu(Path path, const float* gate, const float* up, float* out, std::size_t n);

}  // namespace headlab
