#include "headlab/experiments.hpp"

#include <algorithm>
#include <cmath>

#include "headlab/kernels.hpp"
#include "headlab/tasks.hpp"

namespace headlab {

namespace {

double variance(const float* x, std::size_t n, double scale) {
  double mean = 0, sq = 0;
  for (std::size_t i = 0; i < n; ++i) mean += x[i] * scale;
  mean /= double(n);
  for (std::size_t i = 0; i < n; ++i) sq += (x[i] * scale - mean) * (x[i] * scale - mean);
  return sq / double(n);
}

// Mean over rows of the entropy and of the largest weight.
void row_stats(const float* w, std::size_t rows, std::size_t cols, double& entropy, double& max_weight) {
  entropy = max_weight = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = w + r * cols;
    for (std::size_t c = 0; c < cols; ++c)
      if (row[c] > 0) entropy -= row[c] * std::log(double(row[c]));
    max_weight += *std::max_element(row, row + cols);
  }
  entropy /= double(rows);
  max_weight /= double(rows);
}

}  // namespace

std::size_t scaling_workspace_floats(std::size_t d_k, std::size_t n_q, std::size_t n_k) {
  return (n_q + n_k) * d_k + d_k * n_k;
}

ScalingStats scaling_experiment(std::size_t d_k, std::size_t n_q, std::size_t n_k, std::uint64_t seed,
                                float* dot, float* weights_scaled, float* weights_unscaled,
                                float* workspace) {
  float* q = workspace;              // [n_q, d_k]
  float* k = q + n_q * d_k;          // [n_k, d_k]
  float* kt = k + n_k * d_k;         // [d_k, n_k]
  Rng rng(seed);
  for (std::size_t i = 0; i < (n_q + n_k) * d_k; ++i) q[i] = rng.normal();
  transpose(n_k, d_k, k, d_k, kt, n_k);
  gemm(Path::simd, {n_q, n_k, d_k, q, d_k, kt, n_k, dot, n_k, nullptr, false});

  const std::size_t n = n_q * n_k;
  const float inv = 1.0f / std::sqrt(float(d_k));
  std::copy(dot, dot + n, weights_unscaled);
  std::copy(dot, dot + n, weights_scaled);
  scale(Path::simd, weights_scaled, n, inv);
  softmax_rows(Path::simd, weights_scaled, n_q, n_k, n_k);
  softmax_rows(Path::simd, weights_unscaled, n_q, n_k, n_k);

  ScalingStats s;
  s.variance_raw = variance(dot, n, 1.0);
  s.variance_scaled = variance(dot, n, inv);
  row_stats(weights_scaled, n_q, n_k, s.entropy_scaled, s.max_weight_scaled);
  row_stats(weights_unscaled, n_q, n_k, s.entropy_unscaled, s.max_weight_unscaled);
  return s;
}

}  // namespace headlab
