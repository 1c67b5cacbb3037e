// Optimiser update kernels (kernels.hpp): Adam and SGD, simd against scalar,
// and Adam's first step against its closed form; and the training layer's draw_index.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "headlab/kernels.hpp"
#include "headlab/tasks.hpp"  // Rng

using namespace headlab;

TEST_CASE("optimizers: simd updates match scalar ones; adam's first step is lr * sign(g)") {
  std::vector<float> p(37), g(37);
  Rng rng(5);
  for (std::size_t i = 0; i < p.size(); ++i) {
    p[i] = rng.normal();
    g[i] = rng.normal();
  }
  std::vector<float> p1 = p, p2 = p, m1(37, 0.0f), v1(37, 0.0f), m2(37, 0.0f), v2(37, 0.0f);
  for (int t = 1; t <= 3; ++t) {
    const float c1 = float(1.0 / (1.0 - std::pow(0.9, t))), c2 = float(1.0 / (1.0 - std::pow(0.999, t)));
    adam_update_ref({37, p1.data(), g.data(), m1.data(), v1.data(), 0.01f, 0.9f, 0.999f, 1e-8f, c1, c2});
    adam_update_simd({37, p2.data(), g.data(), m2.data(), v2.data(), 0.01f, 0.9f, 0.999f, 1e-8f, c1, c2});
    if (t == 1)
      for (std::size_t i = 0; i < p.size(); ++i)
        CHECK(p1[i] == doctest::Approx(p[i] - 0.01f * (g[i] > 0 ? 1 : -1)).epsilon(1e-5));
  }
  for (std::size_t i = 0; i < p.size(); ++i) CHECK(p2[i] == doctest::Approx(p1[i]).epsilon(1e-6));
  std::vector<float> s1 = p, s2 = p;
  sgd_update_ref(s1.data(), g.data(), 37, 0.1f);
  sgd_update_simd(s2.data(), g.data(), 37, 0.1f);
  for (std::size_t i = 0; i < p.size(); ++i) CHECK(s2[i] == doctest::Approx(p[i] - 0.1f * g[i]));
  // Not bit-exact: with FMA hardware either path may fuse lr * g into the subtraction.
  for (std::size_t i = 0; i < p.size(); ++i) CHECK(s1[i] == doctest::Approx(s2[i]).epsilon(1e-6));
}

// draw_index, the samplers' draw: each index with probability w[i] / sum(w), a zero
// weight never (even beside one that holds almost all the weight), -1 when nothing can be drawn.
TEST_CASE("draw_index: frequencies follow the weights; zero weights are never drawn") {
  const double w[5] = {0.5, 0.0, 2.0, 1.5, 0.0};
  const std::size_t n = 200000;
  std::size_t counts[5] = {};
  Rng rng(3, 7);
  for (std::size_t k = 0; k < n; ++k) {
    const std::int64_t i = draw_index(w, 5, rng);
    REQUIRE(i >= 0);
    REQUIRE(i < 5);
    ++counts[i];
  }
  CHECK(counts[1] == 0);
  CHECK(counts[4] == 0);
  for (std::size_t i : {0u, 2u, 3u}) {
    const double want = w[i] / 4.0, sd = std::sqrt(want * (1 - want) / double(n));
    CHECK(std::fabs(double(counts[i]) / double(n) - want) < 5 * sd);
  }
  const double tiny[3] = {0.0, 1e-300, 0.0};
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    Rng r(seed);
    CHECK(draw_index(tiny, 3, r) == 1);
  }
  const double none[2] = {0.0, 0.0};
  const double inf[2] = {1.0, INFINITY};
  CHECK(draw_index(none, 2, rng) == -1);
  CHECK(draw_index(inf, 2, rng) == -1);
}
