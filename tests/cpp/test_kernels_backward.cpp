// Backward kernels (kernels.hpp): softmax backward and column sums, simd
// against scalar and double precision, in place and accumulating.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "headlab/kernels.hpp"
#include "reference.hpp"

using namespace headlab;

TEST_CASE("backward kernels: softmax backward and column sums, simd against scalar") {
  std::mt19937 rng(5);
  for (std::size_t rows : {1, 3, 4}) {
    for (std::size_t cols : {1, 3, 4, 5, 7, 8, 9, 16, 17, 33}) {
      CAPTURE(rows);
      CAPTURE(cols);
      const std::size_t ld = cols + 2;
      std::vector<float> p = ref::random_vec(rng, rows * ld, 1.0f), dp = ref::random_vec(rng, rows * ld, 1.0f);
      softmax_rows_ref(p.data(), rows, cols, ld);
      p[0] = 0.0f;  // a masked entry
      std::vector<float> a(rows * ld, 0.0f), b(rows * ld, 0.0f);
      softmax_backward_rows_ref(p.data(), dp.data(), a.data(), rows, cols, ld, 0.5f);
      softmax_backward_rows_simd(p.data(), dp.data(), b.data(), rows, cols, ld, 0.5f);
      CHECK(ref::allclose(b, a, 1e-6, 1e-5, "softmax backward"));
      CHECK(b[0] == 0.0f);
      std::vector<double> want(rows * ld, 0.0);
      for (std::size_t r = 0; r < rows; ++r) {
        double dot = 0;
        for (std::size_t c = 0; c < cols; ++c) dot += double(dp[r * ld + c]) * p[r * ld + c];
        for (std::size_t c = 0; c < cols; ++c)
          want[r * ld + c] = 0.5 * p[r * ld + c] * (dp[r * ld + c] - dot);
      }
      CHECK(ref::allclose(b, want, 1e-6, 1e-5, "softmax backward vs double"));
      // In place (ds aliasing dp).
      std::vector<float> inplace = dp;
      softmax_backward_rows_simd(p.data(), inplace.data(), inplace.data(), rows, cols, ld, 0.5f);
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) CHECK(inplace[r * ld + c] == b[r * ld + c]);

      std::vector<float> s1(cols, 1.0f), s2(cols, 1.0f);
      column_sums_ref(dp.data(), rows, cols, ld, s1.data(), true);
      column_sums_simd(dp.data(), rows, cols, ld, s2.data(), true);
      CHECK(ref::allclose(s2, s1, 1e-6, 1e-6, "column sums"));
    }
  }
}
