// Softmax rows (kernels.hpp), forward: simd and ref against double precision
// over sizes at and around the SIMD width, with masked entries and rows.
// The backward kernels are in test_kernels_backward.cpp.
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
