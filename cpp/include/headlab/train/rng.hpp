// The training layer's random numbers, shared by every model: one seeded
// generator and the normal fill both models' init() draw from.
#pragma once

#include <cstddef>
#include <cstdint>

namespace headlab {

// Small seeded generator: splitmix64 (Steele, Lea, Flood 2014). Normal samples
// by Box-Muller. The same seed and stream give the same numbers bit for bit in
// a given build; nothing depends on the standard library's distributions.
class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0, std::uint64_t stream = 0);
  std::uint64_t next_u64();
  std::uint32_t below(std::uint32_t n);  // uniform in [0, n), n >= 1, unbiased
  double uniform();                      // uniform in [0, 1), 53 random bits
  float normal();                        // standard normal
  std::uint64_t state() const { return state_; }
  void set_state(std::uint64_t s) {
    state_ = s;
    has_spare_ = false;
  }

 private:
  std::uint64_t state_;
  bool has_spare_ = false;
  double spare_ = 0.0;
};

// x[i] = std_dev * rng.normal() for i in [0, n), in order.
void fill_normal(Rng& rng, float* x, std::size_t n, float std_dev);

// An index drawn with probability w[i] / sum(w) from non-negative weights w [n] (they
// need not sum to 1; a zero weight is never drawn): one rng.uniform() scaled by the sum,
// walked along the weights in index order. -1 (and no draw) when the sum is 0 or not finite.
std::int64_t draw_index(const double* w, std::size_t n, Rng& rng);

}  // namespace headlab
