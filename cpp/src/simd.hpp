// Private to cpp/src: the batch types every vectorised kernel is written in.
//
// With a SIMD instruction set (native SSE/AVX, or WebAssembly SIMD128 reached
// through -msimd128 -msse4.1) they are xsimd's batches. The WebAssembly scalar
// fallback build (no -msimd128, for engines without SIMD) gets a plain 4-lane
// struct with the same interface instead: xsimd 8.1, the version Debian 12
// ships, has no scalar/emulated architecture, so batch<float> does not compile
// there. The kernels are then the same source compiled to scalar code, which is
// what the fallback build is meant to be.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__EMSCRIPTEN__) && !defined(__wasm_simd128__)
#define HEADLAB_SCALAR_BUILD 1
#else
#include <xsimd/xsimd.hpp>
#endif

namespace headlab {
namespace simd {

#ifndef HEADLAB_SCALAR_BUILD

using fbatch = xsimd::batch<float>;
using ibatch = xsimd::batch<std::int32_t>;
using xsimd::abs;
using xsimd::bitwise_cast;
using xsimd::fma;
using xsimd::fnma;
using xsimd::hadd;
using xsimd::max;
using xsimd::min;
using xsimd::select;
using xsimd::sqrt;
using xsimd::zip_hi;
using xsimd::zip_lo;

#if defined(__wasm_simd128__)
// Emscripten 3.1.6 lowers _mm_max_ps (xsimd's max on SSE) to a compare and a
// bitselect; f32x4.pmax is one instruction with maxps's semantics (b < a ? a : b
// per lane), and V8 compiles it to a single maxps. Preferred over the xsimd
// template as a non-template exact match.
inline fbatch max(fbatch a, fbatch b) {
  return fbatch(static_cast<__m128>(__builtin_wasm_pmax_f32x4(static_cast<__m128>(b), static_cast<__m128>(a))));
}
#endif

#else

template <class T>
struct Lanes {
  static constexpr std::size_t size = 4;
  T v[size];

  Lanes() = default;
  Lanes(T x) {  // NOLINT: implicit broadcast, as xsimd's batch has
    for (std::size_t i = 0; i < size; ++i) v[i] = x;
  }
  static Lanes load_unaligned(const T* p) {
    Lanes r;
    for (std::size_t i = 0; i < size; ++i) r.v[i] = p[i];
    return r;
  }
  static Lanes load_aligned(const T* p) { return load_unaligned(p); }
  void store_unaligned(T* p) const {
    for (std::size_t i = 0; i < size; ++i) p[i] = v[i];
  }
  void store_aligned(T* p) const { store_unaligned(p); }

  template <class F>
  friend Lanes map2(Lanes a, Lanes b, F f) {
    Lanes r;
    for (std::size_t i = 0; i < size; ++i) r.v[i] = f(a.v[i], b.v[i]);
    return r;
  }
  friend Lanes operator+(Lanes a, Lanes b) { return map2(a, b, [](T x, T y) { return x + y; }); }
  friend Lanes operator-(Lanes a, Lanes b) { return map2(a, b, [](T x, T y) { return x - y; }); }
  friend Lanes operator*(Lanes a, Lanes b) { return map2(a, b, [](T x, T y) { return x * y; }); }
  friend Lanes operator/(Lanes a, Lanes b) { return map2(a, b, [](T x, T y) { return x / y; }); }
  friend Lanes operator<<(Lanes a, int s) {
    // Left shift of the bit pattern, as SIMD lanes do (no signed-overflow UB).
    Lanes r;
    for (std::size_t i = 0; i < size; ++i) r.v[i] = static_cast<T>(static_cast<std::uint32_t>(a.v[i]) << s);
    return r;
  }
  Lanes& operator+=(Lanes b) { return *this = *this + b; }
  Lanes& operator-=(Lanes b) { return *this = *this - b; }
  Lanes& operator*=(Lanes b) { return *this = *this * b; }

  struct Mask {
    bool v[size];
  };
  friend Mask operator<(Lanes a, Lanes b) {
    Mask m;
    for (std::size_t i = 0; i < size; ++i) m.v[i] = a.v[i] < b.v[i];
    return m;
  }
};

using fbatch = Lanes<float>;
using ibatch = Lanes<std::int32_t>;

inline fbatch fma(fbatch a, fbatch b, fbatch c) { return a * b + c; }
inline fbatch fnma(fbatch a, fbatch b, fbatch c) { return c - a * b; }
inline fbatch max(fbatch a, fbatch b) { return map2(a, b, [](float x, float y) { return x > y ? x : y; }); }
inline fbatch min(fbatch a, fbatch b) { return map2(a, b, [](float x, float y) { return x < y ? x : y; }); }
inline fbatch abs(fbatch a) {
  for (float& x : a.v) x = std::fabs(x);
  return a;
}
inline fbatch sqrt(fbatch a) {
  for (float& x : a.v) x = std::sqrt(x);
  return a;
}
inline float hadd(fbatch a) { return (a.v[0] + a.v[1]) + (a.v[2] + a.v[3]); }
inline fbatch select(fbatch::Mask m, fbatch a, fbatch b) {
  for (std::size_t i = 0; i < fbatch::size; ++i) b.v[i] = m.v[i] ? a.v[i] : b.v[i];
  return b;
}
inline fbatch zip_lo(fbatch a, fbatch b) {
  fbatch r;
  r.v[0] = a.v[0], r.v[1] = b.v[0], r.v[2] = a.v[1], r.v[3] = b.v[1];
  return r;
}
inline fbatch zip_hi(fbatch a, fbatch b) {
  fbatch r;
  r.v[0] = a.v[2], r.v[1] = b.v[2], r.v[2] = a.v[3], r.v[3] = b.v[3];
  return r;
}
template <class To, class From>
To bitwise_cast(From a) {
  static_assert(sizeof(To) == sizeof(From), "bitwise_cast between batches of one width");
  To r;
  std::memcpy(r.v, a.v, sizeof r.v);
  return r;
}

#endif

}  // namespace simd
}  // namespace headlab
