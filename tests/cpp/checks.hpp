// Small helpers the kernel and model tests share: a tolerance measure and a
// workspace with a guard band that catches writes past its end.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace headlab::test {

// Max over i of |got - want| / (atol + rtol |want|): <= 1 passes; a NaN counts as 1e30.
template <class A, class B>
double worst(const A& got, const B& want, double atol, double rtol, std::size_t* where = nullptr) {
  double w = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double r = std::abs(double(got[i]) - double(want[i])) / (atol + rtol * std::abs(double(want[i])));
    if (r > w || std::isnan(r)) {
      w = std::isnan(r) ? 1e30 : r;
      if (where) *where = i;
    }
  }
  return w;
}

constexpr float kCanary = 1234.5f;
constexpr std::size_t kGuard = 67;

// A workspace of n floats (NaN at first, so a kernel that reads before writing shows)
// followed by a guard band that must stay untouched.
struct Guarded {
  std::vector<float> buf;
  std::size_t n;
  explicit Guarded(std::size_t floats) : buf(floats + kGuard, kCanary), n(floats) {
    std::fill(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n), std::nanf(""));
  }
  float* data() { return buf.data(); }
  bool intact() const {
    return std::all_of(buf.begin() + static_cast<std::ptrdiff_t>(n), buf.end(),
                       [](float x) { return x == kCanary; });
  }
};

}  // namespace headlab::test
