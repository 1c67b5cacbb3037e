// The training layer's optimizer and divergence rule, shared by every model
// that trains (the one-layer Model through Trainer, LanguageModel through
// LmTrainer): Adam or SGD over one flat parameter array, a step refused as a
// whole when it would diverge, and the message both trainers give.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "headlab/kernels.hpp"  // Path
#include "headlab/train/rng.hpp"

namespace headlab {

enum class OptimizerKind { adam, sgd };

// Largest magnitude a parameter may take, in training and in a model file.
// Trained models hold |w| < 3 (two-relations, Adam at 0.003-0.03 and SGD up to
// 1, 5000 steps). Adam moves a weight by at most about 3.2 lr per step
// (lr (1 - beta1) / sqrt(1 - beta2)) and in practice by about lr: at the largest
// rate the API accepts (10), runaway training takes ~5000 steps to get here, with
// the loss near 1e5 all the way. So a weight beyond 1e4 is divergence or a
// damaged file (one flipped exponent bit turns 0.5 into ~1.7e38).
constexpr float kMaxParam = 1e4f;

// Why a training step was refused (Trainer, LmTrainer): its loss was not
// finite, or its update would have made a parameter (or an Adam moment)
// non-finite, or |p| >= kMaxParam.
enum class Divergence { none, loss, update };

// What both trainers say when `step` diverged: "training diverged at step 5 with
// learningRate 10 (sgd): the loss became non-finite; the trainer kept its state
// from step 4 — lower learningRate". `who` names the holder ("trainer", "model").
std::string divergence_message(Divergence why, std::uint64_t step, float learning_rate, const char* optimizer,
                               const char* who);

// Adam (Kingma & Ba) with bias correction, or plain SGD, over a flat array
// (the update kernels adam_update_* and sgd_update_* are in kernels.hpp).
// Both trainers (the one-layer Trainer and the language models' LmTrainer)
// update through it, so both refuse a diverging step the same way.
class Optimizer {
 public:
  Optimizer(OptimizerKind kind, std::size_t n, float learning_rate);
  // One update, checked before it is applied: when it would make a parameter
  // non-finite or |p| >= kMaxParam, or an Adam moment non-finite, nothing
  // changes (parameters, moments, step count) and it returns false.
  bool step(float* params, const float* grads, Path path = Path::simd);
  // One training step, taken whole or not at all: `run` draws its batch from
  // `data`, runs it forward and backward (gradients into `grads`) and returns
  // its loss; then step() updates. When the loss is not finite or step()
  // refuses the update, `data` is set back to where it stood, so the next try
  // draws the same batch, and nothing else has changed. Returns why the step
  // was refused, or Divergence::none when it was taken. Both trainers' loops
  // are this call.
  template <typename Run>
  Divergence step_or_rollback(Rng& data, float* params, const float* grads, Run&& run) {
    const std::uint64_t data_state = data.state();
    const float loss = run();
    const Divergence why = !std::isfinite(loss)          ? Divergence::loss
                           : !step(params, grads) ? Divergence::update
                                                  : Divergence::none;
    if (why != Divergence::none) data.set_state(data_state);
    return why;
  }
  void reset();  // zero moments and step count
  OptimizerKind kind() const { return kind_; }
  float learning_rate() const { return lr_; }
  void set_learning_rate(float lr) { lr_ = lr; }  // e.g. a warm-up schedule
  std::uint64_t steps() const { return t_; }
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;

 private:
  OptimizerKind kind_;
  std::size_t n_;
  float lr_;
  std::uint64_t t_ = 0;
  std::vector<float> m_, v_;
};

}  // namespace headlab
