// Low-level kernels: pure functions over raw pointers, no allocation, no I/O.
// Every kernel has a scalar reference (`*_ref`, written for reading) and an
// xsimd version (`*_simd`) that must agree with it; tests compare the two.
#pragma once

#include <cstddef>

namespace headlab {

// C[M,N] (+)= A[M,K] * B[K,N] (+ bias[N])
// Row-major with leading dimensions lda, ldb, ldc (elements between rows).
// `accumulate` adds into C instead of overwriting it. bias may be null.
struct GemmArgs {
  std::size_t m, n, k;
  const float* a;
  std::size_t lda;
  const float* b;
  std::size_t ldb;
  float* c;
  std::size_t ldc;
  const float* bias;  // [n] or nullptr
  bool accumulate;
};
void gemm_ref(const GemmArgs& g);
void gemm_simd(const GemmArgs& g);

// Same product as gemm_simd, for large operands: blocks of A are packed into
// micro-panels of MR rows ([k][MR]) and B into panels of NR columns ([k][NR],
// zero-padded), so the register-blocked micro-kernel (2 rows x 4 batches)
// streams both from contiguous memory with constant offsets; k is blocked so a
// B panel stays in L1. Falls back to gemm_simd below 8 rows.
// workspace: gemm_packed_workspace_floats(g) floats (it depends only on k, at
// most 72 K floats in wasm), 16-byte aligned, not overlapping the operands.
std::size_t gemm_packed_workspace_floats(const GemmArgs& g);
void gemm_packed_simd(const GemmArgs& g, float* workspace);

// count products C_s = A B_s (+ bias_s) sharing one A (every g[s] has the same
// m, k, a, lda), e.g. the Q, K and V projections of self-attention: each
// block of A is packed once and reused for every B_s.
// workspace: gemm_shared_a_workspace_floats(g, count) floats, 16-byte aligned.
std::size_t gemm_shared_a_workspace_floats(const GemmArgs* g, std::size_t count);
void gemm_shared_a_simd(const GemmArgs* g, std::size_t count, float* workspace);

// dst[cols, rows] = src[rows, cols]^T, src with leading dimension lds,
// dst with leading dimension ldd. Used to pack K_i^T so that scores become a
// row-broadcast GEMM (no horizontal adds in the hot loop).
void transpose(std::size_t rows, std::size_t cols, const float* src, std::size_t lds,
               float* dst, std::size_t ldd);

// In-place softmax over each row of x[rows, cols] (leading dimension ld).
// Entries equal to -infinity are masked: they get weight exactly 0. A row whose
// entries are all -infinity becomes all zeros (never NaN). Stable: the row
// maximum is subtracted before exponentiation.
void softmax_rows_ref(float* x, std::size_t rows, std::size_t cols, std::size_t ld);
void softmax_rows_simd(float* x, std::size_t rows, std::size_t cols, std::size_t ld);

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

// x[i] *= s
void scale_ref(float* x, std::size_t n, float s);
void scale_simd(float* x, std::size_t n, float s);

enum class Path { ref, simd };

// gemm_simd or gemm_ref, as `path` says: the one dispatch the models and passes share.
void gemm(Path path, const GemmArgs& g);

}  // namespace headlab
