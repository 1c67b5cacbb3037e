#include "headlab/pretrained_kernels.hpp"

#include <algorithm>
#include <cstring>

#include "../simd.hpp"

namespace headlab {

using simd::fbatch;

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf or NaN
  } else if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in float.
    const float f = float(mant) * 5.9604644775390625e-8f;
    std::memcpy(&bits, &f, 4);
    bits |= sign;
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float load_element(const void* data, DType dtype, std::size_t i) {
  if (dtype == DType::f32) return static_cast<const float*>(data)[i];
  const std::uint16_t h = static_cast<const std::uint16_t*>(data)[i];
  return dtype == DType::f16 ? half_to_float(h) : bf16_to_float(h);
}

void widen_ref(const void* src, DType dtype, float* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = load_element(src, dtype, i);
}

void widen_simd(const void* src, DType dtype, float* dst, std::size_t n) {
  if (dtype == DType::f32) {
    std::memmove(dst, src, n * sizeof(float));
    return;
  }
  const auto* h = static_cast<const std::uint16_t*>(src);
#ifdef HEADLAB_SCALAR_BUILD
  widen_ref(src, dtype, dst, n);
  (void)h;
#else
  using simd::ibatch;
  constexpr std::size_t W = fbatch::size;
  // Zero-extended 16-bit patterns in chunks (a plain loop the compiler
  // vectorises), then the bit arithmetic on xsimd batches.
  constexpr std::size_t kChunk = 64;
  alignas(16) std::int32_t wide[kChunk];
  std::size_t i = 0;
  for (; i + W <= n; i += kChunk) {
    const std::size_t len = std::min(kChunk, n - i) / W * W;
    for (std::size_t j = 0; j < len; ++j) wide[j] = h[i + j];
    if (dtype == DType::bf16) {
      for (std::size_t j = 0; j < len; j += W)
        xsimd::bitwise_cast<fbatch>(ibatch::load_aligned(wide + j) << 16).store_unaligned(dst + i + j);
    } else {
      // Finite halves: (h & 0x7fff) << 13 is the value times 2^-112 as a float
      // (subnormals included, as float normals); one multiply rescales it.
      const ibatch magnitude(0x7fff), sign_bit(0x8000);
      const fbatch rescale(5.192296858534828e+33f);  // 2^112
      for (std::size_t j = 0; j < len; j += W) {
        const ibatch x = ibatch::load_aligned(wide + j);
        const fbatch f = xsimd::bitwise_cast<fbatch>((x & magnitude) << 13) * rescale;
        xsimd::bitwise_cast<fbatch>(xsimd::bitwise_cast<ibatch>(f) | ((x & sign_bit) << 16))
            .store_unaligned(dst + i + j);
      }
    }
    if (len < kChunk) {
      i += len;
      break;
    }
  }
  for (; i < n; ++i) dst[i] = load_element(src, dtype, i);
#endif
}

std::size_t first_nonfinite(const void* src, DType dtype, std::size_t n) {
  if (dtype == DType::f32) {
    const auto* p = static_cast<const std::uint8_t*>(src);
    for (std::size_t i = 0; i < n; ++i) {
      std::uint32_t bits;
      std::memcpy(&bits, p + 4 * i, 4);
      if ((bits & 0x7f800000u) == 0x7f800000u) return i;
    }
    return n;
  }
  const auto* h = static_cast<const std::uint16_t*>(src);
  const std::uint16_t mask = dtype == DType::f16 ? 0x7c00 : 0x7f80;
  for (std::size_t i = 0; i < n; ++i)
    if ((h[i] & mask) == mask) return i;
  return n;
}

void gemm_wide_ref(const WideGemmArgs& g) {
  for (std::size_t i = 0; i < g.m; ++i)
    for (std::size_t j = 0; j < g.n; ++j) {
      float s = g.accumulate ? g.c[i * g.ldc + j] : 0.0f;
      if (g.bias) s += g.bias[j];
      for (std::size_t p = 0; p < g.k; ++p)
        s += g.a[i * g.lda + p] * load_element(g.b, g.b_dtype,
                                               g.b_packed       ? packed_b_index(g.k, g.n, p, j)
                                               : g.b_transposed ? j * g.ldb + p
                                                                : p * g.ldb + j);
      g.c[i * g.ldc + j] = s;
    }
}

