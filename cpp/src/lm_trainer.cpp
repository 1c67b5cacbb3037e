#include "headlab/lm.hpp"

#include <cmath>

namespace headlab {

LmTrainConfig lm_train_defaults(const LmTaskSpec& spec, std::uint64_t seed) {
  const LmDefaults& d = spec.defaults;
  LmTrainConfig c;
  c.num_layers = d.num_layers;
  c.num_heads = d.num_heads;
  c.d_model = d.d_model;
  c.mlp = d.mlp;
  c.learning_rate = d.learning_rate;
  c.batch_size = d.batch_size;
  c.warmup_steps = d.warmup_steps;
  c.adam_beta1 = d.adam_beta1;
  c.adam_beta2 = d.adam_beta2;
  c.seed = seed;
  return c;
}

LmConfig LmTrainer::model_config(const LmTaskSpec& spec, const LmTrainConfig& t) {
  LmConfig c;
  c.vocab = spec.vocab;
  c.seq_len = spec.seq_len;
  c.d_model = t.d_model;
  c.num_heads = t.num_heads;
  c.num_layers = t.num_layers;
  c.mlp = t.mlp;
  c.max_batch = t.batch_size;
  return c;
}

LmTrainer::LmTrainer(const LmTaskSpec& spec, const LmTrainConfig& config)
    : spec_(spec),
      config_(config),
      model_(model_config(spec, config)),
      optimizer_(OptimizerKind::adam, model_.num_params(), config.learning_rate),
      data_rng_(config.seed, 2),
      batch_(spec.seq_len, config.batch_size) {
  optimizer_.beta1 = config.adam_beta1;
  optimizer_.beta2 = config.adam_beta2;
  Rng init_rng(config.seed, 1);
  model_.init(init_rng);
}

LmResult LmTrainer::step(std::size_t n) {
  LmResult last;
  for (std::size_t i = 0; i < n && diverged_at_ == 0; ++i) {
    const std::uint64_t t = optimizer_.steps() + 1;
    float lr = config_.learning_rate;
    if (t <= config_.warmup_steps) lr *= float(t) / float(config_.warmup_steps);
    optimizer_.set_learning_rate(lr);
    LmResult r;
    const Divergence why = optimizer_.step_or_rollback(data_rng_, model_.params(), model_.grads(), [&] {
      generate_lm_batch(spec_, data_rng_, config_.batch_size, batch_);
      r = runner_ ? runner_->run(model_, batch_, config_.batch_size) : model_.forward(batch_, config_.batch_size, true);
      return r.loss;
    });
    if (why != Divergence::none) {
      diverged_at_ = optimizer_.steps() + 1;
      divergence_ = why;
      break;
    }
    last = r;
  }
  return last;
}

LmEval LmTrainer::evaluate(std::size_t examples) {
  Rng held_out(1000 + config_.seed, 3);
  return evaluate_lm(model_, spec_, held_out, examples);
}

LmHeadReport LmTrainer::heads(std::size_t examples) {
  Rng held_out(1000 + config_.seed, 5);
  return detect_heads(model_, spec_, held_out, examples);
}

}  // namespace headlab
