// Low-level kernels: pure functions over raw pointers, no allocation, no I/O.
// Every kernel has a scalar reference (`*_ref`, written for reading) and an
// xsimd version (`*_simd`) that must agree with it; the tests compare the two,
// one file per family below (tests/cpp/test_kernels_*.cpp).
//
// Families, in the order of kernels.cpp: GEMM; transpose; elementwise (exp,
// exp2, add, scale); softmax rows, forward and backward; column sums (bias
// gradients); optimiser updates (Adam, SGD). Two other headers hold kernels
// with argument structs of their own: attention_fused.hpp (one head of
// attention with an online softmax) and lm_kernels.hpp (LayerNorm, GELU,
// cross-entropy, embeddings: the language model's).
// Matrices are row-major; `ld*` is a leading dimension (elements between rows).
#pragma once

#include <cstddef>

namespace headlab {

// Which variant of a kernel a call runs. Every kernel family below ends with
// its dispatch functions, named as the family without a suffix (gemm, add,
// softmax_rows, ...), whose first argument is a Path: Path::simd calls the
// `_simd` kernel (xsimd; in the scalar wasm build the same code over one-lane
// batches, see cpp/src/simd.hpp), Path::ref the `_ref` kernel (scalar, written
// for reading). Models and passes call kernels only through these, so one
// Path chosen at the top (the tests run both) reaches every kernel.
enum class Path { ref, simd };

// ----------------------------------------------------------------------- GEMM

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

// ---------------------------------------------------------------- elementwise

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

// --------------------------------------------------------------- softmax rows

// In-place softmax over each row of x[rows, cols] (leading dimension ld).
// Entries equal to -infinity are masked: they get weight exactly 0. A row whose
// entries are all -infinity becomes all zeros (never NaN). Stable: the row
// maximum is subtracted before exponentiation.
void softmax_rows_ref(float* x, std::size_t rows, std::size_t cols, std::size_t ld);
void softmax_rows_simd(float* x, std::size_t rows, std::size_t cols, std::size_t ld);
void softmax_rows(Path path, float* x, std::size_t rows, std::size_t cols, std::size_t ld);

// Softmax backward over rows, given the softmax output p and its upstream
// gradient dp (all [rows, cols] with leading dimension ld):
//   ds = scale * p * (dp - rowsum(dp * p))
// ds may alias dp. Where p is 0 (masked) ds is exactly 0.
void softmax_backward_rows_ref(const float* p, const float* dp, float* ds, std::size_t rows, std::size_t cols,
                               std::size_t ld, float scale);
void softmax_backward_rows_simd(const float* p, const float* dp, float* ds, std::size_t rows,
                                std::size_t cols, std::size_t ld, float scale);
void softmax_backward_rows(Path path, const float* p, const float* dp, float* ds, std::size_t rows,
                           std::size_t cols, std::size_t ld, float scale);

// ---------------------------------------------------------------- column sums

// out[c] (+)= sum over rows of x[r, c], x [rows, cols] with leading dimension
// ld, out [cols]: bias gradients. `accumulate` adds into out.
void column_sums_ref(const float* x, std::size_t rows, std::size_t cols, std::size_t ld, float* out,
                     bool accumulate);
void column_sums_simd(const float* x, std::size_t rows, std::size_t cols, std::size_t ld, float* out,
                      bool accumulate);
void column_sums(Path path, const float* x, std::size_t rows, std::size_t cols, std::size_t ld, float* out,
                 bool accumulate);

// ---------------------------------------------------------- optimiser updates

// Adam over n parameters, in place (p, g, m, v all [n]):
//   m = beta1 m + (1 - beta1) g,  v = beta2 v + (1 - beta2) g^2,
//   p -= lr * (m * c1) / (sqrt(v * c2) + eps)
// with the bias corrections c1 = 1 / (1 - beta1^t), c2 = 1 / (1 - beta2^t).
struct AdamArgs {
  std::size_t n;
  float* p;
  const float* g;
  float* m;
  float* v;
  float lr, beta1, beta2, eps, c1, c2;
};
void adam_update_ref(const AdamArgs& a);
void adam_update_simd(const AdamArgs& a);
// Whether adam_update would leave every p finite with |p| < max_abs and every m,
// v finite. Reads only; the same arithmetic as the update, so its answer holds.
bool adam_update_ok_ref(const AdamArgs& a, float max_abs);
bool adam_update_ok_simd(const AdamArgs& a, float max_abs);
void adam_update(Path path, const AdamArgs& a);
bool adam_update_ok(Path path, const AdamArgs& a, float max_abs);

// SGD: p[i] -= lr * g[i] over n parameters.
void sgd_update_ref(float* p, const float* g, std::size_t n, float lr);
void sgd_update_simd(float* p, const float* g, std::size_t n, float lr);
// Whether sgd_update would leave every p finite with |p| < max_abs. Reads only.
bool sgd_update_ok_ref(const float* p, const float* g, std::size_t n, float lr, float max_abs);
bool sgd_update_ok_simd(const float* p, const float* g, std::size_t n, float lr, float max_abs);
void sgd_update(Path path, float* p, const float* g, std::size_t n, float lr);
bool sgd_update_ok(Path path, const float* p, const float* g, std::size_t n, float lr, float max_abs);

}  // namespace headlab
