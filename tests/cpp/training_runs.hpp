// Trainers of the one-layer model and a training loop with early stopping,
// shared by test_training.cpp and bench/native/measure_training.cpp.
#pragma once

#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "headlab/trainer.hpp"

namespace {

using namespace headlab;

constexpr std::size_t kBudget = 3000, kEvery = 250, kHeldOut = 1000;

inline std::unique_ptr<Trainer> make(const std::string& task, std::size_t heads, std::size_t d_model,
                                     std::uint64_t seed, float lr = 0.003f, std::size_t batch = 64) {
  TrainerConfig c;
  c.task = task;
  c.num_heads = heads;
  c.d_model = d_model;
  c.seed = seed;
  c.learning_rate = lr;
  c.batch_size = batch;
  TrainerOrError r = Trainer::create(c);
  REQUIRE_MESSAGE(r.trainer, r.error);
  return std::move(r.trainer);
}

// Trains until held-out accuracy >= 0.99 (checked every kEvery steps) or the budget runs out.
inline EvalResult train_until(Trainer& t, std::size_t budget, bool stop_early = true) {
  EvalResult e;
  while (t.steps() < budget) {
    t.step(kEvery);
    e = t.evaluate(kHeldOut);
    if (stop_early && e.accuracy >= 0.99f) break;
  }
  return e;
}

inline void print_metrics(const char* label, std::uint64_t seed, const Trainer& t, const EvalResult& e,
                          const std::vector<HeadMetrics>& m) {
  std::printf("%s seed %llu: %llu steps, held-out accuracy %.3f, loss %.4f; query-row share per head:", label,
              (unsigned long long)seed, (unsigned long long)t.steps(), e.accuracy, e.loss);
  for (std::size_t i = 0; i < m.size(); ++i) {
    std::printf(" h%zu(", i);
    for (std::size_t r = 0; r < t.task().num_relations; ++r)
      std::printf("%s%.2f", r ? "/" : "", m[i].relation_share[r]);
    std::printf(")");
  }
  std::printf("\n");
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace
