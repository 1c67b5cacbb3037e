// The language model's data-parallel training step (headlab/lm_parallel.hpp):
// native builds only (the wasm test build has no -pthread; CMakeLists.txt
// leaves this file out of it).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "headlab/lm.hpp"
#include "headlab/lm_parallel.hpp"
#include "headlab/lm_tasks.hpp"

using namespace headlab;

namespace {

float max_abs_diff(const float* a, const float* b, std::size_t n) {
  float m = 0;
  for (std::size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

float max_abs(const float* a, std::size_t n) {
  float m = 0;
  for (std::size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(a[i]));
  return m;
}

LmTrainConfig induction_config(std::size_t batch, bool mlp) {
  LmTrainConfig c = lm_train_defaults(*find_lm_task("induction"), 4);
  c.batch_size = batch;
  c.mlp = mlp;
  return c;
}

// One step with `threads` against one without a runner: loss, counts, every
// gradient and every parameter after the optimizer step.
void check_one_step(std::size_t batch, std::size_t threads, bool mlp) {
  const LmTaskSpec& spec = *find_lm_task("induction");
  const LmTrainConfig c = induction_config(batch, mlp);
  LmTrainer one(spec, c), many(spec, c);
  REQUIRE(set_lm_threads(many, threads) == "");
  REQUIRE(many.batch_runner() != nullptr);
  const LmResult a = one.step(1), b = many.step(1);
  CHECK(one.steps() == 1);
  CHECK(many.steps() == 1);
  CHECK(a.predictions == b.predictions);
  CHECK(a.correct == b.correct);
  // Tolerances: the loss is a mean of ~1e3 terms near 3.6 (float: ~1e-7
  // relative), allowed 1e-5 relative; gradients are the same sums in another
  // order, allowed 1e-5 of the largest gradient. Parameters: Adam's first step
  // moves each by lr_1 g / (|g| + eps), lr_1 = lr / warmup_steps (1e-5 here),
  // so where |g| is near eps (1e-8) a rounding-size gradient difference moves
  // it by a visible fraction of lr_1: allowed 0.25 lr_1 overall, and 1e-6
  // where |g| >= 1e-5 (there the step is lr_1 sign(g) up to rounding).
  // Measured: printed below (batch 64: grads <= 5.3e-8 of max 0.03, params
  // <= 3e-7 overall).
  const std::size_t np = one.model().num_params();
  const float* g1 = one.model().grads();
  const float gmax = max_abs(g1, np);
  const float dg = max_abs_diff(g1, many.model().grads(), np);
  const float dp = max_abs_diff(one.model().params(), many.model().params(), np);
  float dp_big = 0;
  for (std::size_t i = 0; i < np; ++i)
    if (std::fabs(g1[i]) >= 1e-5f)
      dp_big = std::max(dp_big, std::fabs(one.model().params()[i] - many.model().params()[i]));
  const float lr_1 = c.learning_rate / float(c.warmup_steps);
  std::printf("lm parallel: batch %zu threads %zu mlp %d: loss %.9g vs %.9g, max |grad diff| %.3g (max |grad| %.3g), "
              "max |param diff| %.3g (%.3g where |g| >= 1e-5)\n",
              batch, threads, int(mlp), double(a.loss), double(b.loss), double(dg), double(gmax), double(dp),
              double(dp_big));
  CHECK(std::fabs(a.loss - b.loss) <= 1e-5f * std::fabs(a.loss));
  CHECK(gmax > 0);
  CHECK(dg <= 1e-5f * gmax);
  CHECK(dp <= 0.25f * lr_1);
  CHECK(dp_big <= 1e-6f);
}

}  // namespace

TEST_CASE("lm parallel: split_batch covers the batch in slices differing by at most 1") {
  for (std::size_t n : {1, 2, 7, 64})
    for (std::size_t k : {1, 2, 3, 5}) {
      const std::vector<LmSlice> s = split_batch(n, k);
      REQUIRE(s.size() == k);
      CHECK(s.front().begin == 0);
      CHECK(s.back().end == n);
      for (std::size_t i = 0; i < k; ++i) {
        if (i) CHECK(s[i].begin == s[i - 1].end);
        const std::size_t len = s[i].end - s[i].begin;
        CHECK(len >= n / k);
        CHECK(len <= n / k + 1);
      }
    }
}

TEST_CASE("lm parallel: one step with 2 and 3 threads equals the one-thread step within rounding") {
  for (bool mlp : {false, true})
    for (std::size_t threads : {2, 3}) check_one_step(64, threads, mlp);
}

TEST_CASE("lm parallel: batch sizes not divisible by the threads, and one sequence per thread") {
  check_one_step(7, 2, false);
  check_one_step(7, 3, true);
  check_one_step(5, 5, false);
}

TEST_CASE("lm parallel: the runner with fewer sequences than threads leaves the idle slices out") {
  const LmTaskSpec& spec = *find_lm_task("induction");
  LmConfig mc = LmTrainer::model_config(spec, induction_config(4, true));
  LanguageModel one(mc), many(mc);
  Rng init(9, 1);
  one.init(init);
  std::copy(one.params(), one.params() + one.num_params(), many.params());
  one.set_head_enabled(1, 2, false);
  many.set_head_enabled(1, 2, false);  // the replicas copy the switches
  ParallelLmRunner runner(mc, 3);
  CHECK(runner.threads() == 3);
  LmBatch batch(spec.seq_len, 4);
  Rng data(9, 2);
  generate_lm_batch(spec, data, 4, batch);
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{4}}) {
    const LmResult a = one.forward(batch, n, true);
    const LmResult b = runner.run(many, batch, n);
    CHECK(a.predictions == b.predictions);
    CHECK(a.correct == b.correct);
    CHECK(std::fabs(a.loss - b.loss) <= 1e-5f * std::fabs(a.loss));
    const float gmax = max_abs(one.grads(), one.num_params());
    CHECK(max_abs_diff(one.grads(), many.grads(), one.num_params()) <= 1e-5f * gmax);
  }
  CHECK_THROWS_AS(runner.run(many, batch, 5), std::invalid_argument);
  CHECK_THROWS_AS(runner.run(many, batch, 0), std::invalid_argument);
}

