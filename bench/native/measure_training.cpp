// Measurements of the one-layer trainer, not tests: steps per second and
// accuracy / attention share per task and number of heads. Part of
// headlab_measure (bench/native/CMakeLists.txt); run one with
//   headlab_measure -tc="measure: pronoun*"
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "headlab/tasks.hpp"
#include "training_runs.hpp"

using namespace headlab;

TEST_CASE("measure: training steps per second") {
  struct Preset {
    const char* task;
    std::size_t heads, d_model, batch;
  };
  for (const Preset& p : {Preset{"two-relations", 2, 16, 32}, Preset{"two-relations", 2, 16, 64},
                          Preset{"three-relations", 3, 24, 64}, Preset{"four-relations", 4, 16, 64}}) {
    double best = 0;
    for (int rep = 0; rep < 3; ++rep) {
      auto t = make(p.task, p.heads, p.d_model, 1, 0.003f, p.batch);
      t->step(50);  // warm up
      const auto t0 = std::chrono::steady_clock::now();
      t->step(2000);
      best = std::max(best, 2000.0 / seconds_since(t0));
    }
    std::printf("%-16s h=%zu d=%zu batch %zu: %.0f steps/s (%.0f examples/s)\n", p.task, p.heads, p.d_model,
                p.batch, best, best * double(p.batch));
  }
}

TEST_CASE("measure: accuracy and attention share, h = 1 against h = R") {
  struct Row {
    const char* task;
    std::size_t d_model;
  };
  for (const Row& row : {Row{"two-relations", 16}, Row{"three-relations", 24}, Row{"four-relations", 16}}) {
    const std::size_t rel = find_task(row.task)->num_relations;
    for (std::size_t heads : {std::size_t{1}, rel}) {
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        auto t = make(row.task, heads, row.d_model, seed);
        for (std::size_t budget : {kBudget, 2 * kBudget}) {
          const EvalResult e = train_until(*t, budget, false);
          print_metrics(row.task, seed, *t, e, t->head_metrics(kHeldOut));
        }
      }
    }
  }
}

TEST_CASE("measure: pronoun task") {
  for (std::size_t d : {std::size_t{16}, std::size_t{8}})
    for (std::size_t heads : {std::size_t{1}, std::size_t{2}})
      for (std::uint64_t seed = 1; seed <= 5; ++seed) {
        auto t = make("pronoun", heads, d, seed);
        const EvalResult e = train_until(*t, 6000, false);
        std::printf("d=%zu ", d);
        print_metrics("pronoun", seed, *t, e, t->head_metrics(kHeldOut));
        std::printf("   per-relation accuracy %.3f/%.3f\n", e.relation_accuracy[0], e.relation_accuracy[1]);
      }
}
