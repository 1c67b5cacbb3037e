#include "headlab/train/rng.hpp"

#include <cmath>

namespace headlab {

namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

Rng::Rng(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t s = seed;
  std::uint64_t t = stream ^ 0x6A09E667F3BCC909ull;
  state_ = splitmix64(s) ^ splitmix64(t);
}

std::uint64_t Rng::next_u64() {
  return splitmix64(state_);
}

std::uint32_t Rng::below(std::uint32_t n) {
  // Rejection on the top 32 bits: no modulo bias.
  const std::uint32_t limit = std::uint32_t(0u - n) % n;  // 2^32 mod n
  for (;;) {
    const std::uint64_t x = next_u64() >> 32;
    const std::uint64_t m = x * n;
    if (std::uint32_t(m) >= limit) return std::uint32_t(m >> 32);
  }
}

double Rng::uniform() {
  return double(next_u64() >> 11) * (1.0 / 9007199254740992.0);
}

float Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return float(spare_);
  }
  const double two_pi = 6.283185307179586;
  const double u1 = 1.0 - uniform();  // (0, 1]: log is finite
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  spare_ = r * std::sin(two_pi * u2);
  has_spare_ = true;
  return float(r * std::cos(two_pi * u2));
}

void fill_normal(Rng& rng, float* x, std::size_t n, float std_dev) {
  for (std::size_t i = 0; i < n; ++i) x[i] = std_dev * rng.normal();
}

std::int64_t draw_index(const double* w, std::size_t n, Rng& rng) {
  double total = 0.0;
  for (std::size_t i = 0; i < n; ++i) total += w[i];
  if (!(total > 0.0) || !std::isfinite(total)) return -1;
  double u = rng.uniform() * total;
  std::int64_t last = -1;
  for (std::size_t i = 0; i < n; ++i) {
    if (w[i] <= 0.0) continue;
    last = std::int64_t(i);
    if (u < w[i]) break;
    u -= w[i];
  }
  return last;  // rounding can leave u past the last weight: that one
}

}  // namespace headlab
