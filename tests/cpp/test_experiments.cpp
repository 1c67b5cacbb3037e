// The scaling experiment against a double-precision recomputation from the
// same random draws, and the statistical facts the demo shows.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
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
    // The statistics the demo prints, from the double-precision values above:
    // population variance of the dot products (raw and / sqrt(d_k)), and the
    // mean over query rows of each softmax's entropy and largest weight.
    auto variance = [&](double scale) {
      double mean = 0, sq = 0;
      for (double x : want_dot) mean += x * scale;
      mean /= double(n);
      for (double x : want_dot) sq += (x * scale - mean) * (x * scale - mean);
      return sq / double(n);
    };
    auto row_stats = [&](const std::vector<double>& w, double& entropy, double& max_weight) {
      entropy = max_weight = 0;
      for (std::size_t i = 0; i < n_q; ++i) {
        double mx = 0;
        for (std::size_t j = 0; j < n_k; ++j) {
          const double x = w[i * n_k + j];
          if (x > 0) entropy -= x * std::log(x);
          mx = std::max(mx, x);
        }
        max_weight += mx;
      }
      entropy /= double(n_q);
      max_weight /= double(n_q);
    };
    double ent_s, max_s, ent_u, max_u;
    row_stats(want_ws, ent_s, max_s);
    row_stats(want_wu, ent_u, max_u);
    CHECK(s.variance_raw == doctest::Approx(variance(1.0)).epsilon(1e-5));
    CHECK(s.variance_scaled == doctest::Approx(variance(1.0 / std::sqrt(double(d_k)))).epsilon(1e-5));
    CHECK(std::fabs(s.entropy_scaled - ent_s) <= 1e-6 + 1e-5 * ent_s);
    CHECK(std::fabs(s.entropy_unscaled - ent_u) <= 1e-6 + 1e-5 * ent_u);
    CHECK(std::fabs(s.max_weight_scaled - max_s) <= 1e-6 + 1e-5 * max_s);
    CHECK(std::fabs(s.max_weight_unscaled - max_u) <= 1e-6 + 1e-5 * max_u);
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

TEST_CASE("heads trial: refuses bad configs with a message and nothing else") {
  HeadsTrialConfig c;
  c.num_heads = 3;  // does not divide 16
  HeadsTrial r = heads_trial(c);
  CHECK(r.error.find("divide dModel") != std::string::npos);
  CHECK(r.d_k == 0);
  c.num_heads = 4;
  c.task = "sorting";
  CHECK(heads_trial(c).error.find("known: two-relations") != std::string::npos);
  c.task = "lookup";
  c.steps = kMaxTrialSteps + 1;
  CHECK(heads_trial(c).error.find("steps must be at most") != std::string::npos);
  c.steps = 0;
  c.eval_examples = 0;
  CHECK(heads_trial(c).error.find("evalExamples") != std::string::npos);
}

TEST_CASE("heads trial: deterministic, and a head owns at most one relation") {
  HeadsTrialConfig c;
  c.num_heads = 2;
  c.steps = 60;
  c.eval_examples = 200;
  const HeadsTrial a = heads_trial(c), b = heads_trial(c);
  REQUIRE(a.error.empty());
  CHECK(a.d_k == 8);
  CHECK(a.num_relations == 4);
  CHECK(a.loss == b.loss);
  CHECK(a.accuracy == b.accuracy);
  for (std::size_t k = 0; k < 4; ++k) {
    CHECK(a.relation_accuracy[k] == b.relation_accuracy[k]);
    CHECK(a.best_share[k] == b.best_share[k]);
    CHECK((a.best_share[k] >= 0 && a.best_share[k] <= 1.0001f));
  }
  CHECK(a.relations_with_own_head <= 2);
}

// The trade-off the choosing-h page shows, on one seed (the page averages three):
// h = 1 must blend four relations in one softmax; h = 4 (d_k = 4) gives each its own
// head; h = 16 (d_k = 1) still finds positions but no head can find the asked colour,
// because a one-number query times a one-number key can only prefer the extreme keys.
TEST_CASE("heads trial: on lookup at d_model 16, one head blends and d_k = 1 cannot match by content") {
  HeadsTrialConfig c;
  c.seed = 2;
  c.eval_examples = 500;
  c.num_heads = 1;
  const HeadsTrial one = heads_trial(c);
  c.num_heads = 4;
  const HeadsTrial four = heads_trial(c);
  c.num_heads = 16;
  const HeadsTrial sixteen = heads_trial(c);
  REQUIRE((one.error.empty() && four.error.empty() && sixteen.error.empty()));
  MESSAGE("accuracy h=1 " << one.accuracy << ", h=4 " << four.accuracy << ", h=16 " << sixteen.accuracy);
  CHECK(one.relations_with_own_head <= 1);
  CHECK(one.accuracy < 0.5f);
  CHECK(four.relations_with_own_head == 4);
  CHECK(four.accuracy > 0.9f);
  CHECK(sixteen.best_share[0] < kOwnHeadShare);
  CHECK(sixteen.relation_accuracy[0] < four.relation_accuracy[0] - 0.2f);
  for (std::size_t k = 1; k < 4; ++k) CHECK(sixteen.relation_accuracy[k] > 0.95f);
  CHECK(sixteen.accuracy < four.accuracy - 0.2f);
}
