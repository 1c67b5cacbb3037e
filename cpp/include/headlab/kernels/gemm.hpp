// GEMM: C (+)= op(A) op(B) (+ bias), plain, packed (B on every call or once,
// ahead of time) and shared-A, and the transpose they no longer need in the
// backward passes. Row-major; `ld*` is a leading dimension (elements between
// rows). Tests: tests/cpp/test_kernels_gemm.cpp.
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

// B packed once ahead of time (weights used by many calls) in the panels
// gemm_packed_simd otherwise copies it into on every call: op(B)[K, N] as
// ceil(N / NR) panels of NR = gemm_packed_panel_cols() columns; panel q
// (columns q*NR .. q*NR + nn) lies at q*NR*K, stored [K][nn] row-major, nn = NR
// but for the last panel (N - q*NR: unpadded, so packed B has K*N floats).
// Columns j0.. of a packed B with j0 a multiple of NR are themselves a packed B
// at offset j0*K. NR depends on the build's SIMD width (16 in WebAssembly).
inline std::size_t packed_b_index(std::size_t k, std::size_t n, std::size_t p, std::size_t j) {
  const std::size_t nr = gemm_packed_panel_cols(), j0 = j - j % nr, nn = n - j0 < nr ? n - j0 : nr;
  return j0 * k + p * nn + (j - j0);
}
// dst[packed_b_index(k, n, p, j)] = op(B)[p, j] for B stored [k, n] (trans: [n, k]), leading dimension ldb.
void pack_b_panels_ref(const float* b, std::size_t ldb, bool trans, std::size_t k, std::size_t n, float* dst);
// The same in place, b stored contiguously (ldb n, or k with trans), with scratch of
// pack_b_panels_in_place_scratch_bytes(trans, k, n) bytes (16-byte aligned; for a [768, 3072]
// matrix 0.2 MB in wasm). trans ([n, k], nn.Linear's [out, in]): each panel's nn stored rows are
// contiguous, transposed through scratch. !trans ([k, n], GPT-2's Conv1D [in, out]): the last
// panel's columns go to the end (through scratch), then the [k][n / NR] blocks of NR floats are
// transposed: groups of G rows (G the largest divisor of k up to 16) through scratch, then runs of
// G blocks by following the permutation's cycles, a bit per run marking those in place.
std::size_t pack_b_panels_in_place_scratch_bytes(bool trans, std::size_t k, std::size_t n);
void pack_b_panels_in_place(float* b, bool trans, std::size_t k, std::size_t n, void* scratch);
// gemm_packed_simd with g.b packed as above (g.ldb, g.trans_b unused); any m >= 1
// takes the packed path. Sums as gemm_packed_simd. workspace: gemm_packed_workspace_floats(g).
void gemm_prepacked_b_simd(const GemmArgs& g, float* workspace);
// op(A) [m, k] packed once for products that share it but are made by separate calls (a
// product's columns split over threads): the blocks each call would pack, all of them, in
// gemm_packed_a_floats(m, k) floats. gemm_prepacked_ab_simd is gemm_prepacked_b_simd with
// g.a (and lda, trans_a) replaced by a_packed from gemm_pack_a of the same m, k; same sums.
std::size_t gemm_packed_a_floats(std::size_t m, std::size_t k);
void gemm_pack_a(const GemmArgs& a, float* dst);  // reads a.m, a.k, a.a, a.lda, a.trans_a
void gemm_prepacked_ab_simd(const GemmArgs& g, const float* a_packed, float* workspace);

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
