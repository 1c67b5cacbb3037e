// Small numerical experiments the demos show, computed here so the UI never
// re-implements the maths.
#pragma once

#include <cstddef>
#include <cstdint>

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

}  // namespace headlab
