// Kernels of the transformer block families (norm.hpp's RMSNorm, rotary.hpp,
// elementwise.hpp's erf-GELU, SwiGLU, GeGLU): _ref and _simd against double-precision
// answers written from the formulas, at sizes around the SIMD width.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "headlab/kernels.hpp"
#include "reference.hpp"

using namespace headlab;

namespace {

const std::size_t kSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 64, 129};

std::vector<float> randn(std::size_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 g(seed);
  std::normal_distribution<float> nd(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = nd(g);
  return v;
}

}  // namespace

TEST_CASE("rmsnorm_forward (w and 1 + w) against double precision") {
  for (bool one_plus : {false, true})
    for (std::size_t d : kSizes) {
      const std::size_t rows = 3;
      const unsigned seed = unsigned(d * 7 + one_plus);
      const auto x = randn(rows * d, seed, 2.0f), w = randn(d, seed + 1);
      std::vector<double> want(rows * d);
      for (std::size_t r = 0; r < rows; ++r) {
        double ss = 0;
        for (std::size_t c = 0; c < d; ++c) ss += double(x[r * d + c]) * x[r * d + c];
        const double rstd = 1 / std::sqrt(ss / double(d) + 1e-6);
        for (std::size_t c = 0; c < d; ++c)
          want[r * d + c] = x[r * d + c] * rstd * (one_plus ? 1.0 + w[c] : double(w[c]));
      }
      for (Path p : {Path::ref, Path::simd}) {
        std::vector<float> y(rows * d);
        rmsnorm_forward(p, {rows, d, x.data(), w.data(), y.data(), 1e-6f, one_plus});
        INFO("d " << d << " one_plus " << one_plus << " seed " << seed << " simd " << (p == Path::simd));
        CHECK(ref::allclose(y, want, 1e-6, 1e-5, "rmsnorm"));
        // In place (y aliases x).
        std::vector<float> z = x;
        rmsnorm_forward(p, {rows, d, z.data(), w.data(), z.data(), 1e-6f, one_plus});
        CHECK(ref::allclose(z, want, 1e-6, 1e-5, "rmsnorm in place"));
      }
    }
}

TEST_CASE("rope_inv_freq: plain theta and Llama 3.1's llama3 scaling, from the formula") {
  // rot_dim 64, theta 500000, factor 8, low 1, high 4, original context 8192 (Llama 3.2's values).
  RopeArgs r{64, 500000.0, 8.0, 1.0, 4.0, 8192.0};
  std::vector<double> f(32), plain(32);
  rope_inv_freq(r, f.data());
  RopeArgs none{64, 500000.0};
  rope_inv_freq(none, plain.data());
  const double pi = 3.14159265358979323846;
  int low = 0, mid = 0, high = 0;
  for (std::size_t i = 0; i < 32; ++i) {
    const double base = std::pow(500000.0, -double(2 * i) / 64.0);
    CHECK(std::fabs(plain[i] - base) <= 1e-15 * base);
    const double wl = 2 * pi / base;
    double want;
    if (wl < 8192.0 / 4) {
      want = base, ++high;
    } else if (wl > 8192.0) {
      want = base / 8, ++low;
    } else {
      const double s = (8192.0 / wl - 1) / 3;
      want = (1 - s) * base / 8 + s * base, ++mid;
    }
    CHECK(std::fabs(f[i] - want) <= 1e-13 * want);
  }
  // Every band is reached at these values.
  CHECK(low > 0);
  CHECK(mid > 0);
  CHECK(high > 0);
}

TEST_CASE("rotary_apply: rotate-half with partial rotary, against double precision") {
  for (std::size_t head_dim : {2, 4, 8, 10, 16, 18, 34, 64})
    for (std::size_t rot_dim : {head_dim, head_dim / 2 - (head_dim / 2) % 2}) {
      if (rot_dim < 2) continue;
      const std::size_t rows = 5, heads = 3, ld = heads * head_dim + 3, p0 = 7;
      const unsigned seed = unsigned(head_dim * 31 + rot_dim);
      const auto x = randn(rows * ld, seed);
      RopeArgs r{rot_dim, 10000.0};
      const std::size_t half = rot_dim / 2;
      std::vector<float> c(rows * half), s(rows * half);
      rope_table(r, p0, rows, c.data(), s.data());
      std::vector<double> want(x.begin(), x.end());
      for (std::size_t t = 0; t < rows; ++t)
        for (std::size_t h = 0; h < heads; ++h)
          for (std::size_t i = 0; i < half; ++i) {
            const double angle = double(p0 + t) * std::pow(10000.0, -double(2 * i) / double(rot_dim));
            const std::size_t o = t * ld + h * head_dim;
            const double x1 = x[o + i], x2 = x[o + i + half];
            want[o + i] = x1 * std::cos(angle) - x2 * std::sin(angle);
            want[o + i + half] = x2 * std::cos(angle) + x1 * std::sin(angle);
          }
      for (Path p : {Path::ref, Path::simd}) {
        std::vector<float> y = x;
        rotary_apply(p, {rows, heads, head_dim, rot_dim, y.data(), ld, c.data(), s.data()});
        INFO("head_dim " << head_dim << " rot_dim " << rot_dim << " seed " << seed);
        CHECK(ref::allclose(y, want, 1e-5, 1e-5, "rotary"));
      }
    }
}

TEST_CASE("gelu_erf_forward, swiglu, geglu against double precision") {
  for (std::size_t n : kSizes) {
    const unsigned seed = unsigned(n);
    auto x = randn(n, seed, 3.0f);
    const auto up = randn(n, seed + 5);
    if (n > 4) x[0] = -12.0f, x[1] = 12.0f, x[2] = -100.0f, x[3] = 0.0f;
    std::vector<double> ge(n), sw(n), gg(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double v = x[i];
      ge[i] = 0.5 * v * std::erfc(-v / std::sqrt(2.0));
      sw[i] = v / (1 + std::exp(-v)) * up[i];
      gg[i] = 0.5 * v * (1 + std::tanh(std::sqrt(2 / 3.14159265358979323846) * (v + 0.044715 * v * v * v))) * up[i];
    }
    for (Path p : {Path::ref, Path::simd}) {
      INFO("n " << n << " seed " << seed << " simd " << (p == Path::simd));
      std::vector<float> y(n);
      gelu_erf_forward(p, x.data(), y.data(), n);
      CHECK(ref::allclose(y, ge, 1e-6, 2e-6, "gelu_erf"));
      swiglu(p, x.data(), up.data(), y.data(), n);
      CHECK(ref::allclose(y, sw, 1e-6, 1e-5, "swiglu"));
      geglu(p, x.data(), up.data(), y.data(), n);
      CHECK(ref::allclose(y, gg, 1e-6, 1e-5, "geglu"));
      // out aliasing up.
      std::vector<float> u = up;
      swiglu(p, x.data(), u.data(), u.data(), n);
      CHECK(ref::allclose(u, sw, 1e-6, 1e-5, "swiglu in place"));
      u = up;
      geglu(p, x.data(), u.data(), u.data(), n);
      CHECK(ref::allclose(u, gg, 1e-6, 1e-5, "geglu in place"));
    }
  }
}
