// Small numerical experiments the demos show, computed here so the UI never
// re-implements the maths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "headlab/tasks.hpp"

namespace headlab {

// Why scores are divided by sqrt(d_k): q and k with i.i.d. N(0, 1) entries,
// drawn from Rng(seed).normal(): all of q [n_q, d_k] first, then k [n_k, d_k].
//   dot [n_q, n_k]               raw q.k, variance about d_k
//   weights_scaled [n_q, n_k]    row softmax of q.k / sqrt(d_k)
//   weights_unscaled [n_q, n_k]  row softmax of q.k
// workspace: (n_q + n_k) * d_k + d_k * n_k floats.
struct ScalingStats {
  double variance_raw = 0, variance_scaled = 0;     // of the dot products
  double entropy_scaled = 0, entropy_unscaled = 0;  // mean row entropy, nats
  double max_weight_scaled = 0, max_weight_unscaled = 0;  // mean row maximum
};
ScalingStats scaling_experiment(std::size_t d_k, std::size_t n_q, std::size_t n_k, std::uint64_t seed,
                                float* dot, float* weights_scaled, float* weights_unscaled,
                                float* workspace);
std::size_t scaling_workspace_floats(std::size_t d_k, std::size_t n_q, std::size_t n_k);

// Choosing h at a fixed d_model: trains the one-layer trainer (trainer.hpp) on
// `task` with num_heads heads of d_k = d_model / num_heads for `steps` steps
// (Adam, the trainer's default learning rate and batch), then measures it on
// `eval_examples` held-out examples. Both sides of the trade-off show:
//   relations_with_own_head  how many of the task's R relations some head puts at
//                            least half of its attention on (more heads: more of them)
//   relation_accuracy[r]     per relation; on "lookup", relation 0 is found by
//                            content (query-key matching), which a tiny d_k cannot do
// Deterministic: the same config gives the same numbers in a given build.
// Defined in heads_experiment.cpp, so a module that binds only the scaling
// experiment does not link the trainer.
struct HeadsTrialConfig {
  std::string task = "lookup";
  std::size_t d_model = 16;
  std::size_t num_heads = 4;
  std::uint64_t seed = 1;
  std::size_t steps = 3000;
  std::size_t eval_examples = 1000;
};
constexpr std::size_t kMaxTrialSteps = 20000, kMaxTrialExamples = 20000;
constexpr float kOwnHeadShare = 0.5f;  // a relation has its own head above this share

struct HeadsTrial {
  std::string error;  // "" or what was wrong with the config; nothing else is set then
  std::size_t d_k = 0, num_relations = 0, relations_with_own_head = 0;
  float loss = 0, accuracy = 0;  // held-out; accuracy: all R answers right
  float relation_accuracy[kMaxRelations] = {};
  float best_share[kMaxRelations] = {};  // largest share any one head gives relation r
  bool diverged = false;
};
HeadsTrial heads_trial(const HeadsTrialConfig& config);

}  // namespace headlab
