// SIMD kernels against their scalar references over sizes at and around the
// SIMD width, and the references against double precision.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "headlab/kernels.hpp"
#include "reference.hpp"

using namespace headlab;

namespace {
const std::size_t kSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 64, 129};
}

TEST_CASE("gemm_simd matches gemm_ref and a double product, with strides, bias and accumulate") {
  std::mt19937 rng(1);
  for (std::size_t m : {1, 3, 4, 5, 9}) {
    for (std::size_t n : kSizes) {
      for (std::size_t k : {1, 2, 4, 5, 17, 64}) {
        for (int variant = 0; variant < 3; ++variant) {
          CAPTURE(m);
          CAPTURE(n);
          CAPTURE(k);
          CAPTURE(variant);
          const std::size_t lda = k + 3, ldb = n + 1, ldc = n + 2;
          auto a = ref::random_vec(rng, m * lda), b = ref::random_vec(rng, k * ldb);
          auto bias = ref::random_vec(rng, n);
          auto c0 = ref::random_vec(rng, m * ldc);
          const bool with_bias = variant >= 1, accumulate = variant == 2;
          std::vector<double> want(m * ldc);
          for (std::size_t i = 0; i < m * ldc; ++i) want[i] = c0[i];
          for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
              double s = accumulate ? c0[i * ldc + j] : 0.0;
              if (with_bias) s += bias[j];
              for (std::size_t p = 0; p < k; ++p) s += double(a[i * lda + p]) * b[p * ldb + j];
              want[i * ldc + j] = s;
            }
          auto c_ref = c0, c_simd = c0;
          GemmArgs g{m, n, k, a.data(), lda, b.data(), ldb, c_ref.data(), ldc,
                     with_bias ? bias.data() : nullptr, accumulate};
          gemm_ref(g);
          g.c = c_simd.data();
          gemm_simd(g);
          const double tol = 1e-5 * std::sqrt(double(k));
          CHECK(ref::allclose(c_ref, want, tol, 1e-5, "gemm_ref vs double"));
          CHECK(ref::allclose(c_simd, want, tol, 1e-5, "gemm_simd vs double"));
          CHECK(ref::allclose(c_simd, c_ref, tol, 1e-5, "gemm_simd vs gemm_ref"));
        }
      }
    }
  }
}

TEST_CASE("exp_simd is within a few ulp of std::exp over the float range") {
  std::vector<float> x, y_ref, y_simd;
  for (float v = -87.0f; v <= 88.0f; v += 0.01337f) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-8f, -1e-8f, 0.5f, -0.5f, 1.0f, -1.0f}) x.push_back(v);
  y_ref.resize(x.size());
  y_simd.resize(x.size());
  exp_ref(x.data(), y_ref.data(), x.size());
  exp_simd(x.data(), y_simd.data(), x.size());
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double exact = std::exp(double(x[i]));
    worst = std::max(worst, std::fabs(y_simd[i] - exact) / exact);
  }
  INFO("worst relative error " << worst);
  CHECK(worst < 5e-7);
  CHECK(ref::allclose(y_simd, y_ref, 0.0, 5e-7, "exp_simd vs exp_ref"));

  const float ninf = -std::numeric_limits<float>::infinity();
  std::vector<float> tiny = {-100.0f, -1e4f, ninf, -88.0f, -87.5f};
  std::vector<float> out(tiny.size(), 1.0f);
  exp_simd(tiny.data(), out.data(), tiny.size());
  for (float v : out) CHECK(v == 0.0f);
}

TEST_CASE("softmax_rows: simd vs ref vs double, masked entries and empty rows") {
  std::mt19937 rng(2);
  const float ninf = -std::numeric_limits<float>::infinity();
  for (std::size_t cols : kSizes) {
    for (float spread : {1.0f, 30.0f, 1e4f}) {
      CAPTURE(cols);
      CAPTURE(spread);
      const std::size_t rows = 5, ld = cols + 3;
      auto x = ref::random_vec(rng, rows * ld, spread);
      for (std::size_t c = 0; c < cols; c += 4) x[1 * ld + c] = ninf;  // partly masked row
      for (std::size_t c = 0; c < cols; ++c) x[2 * ld + c] = ninf;      // fully masked row
      std::vector<double> want(rows * ld);
      for (std::size_t r = 0; r < rows; ++r) {
        double mx = -INFINITY, sum = 0;
        for (std::size_t c = 0; c < cols; ++c) mx = std::max(mx, double(x[r * ld + c]));
        for (std::size_t c = 0; c < cols; ++c) sum += std::isinf(mx) ? 0 : std::exp(x[r * ld + c] - mx);
        for (std::size_t c = 0; c < ld; ++c)
          want[r * ld + c] = c >= cols ? x[r * ld + c] : (std::isinf(mx) ? 0.0 : std::exp(x[r * ld + c] - mx) / sum);
      }
      auto a = x, b = x;
      softmax_rows_ref(a.data(), rows, cols, ld);
      softmax_rows_simd(b.data(), rows, cols, ld);
      CHECK(ref::allclose(a, want, 1e-6, 1e-5, "softmax_ref vs double"));
      CHECK(ref::allclose(b, want, 1e-6, 1e-5, "softmax_simd vs double"));
      for (std::size_t c = 0; c < cols; ++c) {
        CHECK(b[2 * ld + c] == 0.0f);
        if (c % 4 == 0) CHECK(b[1 * ld + c] == 0.0f);
      }
      for (float v : b) CHECK(!std::isnan(v));
    }
  }
}

TEST_CASE("scale_simd matches scale_ref") {
  std::mt19937 rng(3);
  for (std::size_t n : kSizes) {
    auto x = ref::random_vec(rng, n);
    auto a = x, b = x;
    scale_ref(a.data(), n, 0.37f);
    scale_simd(b.data(), n, 0.37f);
    CHECK(a == b);
  }
}