namespace {

bool in_place(const WideGemmArgs& g) {
  return g.b_dtype == DType::f32 && !g.b_transposed;
}

GemmArgs plain(const WideGemmArgs& g, const float* b, std::size_t ldb, std::size_t j0, std::size_t nn) {
  return {g.m, nn, g.k, g.a, g.lda, b, ldb, g.c + j0, g.ldc, g.bias ? g.bias + j0 : nullptr, g.accumulate};
}

}  // namespace

std::size_t gemm_wide_workspace_floats(const WideGemmArgs& g) {
  const GemmArgs probe{g.m, kWidePanel, g.k, nullptr, g.k, nullptr, kWidePanel, nullptr, 0, nullptr, false};
  // The packed GEMM's (also the few-rows path's widened row: it holds at least k floats), and for
  // 16-bit [out, in] weights one panel's rows widened before their transpose.
  const std::size_t packed = std::max(gemm_packed_workspace_floats(probe), g.k);
  if (g.b_dtype == DType::f32 || g.b_packed) return packed;
  // 16-bit [in, out]: a widened panel [k, kWidePanel]; [out, in]: one packed panel's rows widened.
  return packed + (g.b_transposed ? gemm_packed_panel_rows() * gemm_packed_panel_cols() : g.k * kWidePanel);
}

namespace {

// sum_p a[p] * b[p] over k elements.
float dot_simd(const float* a, const float* b, std::size_t k) {
  constexpr std::size_t W = fbatch::size;
  fbatch acc0(0.0f), acc1(0.0f);
  std::size_t p = 0;
  for (; p + 2 * W <= k; p += 2 * W) {
    acc0 = simd::fma(fbatch::load_unaligned(a + p), fbatch::load_unaligned(b + p), acc0);
    acc1 = simd::fma(fbatch::load_unaligned(a + p + W), fbatch::load_unaligned(b + p + W), acc1);
  }
  for (; p + W <= k; p += W)
    acc0 = simd::fma(fbatch::load_unaligned(a + p), fbatch::load_unaligned(b + p), acc0);
  float s = simd::hadd(acc0 + acc1);
  for (; p < k; ++p) s += a[p] * b[p];
  return s;
}

}  // namespace

namespace {

struct WidePack {
  const WideGemmArgs* g;
  float* staging;  // [panel cols][panel rows]: a panel's stored rows of [out, in] weights, widened
};

// GemmPackB::pack for 16-bit B stored [out, in]: rows p0..p0+kc, columns j0..j0+nn of B
// widened (stored rows j0..j0+nn, kc values each) and transposed straight into the packed
// panel dst[kc][panel cols], zero past nn.
void pack_wide(const void* ctx, std::size_t p0, std::size_t kc, std::size_t j0, std::size_t nn, float* dst) {
  const WidePack& w = *static_cast<const WidePack*>(ctx);
  const WideGemmArgs& g = *w.g;
  const std::size_t nr = gemm_packed_panel_cols(), es = dtype_bytes(g.b_dtype);
  const auto* b = static_cast<const std::uint8_t*>(g.b);
  if (nn < nr)
    for (std::size_t p = 0; p < kc; ++p) std::fill(dst + p * nr + nn, dst + (p + 1) * nr, 0.0f);
  for (std::size_t j = 0; j < nn; ++j)
    widen_simd(b + ((j0 + j) * g.ldb + p0) * es, g.b_dtype, w.staging + j * kc, kc);
  transpose(nn, kc, w.staging, kc, dst, nr);
}

}  // namespace

