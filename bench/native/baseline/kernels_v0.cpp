// Snapshot of cpp/src/kernels.cpp before the performance work (git f1ddeee), kept in
// headlab::v0 so the benchmark can time old and new code side by side in one run.
#include "headlab/kernels.hpp"
#include "baseline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include <xsimd/xsimd.hpp>

namespace headlab {
namespace v0 {

namespace {

using fbatch = xsimd::batch<float>;
using ibatch = xsimd::batch<std::int32_t>;
constexpr std::size_t W = fbatch::size;

inline float init_value(const GemmArgs& g, std::size_t i, std::size_t j) {
  float v = g.accumulate ? g.c[i * g.ldc + j] : 0.0f;
  if (g.bias) v += g.bias[j];
  return v;
}

inline fbatch init_batch(const GemmArgs& g, std::size_t i, std::size_t j) {
  fbatch v = g.accumulate ? fbatch::load_unaligned(g.c + i * g.ldc + j) : fbatch(0.0f);
  if (g.bias) v += fbatch::load_unaligned(g.bias + j);
  return v;
}

// Register block of MR rows x NB batches of columns: MR*NB accumulators stay in
// registers for the whole k loop (at most 8, which V8 can keep in XMM registers).
template <std::size_t MR, std::size_t NB>
inline void gemm_block(const GemmArgs& g, std::size_t i0, std::size_t j0) {
  fbatch acc[MR][NB];
  for (std::size_t r = 0; r < MR; ++r)
    for (std::size_t c = 0; c < NB; ++c) acc[r][c] = init_batch(g, i0 + r, j0 + c * W);
  const float* a = g.a + i0 * g.lda;
  const float* b = g.b + j0;
  for (std::size_t p = 0; p < g.k; ++p) {
    fbatch bv[NB];
    for (std::size_t c = 0; c < NB; ++c) bv[c] = fbatch::load_unaligned(b + p * g.ldb + c * W);
    for (std::size_t r = 0; r < MR; ++r) {
      const fbatch av(a[r * g.lda + p]);
      for (std::size_t c = 0; c < NB; ++c) acc[r][c] = xsimd::fma(av, bv[c], acc[r][c]);
    }
  }
  for (std::size_t r = 0; r < MR; ++r)
    for (std::size_t c = 0; c < NB; ++c)
      acc[r][c].store_unaligned(g.c + (i0 + r) * g.ldc + j0 + c * W);
}

template <std::size_t MR>
inline void gemm_rows(const GemmArgs& g, std::size_t i0) {
  std::size_t j = 0;
  for (; j + 2 * W <= g.n; j += 2 * W) gemm_block<MR, 2>(g, i0, j);
  for (; j + W <= g.n; j += W) gemm_block<MR, 1>(g, i0, j);
  // Leftover columns (n % W): scalar.
  for (; j < g.n; ++j) {
    for (std::size_t r = 0; r < MR; ++r) {
      const std::size_t i = i0 + r;
      float s = init_value(g, i, j);
      for (std::size_t p = 0; p < g.k; ++p) s += g.a[i * g.lda + p] * g.b[p * g.ldb + j];
      g.c[i * g.ldc + j] = s;
    }
  }
}

// exp on one batch. Range reduction x = n*ln2 + r with |r| <= ln2/2, a degree-6
// polynomial for exp(r), and 2^n assembled from the rounding constant's bits:
// adding 1.5*2^23 rounds x*log2(e) to an integer n that sits in the low
// mantissa bits, so (bits << 23) + (127 << 23) is the float 2^n.
inline fbatch exp_batch(fbatch x) {
  const fbatch lo(-87.33654f), hi(88.0f);
  const fbatch magic(12582912.0f);  // 1.5 * 2^23
  const auto underflow = x < lo;
  x = xsimd::min(xsimd::max(x, lo), hi);
  const fbatch t = xsimd::fma(x, fbatch(1.44269504088896341f), magic);
  const fbatch n = t - magic;
  fbatch r = xsimd::fnma(n, fbatch(0.693359375f), x);
  r = xsimd::fnma(n, fbatch(-2.12194440e-4f), r);
  fbatch p(1.9875691500e-4f);
  p = xsimd::fma(p, r, fbatch(1.3981999507e-3f));
  p = xsimd::fma(p, r, fbatch(8.3334519073e-3f));
  p = xsimd::fma(p, r, fbatch(4.1665795894e-2f));
  p = xsimd::fma(p, r, fbatch(1.6666665459e-1f));
  p = xsimd::fma(p, r, fbatch(5.0000001201e-1f));
  const fbatch y = xsimd::fma(p * r, r, r + fbatch(1.0f));
  const ibatch bits = (xsimd::bitwise_cast<ibatch>(t) << 23) + ibatch(127 << 23);
  return xsimd::select(underflow, fbatch(0.0f), y * xsimd::bitwise_cast<fbatch>(bits));
}

}  // namespace

void gemm_ref(const GemmArgs& g) {
  for (std::size_t i = 0; i < g.m; ++i)
    for (std::size_t j = 0; j < g.n; ++j) {
      float s = init_value(g, i, j);
      for (std::size_t p = 0; p < g.k; ++p) s += g.a[i * g.lda + p] * g.b[p * g.ldb + j];
      g.c[i * g.ldc + j] = s;
    }
}

void gemm_simd(const GemmArgs& g) {
  std::size_t i = 0;
  for (; i + 4 <= g.m; i += 4) gemm_rows<4>(g, i);
  for (; i < g.m; ++i) gemm_rows<1>(g, i);
}

void transpose(std::size_t rows, std::size_t cols, const float* src, std::size_t lds,
               float* dst, std::size_t ldd) {
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) dst[c * ldd + r] = src[r * lds + c];
}

void exp_ref(const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}

void exp_simd(const float* x, float* y, std::size_t n) {
  std::size_t i = 0;
  for (; i + W <= n; i += W) exp_batch(fbatch::load_unaligned(x + i)).store_unaligned(y + i);
  if (i < n) {
    // Tail through the same polynomial so results do not depend on position.
    alignas(16) float buf[W] = {};
    std::copy(x + i, x + n, buf);
    exp_batch(fbatch::load_aligned(buf)).store_aligned(buf);
    std::copy(buf, buf + (n - i), y + i);
  }
}

void scale_ref(float* x, std::size_t n, float s) {
  for (std::size_t i = 0; i < n; ++i) x[i] *= s;
}

void scale_simd(float* x, std::size_t n, float s) {
  const fbatch sv(s);
  std::size_t i = 0;
  for (; i + W <= n; i += W) (fbatch::load_unaligned(x + i) * sv).store_unaligned(x + i);
  for (; i < n; ++i) x[i] *= s;
}

void softmax_rows_ref(float* x, std::size_t rows, std::size_t cols, std::size_t ld) {
  const float ninf = -std::numeric_limits<float>::infinity();
  for (std::size_t r = 0; r < rows; ++r) {
    float* row = x + r * ld;
    float mx = ninf;
    for (std::size_t c = 0; c < cols; ++c) mx = std::max(mx, row[c]);
    if (mx == ninf) {  // nothing to attend to
      std::fill(row, row + cols, 0.0f);
      continue;
    }
    float sum = 0.0f;
    for (std::size_t c = 0; c < cols; ++c) {
      row[c] = row[c] == ninf ? 0.0f : std::exp(row[c] - mx);
      sum += row[c];
    }
    for (std::size_t c = 0; c < cols; ++c) row[c] /= sum;
  }
}

void softmax_rows_simd(float* x, std::size_t rows, std::size_t cols, std::size_t ld) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const std::size_t main = cols - cols % W;
  for (std::size_t r = 0; r < rows; ++r) {
    float* row = x + r * ld;
    fbatch mv(ninf);
    for (std::size_t c = 0; c < main; c += W) mv = xsimd::max(mv, fbatch::load_unaligned(row + c));
    alignas(16) float lanes[W];
    mv.store_aligned(lanes);
    float mx = *std::max_element(lanes, lanes + W);
    for (std::size_t c = main; c < cols; ++c) mx = std::max(mx, row[c]);
    if (mx == ninf) {
      std::fill(row, row + cols, 0.0f);
      continue;
    }
    const fbatch mb(mx);
    fbatch sv(0.0f);
    for (std::size_t c = 0; c < main; c += W) {
      const fbatch e = exp_batch(fbatch::load_unaligned(row + c) - mb);
      e.store_unaligned(row + c);
      sv += e;
    }
    float sum = xsimd::hadd(sv);
    if (main < cols) {
      alignas(16) float buf[W];
      std::fill(buf, buf + W, ninf);
      std::copy(row + main, row + cols, buf);
      const fbatch e = exp_batch(fbatch::load_aligned(buf) - mb);
      e.store_aligned(buf);
      for (std::size_t c = main; c < cols; ++c) {
        row[c] = buf[c - main];
        sum += row[c];
      }
    }
    scale_simd(row, cols, 1.0f / sum);
  }
}

}  // namespace v0
}  // namespace headlab
