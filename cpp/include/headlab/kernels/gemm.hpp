// GEMM: C (+)= op(A) op(B) (+ bias), plain, packed and shared-A, and the
// transpose they no longer need in the backward passes. Row-major; `ld*` is a
// leading dimension (elements between rows). Tests: tests/cpp/test_kernels_gemm.cpp.
#pragma once

#include <cstddef>

#include "headlab/kernels/path.hpp"

namespace headlab {

// C[M,N] (+)= op(A)[M,K] * op(B)[K,N] (+ bias[N])
// Row-major with leading dimensions lda, ldb, ldc (elements between rows).
// `accumulate` adds into C instead of overwriting it. bias may be null.
// op(X) is X, or X^T when trans_x: with trans_a, A is stored [K, M] (op(A)[i,p]
// = a[p*lda + i]); with trans_b, B is stored [N, K] (op(B)[p,j] = b[j*ldb + p]).
// The backward passes read X^T and W^T this way instead of transposing into
// scratch. Every variant, transposed or not, sums each C[i,j] over p = 0..K-1
// in order (init, then + a*b per p), so the flags change no result bit in a
// build without FMA contraction (WebAssembly).
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
  bool trans_a = false;
  bool trans_b = false;
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

// gemm_packed_simd with op(B) supplied by `b.pack` instead of read from g.b
// (g.b, g.ldb, g.trans_b unused): pack(ctx, p0, kc, j0, nn, dst) writes rows
// p0..p0+kc and columns j0..j0+nn of op(B) as a panel dst[kc][panel_cols],
// zero past column nn (kc <= gemm_packed_panel_rows(), nn <= panel_cols). For
// B stored in another form, e.g. 16-bit weights widened as they are packed
// (pretrained_kernels.hpp). Any m >= 1 takes the packed path. Sums as
// gemm_packed_simd. workspace: gemm_packed_workspace_floats(g) floats.
struct GemmPackB {
  void (*pack)(const void* ctx, std::size_t p0, std::size_t kc, std::size_t j0, std::size_t nn, float* dst);
  const void* ctx;
};
std::size_t gemm_packed_panel_cols();
std::size_t gemm_packed_panel_rows();
void gemm_packed_b_simd(const GemmArgs& g, const GemmPackB& b, float* workspace);

// count products C_s = A B_s (+ bias_s) sharing one A (every g[s] has the same
// m, k, a, lda), e.g. the Q, K and V projections of self-attention: each
// block of A is packed once and reused for every B_s.
// workspace: gemm_shared_a_workspace_floats(g, count) floats, 16-byte aligned.
std::size_t gemm_shared_a_workspace_floats(const GemmArgs* g, std::size_t count);
void gemm_shared_a_simd(const GemmArgs* g, std::size_t count, float* workspace);

// Dispatch. gemm: gemm_simd or gemm_ref. gemm_packed and gemm_shared_a:
// the packed SIMD kernels, or gemm_ref on each product (workspace unused).
void gemm(Path path, const GemmArgs& g);
void gemm_packed(Path path, const GemmArgs& g, float* workspace);
void gemm_shared_a(Path path, const GemmArgs* g, std::size_t count, float* workspace);

// ------------------------------------------------------------------ transpose

// dst[cols, rows] = src[rows, cols]^T, src with leading dimension lds,
// dst with leading dimension ldd. Used to pack K_i^T so that scores become a
// row-broadcast GEMM (no horizontal adds in the hot loop). One version: the
// scalar loop is its tail, and the tests compare it with a plain loop.
void transpose(std::size_t rows, std::size_t cols, const float* src, std::size_t lds, float* dst,
               std::size_t ldd);

}  // namespace headlab
