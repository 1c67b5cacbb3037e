// Kernels for pretrained checkpoints, whose weights stay as they were stored
// (float32, float16 or bfloat16) and in their layout ([in, out] for GPT-2's
// Conv1D, [out, in] for nn.Linear). Pure functions over raw pointers, no
// allocation; each has a scalar reference (`*_ref`, written for reading) and an
// xsimd version (`*_simd`); tests/cpp/test_pretrained_kernels.cpp compares both
// with double-precision answers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "headlab/kernels.hpp"

namespace headlab {

// How a tensor's elements are stored (safetensors' "F32", "F16", "BF16").
enum class DType : std::uint8_t { f32, f16, bf16 };

inline std::size_t dtype_bytes(DType t) {
  return t == DType::f32 ? 4 : 2;
}

// IEEE half and bfloat16 bit patterns to float, exactly (every 16-bit value is
// a float). Scalar, for references and tails.
float half_to_float(std::uint16_t h);
inline float bf16_to_float(std::uint16_t h) {
  const std::uint32_t bits = std::uint32_t{h} << 16;
  float f;
  __builtin_memcpy(&f, &bits, 4);
  return f;
}
// Element i of a tensor of `dtype` at `data` (scalar).
float load_element(const void* data, DType dtype, std::size_t i);

// dst[i] = src[i] as float for n elements of `dtype`. The SIMD version handles
// finite values only for float16 (inf/NaN patterns come out as some finite or
// infinite value): checkpoints pass first_nonfinite first.
void widen_ref(const void* src, DType dtype, float* dst, std::size_t n);
void widen_simd(const void* src, DType dtype, float* dst, std::size_t n);

// Index of the first element that is NaN or infinite, or n when all are finite.
std::size_t first_nonfinite(const void* src, DType dtype, std::size_t n);

// C[M,N] (+)= A[M,K] * B[K,N] (+ bias[N]) with B stored as `b_dtype`:
//   B[p, j] = b[p * ldb + j]        when !b_transposed (GPT-2's Conv1D [in, out])
//   B[p, j] = b[j * ldb + p]        when b_transposed  (nn.Linear [out, in], wte for the unembedding)
//   B[p, j] = b[packed_b_index(K, N, p, j)]  when b_packed: float32 weights packed once at load
//                                   into the packed GEMM's panels (gemm.hpp; ldb, b_transposed unused)
// A, C, bias float32 and row-major as in GemmArgs.
struct WideGemmArgs {
  std::size_t m, n, k;
  const float* a;
  std::size_t lda;
  const void* b;
  DType b_dtype;
  std::size_t ldb;
  bool b_transposed;
  float* c;
  std::size_t ldc;
  const float* bias;  // [n] or nullptr
  bool accumulate;
  bool b_packed = false;  // float32 only
  // With b_packed: A as gemm_pack_a packed it (m, k of this product), or nullptr to pack it here.
  const float* a_packed = nullptr;
};
void gemm_wide_ref(const WideGemmArgs& g);

// The SIMD version runs the packed GEMM (gemm.hpp): packed B read where it lies,
// for any number of rows (gemm_prepacked_b_simd); float32 B as it lies
// (b_transposed: trans_b, read transposed while packing); 16-bit b_transposed B
// through gemm_packed_b_simd, widened and transposed straight into each packed
// panel; 16-bit [in, out] B widened a kWidePanel-column panel at a time, then
// packed (measured faster than widening 16 columns per packed row).
// kWidePanel: also the column runs callers splitting C over threads cut at (a
// multiple of gemm_packed_panel_cols(), so a packed B's run is a packed B).
// With at most kWideDotRows rows of A (a generated token) each row of stored B
// is read once instead: one dot product per output when b_transposed, else a
// chunk of the widened row added into C's rows (no panel, no packing).
// workspace: gemm_wide_workspace_floats(g) floats.
constexpr std::size_t kWidePanel = 64;
constexpr std::size_t kWideDotRows = 4;
std::size_t gemm_wide_workspace_floats(const WideGemmArgs& g);
void gemm_wide_simd(const WideGemmArgs& g, float* workspace);

// x[t, :] = widen(wte[tokens[t], :]) + widen(wpe[t, :]) for t < t_len; wte [vocab, d]
// and wpe [>= t_len, d] stored as their dtypes, wpe nullptr for none (rotary models).
// Token ids must be in range.
// wte_packed_vocab > 0: wte is float32 packed as the unembedding reads it (op(B) = wte^T,
// K = d, N = wte_packed_vocab), so wte[v, c] = wte[packed_b_index(d, vocab, c, v)].
void embed_wide_ref(const std::int32_t* tokens, std::size_t t_len, std::size_t d, const void* wte,
                    DType wte_dtype, const void* wpe, DType wpe_dtype, float* x,
                    std::size_t wte_packed_vocab = 0);
void embed_wide_simd(const std::int32_t* tokens, std::size_t t_len, std::size_t d, const void* wte,
                     DType wte_dtype, const void* wpe, DType wpe_dtype, float* x,
                     std::size_t wte_packed_vocab = 0);

// Dispatch on path, as kernels.hpp's gemm(Path, ...).
void gemm_wide(Path path, const WideGemmArgs& g, float* workspace);
void embed_wide(Path path, const std::int32_t* tokens, std::size_t t_len, std::size_t d, const void* wte,
                DType wte_dtype, const void* wpe, DType wpe_dtype, float* x, std::size_t wte_packed_vocab = 0);
void widen(Path path, const void* src, DType dtype, float* dst, std::size_t n);

}  // namespace headlab
