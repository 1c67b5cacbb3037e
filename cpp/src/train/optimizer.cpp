#include "headlab/train/optimizer.hpp"

#include <algorithm>
#include <cmath>

#include "file_io.hpp"

namespace headlab {

Optimizer::Optimizer(OptimizerKind kind, std::size_t n, float learning_rate)
    : kind_(kind), n_(n), lr_(learning_rate) {
  if (kind_ == OptimizerKind::adam) {
    m_.assign(n, 0.0f);
    v_.assign(n, 0.0f);
  }
}

void Optimizer::reset() {
  t_ = 0;
  std::fill(m_.begin(), m_.end(), 0.0f);
  std::fill(v_.begin(), v_.end(), 0.0f);
}

std::string divergence_message(Divergence why, std::uint64_t step, float learning_rate, const char* optimizer,
                               const char* who) {
  const char* what = why == Divergence::loss
                         ? "the loss became non-finite"
                         : "the update would have made a parameter non-finite or larger than 1e4 in magnitude";
  return "training diverged at step " + std::to_string(step) + " with learningRate " + file_io::format_float(learning_rate) + " (" + optimizer +
         "): " + what + "; the " + who + " kept its state from step " + std::to_string(step - 1) +
         " — lower learningRate";
}

bool Optimizer::step(float* params, const float* grads, Path path) {
  if (kind_ == OptimizerKind::sgd) {
    if (!sgd_update_ok(path, params, grads, n_, lr_, kMaxParam)) return false;
    ++t_;
    sgd_update(path, params, grads, n_, lr_);
    return true;
  }
  // Bias corrections in double: beta^t is tiny-exponent safe and identical on every path.
  const double t = double(t_ + 1);
  AdamArgs a;
  a.n = n_;
  a.p = params;
  a.g = grads;
  a.m = m_.data();
  a.v = v_.data();
  a.lr = lr_;
  a.beta1 = beta1;
  a.beta2 = beta2;
  a.eps = eps;
  a.c1 = float(1.0 / (1.0 - std::pow(double(beta1), t)));
  a.c2 = float(1.0 / (1.0 - std::pow(double(beta2), t)));
  if (!adam_update_ok(path, a, kMaxParam)) return false;
  ++t_;
  adam_update(path, a);
  return true;
}

}  // namespace headlab
