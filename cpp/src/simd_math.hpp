// Private to cpp/src: the SIMD maths the kernels share (kernels.cpp,
// attention_fused.cpp, lm_kernels.cpp): exp and exp2 on one batch, reductions
// over the lanes of a batch and over a row, and the constant log2(e).
// exp and exp2 build 2^n with an integer shift of the rounding constant's
// bits: no float->int lane conversion, which WASM SIMD128 emulates slowly.
#pragma once

#include <limits>

#include "simd.hpp"

namespace headlab {
namespace simd {

constexpr std::size_t W = fbatch::size;

// log2(e): e^x = 2^(x log2(e)).
constexpr float kLog2e = 1.44269504088896341f;

// exp on one batch. Range reduction x = n*ln2 + r with |r| <= ln2/2, a degree-6
// polynomial for exp(r), and 2^n assembled from the rounding constant's bits:
// adding 1.5*2^23 rounds x*log2(e) to an integer n that sits in the low
// mantissa bits, so (bits << 23) + (127 << 23) is the float 2^n.
inline fbatch exp_batch(fbatch x) {
  const fbatch lo(-87.33654f), hi(88.0f);
  const fbatch magic(12582912.0f);  // 1.5 * 2^23
  const auto underflow = x < lo;
  x = min(max(x, lo), hi);
  const fbatch t = fma(x, fbatch(kLog2e), magic);
  const fbatch n = t - magic;
  fbatch r = fnma(n, fbatch(0.693359375f), x);
  r = fnma(n, fbatch(-2.12194440e-4f), r);
  fbatch p(1.9875691500e-4f);
  p = fma(p, r, fbatch(1.3981999507e-3f));
  p = fma(p, r, fbatch(8.3334519073e-3f));
  p = fma(p, r, fbatch(4.1665795894e-2f));
  p = fma(p, r, fbatch(1.6666665459e-1f));
  p = fma(p, r, fbatch(5.0000001201e-1f));
  const fbatch y = fma(p * r, r, r + fbatch(1.0f));
  const ibatch bits = (bitwise_cast<ibatch>(t) << 23) + ibatch(127 << 23);
  return select(underflow, fbatch(0.0f), y * bitwise_cast<fbatch>(bits));
}

// 2^x for x <= 0 (a softmax argument already scaled by log2(e)). Clamping at
// -127 makes n = -127 for everything below -126.5 (and for -infinity), whose
// biased exponent is 0: the result is exactly 0 with no compare or select.
// 2^r on |r| <= 1/2 is Cephes exp2f's degree-6 polynomial.
inline fbatch exp2_nonpositive_batch(fbatch x) {
  const fbatch magic(12582912.0f);  // 1.5 * 2^23
  x = max(x, fbatch(-127.0f));
  const fbatch t = x + magic;
  const fbatch r = x - (t - magic);
  fbatch p(1.535336188319500e-4f);
  p = fma(p, r, fbatch(1.339887440266574e-3f));
  p = fma(p, r, fbatch(9.618437357674640e-3f));
  p = fma(p, r, fbatch(5.550332471162809e-2f));
  p = fma(p, r, fbatch(2.402264791363012e-1f));
  p = fma(p, r, fbatch(6.931472028550421e-1f));
  p = fma(p, r, fbatch(1.0f));
  const ibatch bits = (bitwise_cast<ibatch>(t) << 23) + ibatch(127 << 23);
  return p * bitwise_cast<fbatch>(bits);
}

// Sum and maximum of the lanes, through memory (cheaper in WASM than shuffles).
inline float lanes_sum(fbatch v) {
  alignas(64) float l[W];
  v.store_aligned(l);
  float s = 0.0f;
  for (std::size_t i = 0; i < W; ++i) s += l[i];
  return s;
}

inline float lanes_max(fbatch v) {
  alignas(64) float l[W];
  v.store_aligned(l);
  float m = l[0];
  for (std::size_t i = 1; i < W; ++i) m = l[i] > m ? l[i] : m;
  return m;
}

// Maximum of row[0..n), n a multiple of W; -infinity for n = 0.
inline float row_max(const float* row, std::size_t n) {
  fbatch m0(-std::numeric_limits<float>::infinity()), m1 = m0;
  std::size_t c = 0;
  for (; c + 2 * W <= n; c += 2 * W) {
    m0 = max(m0, fbatch::load_unaligned(row + c));
    m1 = max(m1, fbatch::load_unaligned(row + c + W));
  }
  for (; c < n; c += W) m0 = max(m0, fbatch::load_unaligned(row + c));
  return lanes_max(max(m0, m1));
}

// row[c] = 2^exponent(row[c]) for c < n (a multiple of W), exponent(x) <= 0
// for every x of the row; returns the sum. Two accumulators, as row_max.
template <class Exponent>
inline float row_exp2_sum_of(float* row, std::size_t n, Exponent exponent) {
  fbatch s0(0.0f), s1(0.0f);
  std::size_t c = 0;
  for (; c + 2 * W <= n; c += 2 * W) {
    const fbatch e0 = exp2_nonpositive_batch(exponent(fbatch::load_unaligned(row + c)));
    const fbatch e1 = exp2_nonpositive_batch(exponent(fbatch::load_unaligned(row + c + W)));
    e0.store_unaligned(row + c);
    e1.store_unaligned(row + c + W);
    s0 += e0;
    s1 += e1;
  }
  for (; c < n; c += W) {
    const fbatch e = exp2_nonpositive_batch(exponent(fbatch::load_unaligned(row + c)));
    e.store_unaligned(row + c);
    s0 += e;
  }
  return lanes_sum(s0 + s1);
}

// row[c] = 2^(row[c] - m) for c < n (a multiple of W), scores already scaled
// by log2(e) and m >= each of them; returns the sum.
inline float row_exp2_sum(float* row, std::size_t n, float m) {
  const fbatch mb(m);
  return row_exp2_sum_of(row, n, [mb](fbatch x) { return x - mb; });
}

// row[c] = e^(row[c] - m) = 2^((row[c] - m) log2(e)) for c < n (a multiple of
// W), m >= each entry; returns the sum. Subtracting first keeps the argument
// exact near the maximum even for huge scores.
inline float row_exp_sum(float* row, std::size_t n, float m) {
  const fbatch mb(m), log2e(kLog2e);
  return row_exp2_sum_of(row, n, [mb, log2e](fbatch x) { return (x - mb) * log2e; });
}

}  // namespace simd
}  // namespace headlab
