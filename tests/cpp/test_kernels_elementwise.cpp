// Elementwise kernels (kernels.hpp): exp and exp2 against double precision
// and their references, scale against its reference.
#include <doctest/doctest.h>

#include <algorithm>
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

TEST_CASE("exp2_nonpositive_simd: relative error below 3e-7 on [-126, 0], exact 0 below") {
  std::vector<float> x, y(0), yr(0);
  for (float v = -126.0f; v <= 0.0f; v += 0.00731f) x.push_back(v);
  for (float v : {0.0f, -0.0f, -1e-8f, -0.5f, -1.0f, -0.49999997f, -125.99f}) x.push_back(v);
  y.resize(x.size());
  yr.resize(x.size());
  exp2_nonpositive_simd(x.data(), y.data(), x.size());
  exp2_nonpositive_ref(x.data(), yr.data(), x.size());
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double exact = std::exp2(double(x[i]));
    worst = std::max(worst, std::fabs(y[i] - exact) / exact);
  }
  INFO("worst relative error " << worst);
  CHECK(worst < 3e-7);
  CHECK(ref::allclose(y, yr, 0.0, 3e-7, "exp2_nonpositive_simd vs _ref"));
  const float ninf = -std::numeric_limits<float>::infinity();
  std::vector<float> tiny = {-127.0f, -126.6f, -200.0f, -1e30f, ninf};
  std::vector<float> out(tiny.size(), 1.0f);
  exp2_nonpositive_simd(tiny.data(), out.data(), tiny.size());
  for (float v : out) CHECK(v == 0.0f);
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
