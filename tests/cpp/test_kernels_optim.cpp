// Optimiser update kernels (kernels.hpp): Adam and SGD, simd against scalar,
// and Adam's first step against its closed form.
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