void gemm_wide_simd(const WideGemmArgs& g, float* workspace) {
  if (g.b_packed) {
    const GemmArgs p = plain(g, static_cast<const float*>(g.b), 0, 0, g.n);
    g.a_packed ? gemm_prepacked_ab_simd(p, g.a_packed, workspace) : gemm_prepacked_b_simd(p, workspace);
    return;
  }
  if (in_place(g)) {
    gemm_packed_simd(plain(g, static_cast<const float*>(g.b), g.ldb, 0, g.n), workspace);
    return;
  }
  const std::size_t es = dtype_bytes(g.b_dtype);
  const auto* b = static_cast<const std::uint8_t*>(g.b);
  if (g.b_transposed && g.m <= kWideDotRows) {
    // Few rows of A against [out, in] weights (the next token's unembedding): one
    // dot product per output, each weight row read (and widened) once, no transpose.
    for (std::size_t j = 0; j < g.n; ++j) {
      const float* row = reinterpret_cast<const float*>(b + j * g.ldb * es);
      if (g.b_dtype != DType::f32) {
        widen_simd(b + j * g.ldb * es, g.b_dtype, workspace, g.k);
        row = workspace;
      }
      for (std::size_t i = 0; i < g.m; ++i) {
        float& c = g.c[i * g.ldc + j];
        c = (g.accumulate ? c : 0.0f) + (g.bias ? g.bias[j] : 0.0f) + dot_simd(g.a + i * g.lda, row, g.k);
      }
    }
    return;
  }
  if (!g.b_transposed && g.m <= kWideDotRows) {
    // Few rows of A against 16-bit [in, out] weights: C rows += a[i, p] * widen(B row p),
    // a chunk of each weight row widened into L1 and used at once (no panel, no packing).
    // Whole rows up to kChunk (16 KB, in L1): the weights are then read in file order.
    constexpr std::size_t W = fbatch::size, kChunk = 4096;
    alignas(16) float row[kChunk];
    for (std::size_t i = 0; i < g.m; ++i)
      for (std::size_t j = 0; j < g.n; ++j) {
        float& c = g.c[i * g.ldc + j];
        c = (g.accumulate ? c : 0.0f) + (g.bias ? g.bias[j] : 0.0f);
      }
    for (std::size_t j0 = 0; j0 < g.n; j0 += kChunk) {
      const std::size_t nn = std::min(kChunk, g.n - j0);
      for (std::size_t p = 0; p < g.k; ++p) {
        widen_simd(b + (p * g.ldb + j0) * es, g.b_dtype, row, nn);
        for (std::size_t i = 0; i < g.m; ++i) {
          const fbatch av(g.a[i * g.lda + p]);
          float* c = g.c + i * g.ldc + j0;
          std::size_t j = 0;
          for (; j + W <= nn; j += W)
            simd::fma(av, fbatch::load_aligned(row + j), fbatch::load_unaligned(c + j))
                .store_unaligned(c + j);
          for (; j < nn; ++j) c[j] += g.a[i * g.lda + p] * row[j];
        }
      }
    }
    return;
  }
  if (g.b_dtype == DType::f32) {
    // float32 [out, in] (GPT-Neo's weights, the tied unembedding): the packed GEMM reads B
    // transposed as it packs (trans_b), with no transposed copy in between.
    GemmArgs t = plain(g, static_cast<const float*>(g.b), g.ldb, 0, g.n);
    t.trans_b = true;
    gemm_packed_simd(t, workspace);
    return;
  }
  const std::size_t packed = std::max(
      gemm_packed_workspace_floats({g.m, kWidePanel, g.k, nullptr, g.k, nullptr, kWidePanel, nullptr, 0, nullptr, false}),
      g.k);
  if (!g.b_transposed) {
    // 16-bit [in, out] (GPT-2's Conv1D): whole rows of a 64-column panel widened at once, then
    // packed. Measured faster than widening each packed 16-column row (CPU time, GPT-2 small in
    // float16, T = 64: 290-292 ms against 320-336 ms): widen_simd's per-call cost on 16 values.
    float* panel = workspace + packed;
    for (std::size_t j0 = 0; j0 < g.n; j0 += kWidePanel) {
      const std::size_t nn = std::min(kWidePanel, g.n - j0);
      for (std::size_t p = 0; p < g.k; ++p) widen_simd(b + (p * g.ldb + j0) * es, g.b_dtype, panel + p * nn, nn);
      gemm_packed_simd(plain(g, panel, nn, j0, nn), workspace);
    }
    return;
  }
  // 16-bit [out, in] (GPT-Neo, the tied unembedding): each stored row widened for one packed
  // panel at a time and transposed straight into it (no transposed float32 copy of the panel).
  const WidePack ctx{&g, workspace + packed};
  gemm_packed_b_simd(plain(g, nullptr, 0, 0, g.n), GemmPackB{pack_wide, &ctx}, workspace);
}

