// Measurements of the language model, not tests: steps per second and the
// calibration over seeds quoted in tests/cpp/test_lm_training.cpp's header.
// Part of headlab_measure (bench/native/CMakeLists.txt); run one with
//   headlab_measure -tc="measure: lm cricket*"
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>

#include "lm_runs.hpp"

using namespace headlab;

TEST_CASE("measure: lm training steps per second") {
  for (bool mlp : {false, true}) {
    RunSpec rs;
    rs.steps = 300;
    rs.mlp = mlp;
    double best = 0;
    for (int rep = 0; rep < 3; ++rep) {
      const RunResult r = train(rs);
      best = std::max(best, double(rs.steps) / r.seconds);
    }
    std::printf("induction 2 layers x 4 heads d 32 batch 64 mlp %d: %.0f steps/s\n", int(mlp), best);
  }
}

TEST_CASE("measure: lm induction calibration, 5 seeds") {
  for (std::size_t layers : {std::size_t{2}, std::size_t{1}})
    for (std::uint64_t seed = 1; seed <= 5; ++seed) induction_run(layers, seed);
}

TEST_CASE("measure: lm induction curve") {
  RunSpec rs;
  rs.eval_every = 250;
  rs.verbose = true;
  RunResult r = train(rs);
  std::printf("accuracy %.3f\n", r.eval.accuracy);
}

TEST_CASE("measure: lm cricket, 5 seeds") {
  const LmTaskSpec& spec = *find_lm_task("cricket");
  for (bool mlp : {false, true})
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      RunSpec rs;
      rs.task = "cricket";
      rs.mlp = mlp;
      rs.seed = seed;
      RunResult r = train(rs);
      Rng probe(78, 5);
      const LmHeadReport rep = detect_heads(r.model(), spec, probe, 500);
      print_report(mlp ? "cricket mlp" : "cricket", seed, r, rep);
      std::printf("  SUMMARY seed %llu mlp %d: acc %.3f coref %.3f fixed %.3f\n", (unsigned long long)seed,
                  int(mlp), r.eval.accuracy, rep.best_coreference, rep.best_fixed_position);
    }
}
