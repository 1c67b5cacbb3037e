// Attention kernels: softmax over rows (forward and backward) and one head of
// fused scaled dot-product attention with an online softmax. Tests:
// tests/cpp/test_kernels_softmax.cpp, test_kernels_attention.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "headlab/kernels/path.hpp"

namespace headlab {

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

// ------------------------------------------------------- fused attention

// Fused scaled dot-product attention for one head with an online softmax
// (FlashAttention-style): keys are visited in tiles, each query row keeps a
// running maximum and a running sum, and its output accumulator is rescaled
// whenever the maximum grows. No t_q x t_k buffer exists; scratch memory is
// O((t_q + t_k) * d).
//
//   o = softmax(mask(q k^T * scale)) v
//
// Masking is that of mha_forward: with `causal`, query i sees key j only where
// j <= i; a key with key_mask[j] == 0 is never attended. A query row that can
// attend to no key gets an all-zero output (never NaN).

// All matrices row-major with the given leading dimensions (elements between
// rows), so one head can be read straight out of the all-heads projections:
//   q [t_q, d_k] (ldq), k [t_k, d_k] (ldk), v [t_k, d_v] (ldv), o [t_q, d_v] (ldo).
// key_mask [t_k] or nullptr. o must not overlap q, k or v.
struct AttentionArgs {
  std::size_t t_q = 0, t_k = 0, d_k = 0, d_v = 0;
  const float* q = nullptr;
  std::size_t ldq = 0;
  const float* k = nullptr;
  std::size_t ldk = 0;
  const float* v = nullptr;
  std::size_t ldv = 0;
  float* o = nullptr;
  std::size_t ldo = 0;
  const std::uint8_t* key_mask = nullptr;
  bool causal = false;
  float scale = 1.0f;  // usually 1 / sqrt(d_k)
};

// Scratch floats each variant needs (16-byte aligned, not overlapping the
// operands). The reference needs d_v; the SIMD kernel packs K^T and V of the
// attended keys, plus a few tiles: about t_k * (d_k + d_v) + 32 * (64 + d_k + d_v).
std::size_t attention_fused_ref_workspace_floats(const AttentionArgs& a);
std::size_t attention_fused_simd_workspace_floats(const AttentionArgs& a);

// Scalar reference, written for reading: one query row at a time, one key at a
// time, with the running maximum m, running sum l and accumulator acc[d_v]:
//   m' = max(m, s);  acc = acc * e^(m - m') + e^(s - m') v_j;  l = l * e^(m - m') + e^(s - m')
// and o = acc / l at the end.
void attention_fused_ref(const AttentionArgs& a, float* workspace);

// xsimd version. Keys that are never attended (key_mask 0) are dropped while
// K^T and V are packed, so every query row attends to a prefix of the packed
// keys. Per block of query rows and tile of keys: scores by a register-blocked
// broadcast GEMM against the packed K^T (no horizontal adds), scale * log2(e)
// folded into the packed queries so the softmax is 2^x built with integer
// shifts, then the tile's probabilities times V accumulate into o.
void attention_fused_simd(const AttentionArgs& a, float* workspace);

// Dispatch (Path: kernels/path.hpp). workspace holds the larger of the two
// variants' workspace floats, or the one `path` picks.
void attention_fused(Path path, const AttentionArgs& a, float* workspace);

}  // namespace headlab
