// Training runs of the language model with each task's defaults, and their
// reports: shared by test_lm_training.cpp and the measurements in
// bench/native/measure_lm.cpp.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>

#include "headlab/lm.hpp"
#include "headlab/lm_tasks.hpp"

namespace {

using namespace headlab;

// The task's defaults (lm_train_defaults) unless a field here says otherwise.
struct RunSpec {
  const char* task = "induction";
  std::size_t layers = 0;  // 0: the task's default
  bool mlp = false;
  std::uint64_t seed = 1;
  std::size_t steps = 0;       // 0: the task's default
  std::size_t eval_every = 0;  // > 0: record accuracy every that many steps
  bool verbose = false;        // print the recorded accuracy
};

struct RunResult {
  std::unique_ptr<LmTrainer> trainer;
  LanguageModel& model() { return trainer->model(); }
  LmEval eval;
  std::size_t phase_step = 0;  // first recorded step with accuracy >= 0.5 (0 = never)
  double seconds = 0;
};

inline RunResult train(const RunSpec& r) {
  const LmTaskSpec& spec = *find_lm_task(r.task);
  LmTrainConfig c = lm_train_defaults(spec, r.seed);
  if (r.layers) c.num_layers = r.layers;
  c.mlp = r.mlp;
  const std::size_t steps = r.steps ? r.steps : spec.defaults.steps;
  RunResult out;
  out.trainer = std::make_unique<LmTrainer>(spec, c);
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t chunk = r.eval_every ? r.eval_every : steps;
  for (std::size_t step = 0; step < steps;) {
    const std::size_t n = std::min(chunk, steps - step);
    out.trainer->step(n);
    step += n;
    if (r.eval_every) {
      const LmEval e = out.trainer->evaluate(256);
      if (out.phase_step == 0 && e.accuracy >= 0.5f) out.phase_step = step;
      if (r.verbose) std::printf("    step %zu loss %.3f accuracy %.3f\n", step, e.loss, e.accuracy);
    }
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Rng held_out(999, 4);
  out.eval = evaluate_lm(out.trainer->model(), spec, held_out, 1000);
  return out;
}

struct Best {
  float prev = 0, ind = 0, dup = 0, first = 0, coref = 0;
  std::size_t prev_head = 0, ind_head = 0;
};

// Best score per kind within one layer.
inline Best best_in_layer(const LmHeadReport& rep, std::size_t layer) {
  Best b;
  for (std::size_t i = 0; i < rep.num_heads; ++i) {
    const LmHeadScores& s = rep.at(layer, i);
    if (s.prev_token > b.prev) b.prev = s.prev_token, b.prev_head = i;
    if (s.induction > b.ind) b.ind = s.induction, b.ind_head = i;
    b.dup = std::max(b.dup, s.duplicate);
    b.first = std::max(b.first, s.first_token);
    b.coref = std::max(b.coref, s.coreference);
  }
  return b;
}

inline void print_report(const char* what, std::uint64_t seed, const RunResult& r, const LmHeadReport& rep) {
  std::printf("%s seed %llu: accuracy %.3f next-token %.3f loss %.3f phase step %zu (%.1f s)\n", what,
              (unsigned long long)seed, r.eval.accuracy, r.eval.next_token, r.eval.loss, r.phase_step,
              r.seconds);
  for (std::size_t l = 0; l < rep.num_layers; ++l)
    for (std::size_t i = 0; i < rep.num_heads; ++i) {
      const LmHeadScores& s = rep.at(l, i);
      std::printf(
          "  L%zu H%zu prev %.2f ind %.2f dup %.2f first %.2f coref %.2f (it %.2f, was %.2f) peak %.2f %s\n",
          l + 1, i, s.prev_token, s.induction, s.duplicate, s.first_token, s.coreference,
          s.coreference_pronoun, s.coreference_next, s.position_peak, s.label);
    }
}

// Accuracy with every layer-2 head whose induction score passes `threshold` off.
inline float ablated_accuracy(LanguageModel& m, const LmHeadReport& rep, float threshold) {
  const LmTaskSpec& spec = *find_lm_task("induction");
  for (std::size_t i = 0; i < rep.num_heads; ++i)
    if (rep.at(1, i).induction >= threshold) m.set_head_enabled(1, i, false);
  Rng held_out(999, 4);
  const float acc = evaluate_lm(m, spec, held_out, 1000).accuracy;
  for (std::size_t i = 0; i < rep.num_heads; ++i) m.set_head_enabled(1, i, true);
  return acc;
}


struct InductionRun {
  float accuracy = 0, prev = 0, ind = 0, ablated = 0;
  std::size_t phase_step = 0;
  // accuracy >= 0.85, a layer-1 previous-token head >= 0.5, a layer-2 induction head >= 0.6
  bool formed = false;
};

inline InductionRun induction_run(std::size_t layers, std::uint64_t seed) {
  const LmTaskSpec& spec = *find_lm_task("induction");
  RunSpec rs;
  rs.layers = layers;
  rs.seed = seed;
  rs.eval_every = layers == 2 ? 100 : 0;
  RunResult r = train(rs);
  Rng probe(77, 5);
  const LmHeadReport rep = detect_heads(r.model(), spec, probe, 500);
  print_report(layers == 2 ? "induction 2 layers" : "induction 1 layer", seed, r, rep);
  InductionRun out;
  out.accuracy = r.eval.accuracy;
  out.phase_step = r.phase_step;
  out.prev = best_in_layer(rep, 0).prev;
  out.ind = best_in_layer(rep, layers - 1).ind;
  if (layers == 2) {
    out.ablated = ablated_accuracy(r.model(), rep, 0.3f);
    out.formed = out.accuracy >= 0.85f && out.prev >= 0.5f && out.ind >= 0.6f;
    std::printf("  SUMMARY seed %llu: acc %.3f phase %zu prev(L1) %.2f ind(L2) %.2f ablated %.3f\n",
                (unsigned long long)seed, out.accuracy, out.phase_step, out.prev, out.ind, out.ablated);
  } else {
    std::printf("  SUMMARY seed %llu: acc %.3f ind %.2f\n", (unsigned long long)seed, out.accuracy, out.ind);
  }
  return out;
}


}  // namespace
