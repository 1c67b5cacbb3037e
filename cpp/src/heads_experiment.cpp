#include <algorithm>

#include "headlab/experiments.hpp"
#include "headlab/trainer.hpp"

namespace headlab {

HeadsTrial heads_trial(const HeadsTrialConfig& config) {
  HeadsTrial r;
  if (config.steps > kMaxTrialSteps) {
    r.error = "steps must be at most " + std::to_string(kMaxTrialSteps) + ", got " + std::to_string(config.steps);
    return r;
  }
  if (config.eval_examples < 1 || config.eval_examples > kMaxTrialExamples) {
    r.error = "evalExamples must be between 1 and " + std::to_string(kMaxTrialExamples) + ", got " +
              std::to_string(config.eval_examples);
    return r;
  }
  TrainerConfig tc;
  tc.task = config.task;
  tc.d_model = config.d_model;
  tc.num_heads = config.num_heads;
  tc.seed = config.seed;
  TrainerOrError made = Trainer::create(tc);
  if (!made.trainer) {
    r.error = made.error;
    return r;
  }
  Trainer& t = *made.trainer;
  t.step(config.steps);
  r.diverged = t.diverged_at() != 0;
  const EvalResult e = t.evaluate(config.eval_examples);
  r.d_k = config.d_model / config.num_heads;
  r.num_relations = t.task().num_relations;
  r.loss = e.loss;
  r.accuracy = e.accuracy;
  const std::vector<HeadMetrics> m = t.head_metrics(config.eval_examples);
  for (std::size_t k = 0; k < r.num_relations; ++k) {
    r.relation_accuracy[k] = e.relation_accuracy[k];
    for (const HeadMetrics& head : m) r.best_share[k] = std::max(r.best_share[k], head.relation_share[k]);
    if (r.best_share[k] >= kOwnHeadShare) ++r.relations_with_own_head;
  }
  return r;
}

}  // namespace headlab
