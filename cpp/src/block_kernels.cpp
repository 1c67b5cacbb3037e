// Kernels the transformer block families add: RMSNorm, rotary embedding, erf-GELU,
// SwiGLU and GeGLU (headlab/kernels/norm.hpp, rotary.hpp, elementwise.hpp).
#include <algorithm>
#include <cmath>

#include "headlab/kernels.hpp"
#include "simd.hpp"
#include "simd_math.hpp"

namespace headlab {

namespace {

using simd::fbatch;
using simd::W;

// Elements of the stack chunks the gated products stage through (out may alias an input).
constexpr std::size_t kChunk = 256;

}  // namespace

// ---- RMSNorm -----------------------------------------------------------------

void rmsnorm_forward_ref(const RmsNormArgs& a) {
  for (std::size_t r = 0; r < a.rows; ++r) {
    const float* x = a.x + r * a.d;
    float* y = a.y + r * a.d;
    float ss = 0.0f;
    for (std::size_t c = 0; c < a.d; ++c) ss += x[c] * x[c];
    const float rstd = 1.0f / std::sqrt(ss / float(a.d) + a.eps);
    for (std::size_t c = 0; c < a.d; ++c) y[c] = x[c] * rstd * (a.one_plus ? 1.0f + a.w[c] : a.w[c]);
  }
}

void rmsnorm_forward_simd(const RmsNormArgs& a) {
  const std::size_t d = a.d, main = d - d % W;
  const fbatch one(a.one_plus ? 1.0f : 0.0f);
  const float one_s = a.one_plus ? 1.0f : 0.0f;
  for (std::size_t r = 0; r < a.rows; ++r) {
    const float* x = a.x + r * d;
    float* y = a.y + r * d;
    fbatch acc(0.0f);
    for (std::size_t c = 0; c < main; c += W) {
      const fbatch v = fbatch::load_unaligned(x + c);
      acc = simd::fma(v, v, acc);
    }
    float ss = simd::lanes_sum(acc);
    for (std::size_t c = main; c < d; ++c) ss += x[c] * x[c];
    const float rstd = 1.0f / std::sqrt(ss / float(d) + a.eps);
    const fbatch rb(rstd);
    for (std::size_t c = 0; c < main; c += W)
      (fbatch::load_unaligned(x + c) * rb * (one + fbatch::load_unaligned(a.w + c))).store_unaligned(y + c);
    for (std::size_t c = main; c < d; ++c) y[c] = x[c] * rstd * (one_s + a.w[c]);
  }
}

void rmsnorm_forward(Path path, const RmsNormArgs& a) {
  path == Path::simd ? rmsnorm_forward_simd(a) : rmsnorm_forward_ref(a);
}

// ---- rotary ------------------------------------------------------------------

void rope_inv_freq(const RopeArgs& r, double* out) {
  const double pi = 3.14159265358979323846;
  for (std::size_t i = 0; i < r.rot_dim / 2; ++i) {
    double f = 1.0 / std::pow(r.theta, double(2 * i) / double(r.rot_dim));
    if (r.factor > 0) {
      const double wavelen = 2 * pi / f;
      const double low_wavelen = r.original_context / r.low_freq_factor;
      const double high_wavelen = r.original_context / r.high_freq_factor;
      if (wavelen > low_wavelen) {
        f /= r.factor;
      } else if (wavelen >= high_wavelen) {
        const double s =
            (r.original_context / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
        f = (1 - s) * f / r.factor + s * f;
      }
    }
    out[i] = f;
  }
}

void rope_table(const RopeArgs& r, std::size_t p0, std::size_t rows, float* cos_out, float* sin_out) {
  const std::size_t half = r.rot_dim / 2;
  double inv[512];
  double* f = half <= 512 ? inv : new double[half];
  rope_inv_freq(r, f);
  for (std::size_t t = 0; t < rows; ++t)
    for (std::size_t i = 0; i < half; ++i) {
      const double angle = double(p0 + t) * f[i];
      cos_out[t * half + i] = float(std::cos(angle));
      sin_out[t * half + i] = float(std::sin(angle));
    }
  if (f != inv) delete[] f;
}

void rotary_apply_ref(const RotaryArgs& a) {
  const std::size_t half = a.rot_dim / 2;
  for (std::size_t t = 0; t < a.rows; ++t)
    for (std::size_t h = 0; h < a.heads; ++h) {
      float* x = a.x + t * a.ld + h * a.head_dim;
      const float *c = a.cos + t * half, *s = a.sin + t * half;
      for (std::size_t i = 0; i < half; ++i) {
        const float x1 = x[i], x2 = x[i + half];
        x[i] = x1 * c[i] - x2 * s[i];
        x[i + half] = x2 * c[i] + x1 * s[i];
      }
    }
}

void rotary_apply_simd(const RotaryArgs& a) {
  const std::size_t half = a.rot_dim / 2, main = half - half % W;
  for (std::size_t t = 0; t < a.rows; ++t)
    for (std::size_t h = 0; h < a.heads; ++h) {
      float* x = a.x + t * a.ld + h * a.head_dim;
      const float *c = a.cos + t * half, *s = a.sin + t * half;
      for (std::size_t i = 0; i < main; i += W) {
        const fbatch x1 = fbatch::load_unaligned(x + i), x2 = fbatch::load_unaligned(x + i + half);
        const fbatch cb = fbatch::load_unaligned(c + i), sb = fbatch::load_unaligned(s + i);
        (x1 * cb - x2 * sb).store_unaligned(x + i);
        (x2 * cb + x1 * sb).store_unaligned(x + i + half);
      }
      for (std::size_t i = main; i < half; ++i) {
        const float x1 = x[i], x2 = x[i + half];
        x[i] = x1 * c[i] - x2 * s[i];
        x[i + half] = x2 * c[i] + x1 * s[i];
      }
    }
}

void rotary_apply(Path path, const RotaryArgs& a) {
  path == Path::simd ? rotary_apply_simd(a) : rotary_apply_ref(a);
}

// ---- erf-GELU ----------------------------------------------------------------

void gelu_erf_forward_ref(const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678118654752f));
}

