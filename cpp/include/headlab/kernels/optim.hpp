// Optimiser updates, Adam and SGD, with their read-only divergence checks.
// Tests: tests/cpp/test_kernels_optim.cpp.
#pragma once

#include <cstddef>

#include "headlab/kernels/path.hpp"

namespace headlab {

// Adam over n parameters, in place (p, g, m, v all [n]):
//   m = beta1 m + (1 - beta1) g,  v = beta2 v + (1 - beta2) g^2,
//   p -= lr * (m * c1) / (sqrt(v * c2) + eps)
// with the bias corrections c1 = 1 / (1 - beta1^t), c2 = 1 / (1 - beta2^t).
struct AdamArgs {
  std::size_t n;
  float* p;
  const float* g;
  float* m;
  float* v;
  float lr, beta1, beta2, eps, c1, c2;
};
void adam_update_ref(const AdamArgs& a);
void adam_update_simd(const AdamArgs& a);
// Whether adam_update would leave every p finite with |p| < max_abs and every m,
// v finite. Reads only; the same arithmetic as the update, so its answer holds.
bool adam_update_ok_ref(const AdamArgs& a, float max_abs);
bool adam_update_ok_simd(const AdamArgs& a, float max_abs);
void adam_update(Path path, const AdamArgs& a);
bool adam_update_ok(Path path, const AdamArgs& a, float max_abs);

// SGD: p[i] -= lr * g[i] over n parameters.
void sgd_update_ref(float* p, const float* g, std::size_t n, float lr);
void sgd_update_simd(float* p, const float* g, std::size_t n, float lr);
// Whether sgd_update would leave every p finite with |p| < max_abs. Reads only.
bool sgd_update_ok_ref(const float* p, const float* g, std::size_t n, float lr, float max_abs);
bool sgd_update_ok_simd(const float* p, const float* g, std::size_t n, float lr, float max_abs);
void sgd_update(Path path, float* p, const float* g, std::size_t n, float lr);
bool sgd_update_ok(Path path, const float* p, const float* g, std::size_t n, float lr, float max_abs);

}  // namespace headlab