void embed_wide_ref(const std::int32_t* tokens, std::size_t t_len, std::size_t d, const void* wte,
                    DType wte_dtype, const void* wpe, DType wpe_dtype, float* x,
                    std::size_t wte_packed_vocab) {
  for (std::size_t t = 0; t < t_len; ++t) {
    const std::size_t v = std::size_t(tokens[t]);
    for (std::size_t c = 0; c < d; ++c)
      x[t * d + c] = load_element(wte, wte_dtype,
                                  wte_packed_vocab ? packed_b_index(d, wte_packed_vocab, c, v) : v * d + c) +
                     (wpe ? load_element(wpe, wpe_dtype, t * d + c) : 0.0f);
  }
}

void embed_wide_simd(const std::int32_t* tokens, std::size_t t_len, std::size_t d, const void* wte,
                     DType wte_dtype, const void* wpe, DType wpe_dtype, float* x,
                     std::size_t wte_packed_vocab) {
  const auto* te = static_cast<const std::uint8_t*>(wte);
  const auto* pe = static_cast<const std::uint8_t*>(wpe);
  const std::size_t tes = dtype_bytes(wte_dtype), pes = dtype_bytes(wpe_dtype);
  constexpr std::size_t kChunk = 256;
  alignas(16) float pos[kChunk];
  for (std::size_t t = 0; t < t_len; ++t) {
    float* row = x + t * d;
    const std::size_t v = std::size_t(tokens[t]);
    if (wte_packed_vocab) {
      // Column v of the packed wte^T: one float in each row of its panel, rows `width` apart.
      const std::size_t nr = gemm_packed_panel_cols(), j0 = v - v % nr;
      const std::size_t width = std::min(nr, wte_packed_vocab - j0);
      const float* column = static_cast<const float*>(wte) + packed_b_index(d, wte_packed_vocab, 0, v);
      for (std::size_t c = 0; c < d; ++c) row[c] = column[c * width];
    } else {
      widen_simd(te + v * d * tes, wte_dtype, row, d);
    }
    for (std::size_t c0 = 0; wpe && c0 < d; c0 += kChunk) {
      const std::size_t len = std::min(kChunk, d - c0);
      widen_simd(pe + (t * d + c0) * pes, wpe_dtype, pos, len);
      add_simd(row + c0, pos, row + c0, len);
    }
  }
}

void gemm_wide(Path path, const WideGemmArgs& g, float* workspace) {
  path == Path::simd ? gemm_wide_simd(g, workspace) : gemm_wide_ref(g);
}

void embed_wide(Path path, const std::int32_t* tokens, std::size_t t_len, std::size_t d, const void* wte,
                DType wte_dtype, const void* wpe, DType wpe_dtype, float* x, std::size_t wte_packed_vocab) {
  path == Path::simd ? embed_wide_simd(tokens, t_len, d, wte, wte_dtype, wpe, wpe_dtype, x, wte_packed_vocab)
                     : embed_wide_ref(tokens, t_len, d, wte, wte_dtype, wpe, wpe_dtype, x, wte_packed_vocab);
}

void widen(Path path, const void* src, DType dtype, float* dst, std::size_t n) {
  path == Path::simd ? widen_simd(src, dtype, dst, n) : widen_ref(src, dtype, dst, n);
}

}  // namespace headlab