void gelu_erf_forward_simd(const float* x, float* y, std::size_t n) {
  // erfc(u) = poly(t) exp(-u^2), t = 1 / (1 + p u), u = |x| / sqrt 2 >= 0; then
  // gelu = x (1 - erfc(u) / 2) for x >= 0 and x erfc(u) / 2 for x < 0 (no cancellation).
  const fbatch p(0.3275911f), a1(0.254829592f), a2(-0.284496736f), a3(1.421413741f), a4(-1.453152027f),
      a5(1.061405429f), one(1.0f), half(0.5f), rsqrt2(0.70710678118654752f), zero(0.0f);
  std::size_t i = 0;
  for (; i + W <= n; i += W) {
    const fbatch v = fbatch::load_unaligned(x + i);
    const fbatch u = simd::abs(v) * rsqrt2;
    const fbatch t = one / simd::fma(p, u, one);
    fbatch q = simd::fma(a5, t, a4);
    q = simd::fma(q, t, a3);
    q = simd::fma(q, t, a2);
    q = simd::fma(q, t, a1);
    const fbatch tail = half * q * t * simd::exp_batch(zero - u * u);  // erfc(u) / 2
    (v * simd::select(v < zero, tail, one - tail)).store_unaligned(y + i);
  }
  gelu_erf_forward_ref(x + i, y + i, n - i);
}

void gelu_erf_forward(Path path, const float* x, float* y, std::size_t n) {
  path == Path::simd ? gelu_erf_forward_simd(x, y, n) : gelu_erf_forward_ref(x, y, n);
}

// ---- gated products ----------------------------------------------------------

void swiglu_ref(const float* gate, const float* up, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void swiglu_simd(const float* gate, const float* up, float* out, std::size_t n) {
  const fbatch one(1.0f), zero(0.0f);
  std::size_t i = 0;
  for (; i + W <= n; i += W) {
    const fbatch g = fbatch::load_unaligned(gate + i);
    // exp_batch clamps its argument to [-87.3, 88]: for g < -88, g / (1 + e^88) still rounds to ~0.
    (g / (one + simd::exp_batch(zero - g)) * fbatch::load_unaligned(up + i)).store_unaligned(out + i);
  }
  swiglu_ref(gate + i, up + i, out + i, n - i);
}

void swiglu(Path path, const float* gate, const float* up, float* out, std::size_t n) {
  path == Path::simd ? swiglu_simd(gate, up, out, n) : swiglu_ref(gate, up, out, n);
}

void geglu_ref(const float* gate, const float* up, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    float g;
    gelu_forward_ref(gate + i, &g, 1);
    out[i] = g * up[i];
  }
}

void geglu_simd(const float* gate, const float* up, float* out, std::size_t n) {
  alignas(16) float g[kChunk];
  for (std::size_t i0 = 0; i0 < n; i0 += kChunk) {
    const std::size_t len = std::min(kChunk, n - i0), main = len - len % W;
    gelu_forward_simd(gate + i0, g, len);
    for (std::size_t i = 0; i < main; i += W)
      (fbatch::load_aligned(g + i) * fbatch::load_unaligned(up + i0 + i)).store_unaligned(out + i0 + i);
    for (std::size_t i = main; i < len; ++i) out[i0 + i] = g[i] * up[i0 + i];
  }
}

void geglu(Path path, const float* gate, const float* up, float* out, std::size_t n) {
  path == Path::simd ? geglu_simd(gate, up, out, n) : geglu_ref(gate, up, out, n);
}

}  // namespace headlab