TEST_CASE("lm parallel: 300 induction steps with 2 threads follow the one-thread loss curve") {
  const LmTaskSpec& spec = *find_lm_task("induction");
  const LmTrainConfig c = lm_train_defaults(spec, 4);
  LmTrainer one(spec, c), two(spec, c);
  REQUIRE(set_lm_threads(two, 2) == "");
  float worst = 0, first = 0, last1 = 0, last2 = 0;
  for (int s = 0; s < 300; ++s) {
    const float a = one.step(1).loss, b = two.step(1).loss;
    if (s == 0) first = a;
    last1 = a, last2 = b;
    worst = std::max(worst, std::fabs(a - b));
  }
  std::printf("lm parallel: 300 steps, 2 threads: loss %.6f -> %.6f (1 thread) vs %.6f, max |loss diff| %.3g\n",
              double(first), double(last1), double(last2), double(worst));
  CHECK(one.steps() == 300);
  CHECK(two.steps() == 300);
  CHECK(two.diverged_at() == 0);
  CHECK(last1 < first);  // it learns
  CHECK(worst <= 1e-3f);
  const std::size_t np = one.model().num_params();
  CHECK(max_abs_diff(one.model().params(), two.model().params(), np) <= 1e-3f);
}

TEST_CASE("lm parallel: threads outside 1..batch size are refused with a message naming them") {
  const LmTaskSpec& spec = *find_lm_task("induction");
  LmTrainer t(spec, induction_config(7, false));
  for (std::size_t bad : {std::size_t{0}, std::size_t{8}, std::size_t{100}}) {
    const std::string e = set_lm_threads(t, bad);
    CHECK(e.find("threads must be 1..7") != std::string::npos);
    CHECK(e.find(std::to_string(bad)) != std::string::npos);
    CHECK(t.batch_runner() == nullptr);  // unchanged
  }
  CHECK(lm_threads_error(7, 7) == "");
  CHECK(lm_threads_error(8, 7) != "");
  LmConfig mc = t.model().config();
  CHECK_THROWS_AS(ParallelLmRunner(mc, 8), std::invalid_argument);
  CHECK_THROWS_AS(ParallelLmRunner(mc, 0), std::invalid_argument);
}

TEST_CASE("lm parallel: 1 thread is today's code path, bit for bit; runners are replaced and joined") {
  const LmTaskSpec& spec = *find_lm_task("induction");
  const LmTrainConfig c = induction_config(16, false);
  LmTrainer plain(spec, c), switched(spec, c);
  REQUIRE(set_lm_threads(switched, 3) == "");
  REQUIRE(set_lm_threads(switched, 2) == "");  // the 3-thread runner is destroyed (its threads joined)
  REQUIRE(set_lm_threads(switched, 1) == "");
  CHECK(switched.batch_runner() == nullptr);
  for (int s = 0; s < 5; ++s) CHECK(plain.step(1).loss == switched.step(1).loss);
  const std::size_t np = plain.model().num_params();
  CHECK(std::equal(plain.model().params(), plain.model().params() + np, switched.model().params()));
  {
    LmTrainer scoped(spec, c);
    REQUIRE(set_lm_threads(scoped, 4) == "");
    scoped.step(2);
  }  // ~LmTrainer ends the runner's threads (a leak or a running thread would fail under ASan)
}

TEST_CASE("lm parallel: the divergence rule holds on the summed update (step not taken, batch drawn again)") {
  const LmTaskSpec& spec = *find_lm_task("induction");
  LmTrainConfig c = lm_train_defaults(spec, 3);
  c.num_layers = 1;
  c.batch_size = 8;
  c.warmup_steps = 0;
  c.learning_rate = 3e4f;  // Adam moves each weight by about lr on step 1: past kMaxParam
  LmTrainer one(spec, c), two(spec, c);
  REQUIRE(set_lm_threads(two, 2) == "");
  const std::vector<float> before(two.model().params(), two.model().params() + two.model().num_params());
  const std::uint64_t data = two.data_state();
  one.step(5);
  two.step(5);
  CHECK(one.diverged_at() == 1);
  CHECK(two.diverged_at() == 1);
  CHECK(two.steps() == 0);
  CHECK(two.divergence() == Divergence::update);
  CHECK(two.data_state() == data);
  CHECK(std::equal(before.begin(), before.end(), two.model().params()));
}
