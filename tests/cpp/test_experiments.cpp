// The scaling experiment against a double-precision recomputation from the
// same random draws, and the statistical facts the demo shows.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "headlab/experiments.hpp"
#include "headlab/tasks.hpp"
#include "reference.hpp"

using namespace headlab;

TEST_CASE("scaling experiment: dot products, both softmaxes and the statistics") {
  for (std::size_t d_k : {1, 3, 4, 5, 64, 129}) {
    CAPTURE(d_k);
    const std::size_t n_q = 37, n_k = 19, n = n_q * n_k;
    std::vector<float> dot(n), ws(n), wu(n), work(scaling_workspace_floats(d_k, n_q, n_k));
    const ScalingStats s = scaling_experiment(d_k, n_q, n_k, 42, dot.data(), ws.data(), wu.data(), work.data());

    Rng rng(42);  // the same draws, in the documented order: all queries, then all keys
    std::vector<double> q(n_q * d_k), k(n_k * d_k);
    for (auto& x : q) x = rng.normal();
    for (auto& x : k) x = rng.normal();
    std::vector<double> want_dot(n), want_ws(n), want_wu(n);
    for (std::size_t i = 0; i < n_q; ++i) {
      double sum_s = 0, sum_u = 0, max = -INFINITY;
      for (std::size_t j = 0; j < n_k; ++j) {
        double d = 0;
        for (std::size_t c = 0; c < d_k; ++c) d += q[i * d_k + c] * k[j * d_k + c];
        want_dot[i * n_k + j] = d;
        max = std::max(max, d);
      }
      for (std::size_t j = 0; j < n_k; ++j) {
        sum_s += std::exp((want_dot[i * n_k + j] - max) / std::sqrt(double(d_k)));
        sum_u += std::exp(want_dot[i * n_k + j] - max);
      }
      for (std::size_t j = 0; j < n_k; ++j) {
        want_ws[i * n_k + j] = std::exp((want_dot[i * n_k + j] - max) / std::sqrt(double(d_k))) / sum_s;
        want_wu[i * n_k + j] = std::exp(want_dot[i * n_k + j] - max) / sum_u;
      }
    }
    CHECK(ref::allclose(dot, want_dot, 1e-4, 1e-4, "dot products"));
    CHECK(ref::allclose(ws, want_ws, 1e-5, 1e-3, "scaled softmax"));
    CHECK(ref::allclose(wu, want_wu, 1e-5, 1e-3, "unscaled softmax"));
    CHECK(s.variance_scaled == doctest::Approx(s.variance_raw / double(d_k)).epsilon(1e-4));
    CHECK(s.max_weight_scaled <= 1.0);
    CHECK(s.entropy_scaled <= std::log(double(n_k)) + 1e-6);
  }
}

TEST_CASE("without the scaling, softmax saturates as d_k grows; with it, it does not") {
  const std::size_t n_q = 256, n_k = 64;
  auto run = [&](std::size_t d_k) {
    std::vector<float> dot(n_q * n_k), ws(n_q * n_k), wu(n_q * n_k), work(scaling_workspace_floats(d_k, n_q, n_k));
    return scaling_experiment(d_k, n_q, n_k, 7, dot.data(), ws.data(), wu.data(), work.data());
  };
  const ScalingStats small = run(4), big = run(512);
  CHECK(big.variance_raw == doctest::Approx(512).epsilon(0.1));   // variance grows like d_k
  CHECK(big.variance_scaled == doctest::Approx(1).epsilon(0.1));  // and scaling brings it back to ~1
  CHECK(big.max_weight_unscaled > 0.8);                           // near one-hot
  CHECK(big.entropy_unscaled < 0.5 * small.entropy_unscaled);
  CHECK(std::fabs(big.entropy_scaled - small.entropy_scaled) < 0.5);
}
