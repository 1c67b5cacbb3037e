// Independent double-precision multi-head attention, written straight from the
// formula with no shared code with cpp/src, plus helpers for the tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "headlab/mha.hpp"

namespace ref {

struct Problem {
  headlab::MhaShape shape;  // resolved (d_k, d_v set)
  std::vector<float> query, key, value, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o;
  std::vector<std::uint8_t> key_mask;  // empty = no mask
  bool self = true;                    // key and value are the query
  bool bias = false;

  headlab::MhaInputs inputs() const {
    headlab::MhaInputs in;
    in.query = query.data();
    in.key = self ? query.data() : key.data();
    in.value = self ? query.data() : value.data();
    in.key_mask = key_mask.empty() ? nullptr : key_mask.data();
    return in;
  }
  headlab::MhaWeights weights() const {
    headlab::MhaWeights w;
    w.w_q = w_q.data();
    w.w_k = w_k.data();
    w.w_v = w_v.data();
    w.w_o = w_o.data();
    if (bias) {
      w.b_q = b_q.data();
      w.b_k = b_k.data();
      w.b_v = b_v.data();
      w.b_o = b_o.data();
    }
    return w;
  }
};

inline std::vector<float> random_vec(std::mt19937& rng, std::size_t n, float scale = 1.0f) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

inline Problem random_problem(unsigned seed, std::size_t t_q, std::size_t t_k, std::size_t d_model,
                              std::size_t h, std::size_t d_k, std::size_t d_v, bool self,
                              bool bias, bool causal, bool mask) {
  std::mt19937 rng(seed);
  Problem p;
  p.shape.t_q = t_q;
  p.shape.t_k = self ? t_q : t_k;
  p.shape.d_model = d_model;
  p.shape.num_heads = h;
  p.shape.d_k = d_k;
  p.shape.d_v = d_v;
  p.shape.causal = causal;
  headlab::mha_resolve_shape(p.shape);
  const auto& s = p.shape;
  const float ws = 1.0f / std::sqrt(static_cast<float>(d_model));
  p.self = self;
  p.bias = bias;
  p.query = random_vec(rng, s.t_q * d_model);
  if (!self) {
    p.key = random_vec(rng, s.t_k * d_model);
    p.value = random_vec(rng, s.t_k * d_model);
  }
  p.w_q = random_vec(rng, d_model * h * s.d_k, ws);
  p.w_k = random_vec(rng, d_model * h * s.d_k, ws);
  p.w_v = random_vec(rng, d_model * h * s.d_v, ws);
  p.w_o = random_vec(rng, h * s.d_v * d_model, ws);
  p.b_q = random_vec(rng, h * s.d_k, 0.1f);
  p.b_k = random_vec(rng, h * s.d_k, 0.1f);
  p.b_v = random_vec(rng, h * s.d_v, 0.1f);
  p.b_o = random_vec(rng, d_model, 0.1f);
  if (mask) {
    p.key_mask.assign(s.t_k, 1);
    for (std::size_t j = 0; j < s.t_k; j += 3) p.key_mask[j] = 0;
  }
  return p;
}

struct Result {
  std::vector<double> output, weights;  // [t_q, d_model], [h, t_q, t_k]
};

// Straight from the definition, in double.
inline Result mha(const Problem& p) {
  const auto& s = p.shape;
  const auto in = p.inputs();
  const std::size_t h = s.num_heads, hk = h * s.d_k, hv = h * s.d_v;
  auto bias_at = [&](const std::vector<float>& b, std::size_t j) { return p.bias ? double(b[j]) : 0.0; };
  Result r;
  r.output.assign(s.t_q * s.d_model, 0.0);
  r.weights.assign(h * s.t_q * s.t_k, 0.0);
  std::vector<double> concat(s.t_q * hv, 0.0);
  for (std::size_t i = 0; i < h; ++i) {
    std::vector<double> q(s.t_q * s.d_k), k(s.t_k * s.d_k), v(s.t_k * s.d_v);
    for (std::size_t t = 0; t < s.t_q; ++t)
      for (std::size_t c = 0; c < s.d_k; ++c) {
        double acc = bias_at(p.b_q, i * s.d_k + c);
        for (std::size_t m = 0; m < s.d_model; ++m)
          acc += double(in.query[t * s.d_model + m]) * p.w_q[m * hk + i * s.d_k + c];
        q[t * s.d_k + c] = acc;
      }
    for (std::size_t t = 0; t < s.t_k; ++t) {
      for (std::size_t c = 0; c < s.d_k; ++c) {
        double acc = bias_at(p.b_k, i * s.d_k + c);
        for (std::size_t m = 0; m < s.d_model; ++m)
          acc += double(in.key[t * s.d_model + m]) * p.w_k[m * hk + i * s.d_k + c];
        k[t * s.d_k + c] = acc;
      }
      for (std::size_t c = 0; c < s.d_v; ++c) {
        double acc = bias_at(p.b_v, i * s.d_v + c);
        for (std::size_t m = 0; m < s.d_model; ++m)
          acc += double(in.value[t * s.d_model + m]) * p.w_v[m * hv + i * s.d_v + c];
        v[t * s.d_v + c] = acc;
      }
    }
    for (std::size_t a = 0; a < s.t_q; ++a) {
      std::vector<double> sc(s.t_k);
      std::vector<bool> seen(s.t_k);
      double mx = -std::numeric_limits<double>::infinity();
      for (std::size_t b = 0; b < s.t_k; ++b) {
        double dot = 0;
        for (std::size_t c = 0; c < s.d_k; ++c) dot += q[a * s.d_k + c] * k[b * s.d_k + c];
        sc[b] = dot / std::sqrt(double(s.d_k));
        seen[b] = !(s.causal && b > a) && (!in.key_mask || in.key_mask[b] != 0);
        if (seen[b]) mx = std::max(mx, sc[b]);
      }
      double sum = 0;
      for (std::size_t b = 0; b < s.t_k; ++b) sum += seen[b] ? std::exp(sc[b] - mx) : 0.0;
      for (std::size_t b = 0; b < s.t_k; ++b) {
        const double wgt = seen[b] ? std::exp(sc[b] - mx) / sum : 0.0;
        r.weights[(i * s.t_q + a) * s.t_k + b] = wgt;
        for (std::size_t c = 0; c < s.d_v; ++c) concat[a * hv + i * s.d_v + c] += wgt * v[b * s.d_v + c];
      }
    }
  }
  for (std::size_t t = 0; t < s.t_q; ++t)
    for (std::size_t m = 0; m < s.d_model; ++m) {
      double acc = bias_at(p.b_o, m);
      for (std::size_t c = 0; c < hv; ++c) acc += concat[t * hv + c] * p.w_o[c * s.d_model + m];
      r.output[t * s.d_model + m] = acc;
    }
  return r;
}

// |y - ref| <= atol + rtol*|ref| for every element; prints the worst on failure.
template <class A, class B>
bool allclose(const A& y, const B& r, double atol, double rtol, const char* what = "") {
  if (y.size() != r.size()) {
    std::printf("%s: size %zu vs %zu\n", what, y.size(), r.size());
    return false;
  }
  double worst = 0;
  std::size_t at = 0;
  bool ok = true;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double d = std::fabs(double(y[i]) - double(r[i]));
    const double excess = d - (atol + rtol * std::fabs(double(r[i])));
    if (!(excess <= 0)) ok = false;
    if (!(d <= worst)) {
      worst = d;
      at = i;
    }
  }
  if (!ok)
    std::printf("%s: max |diff| %.3g at %zu (got %.8g, want %.8g)\n", what, worst, at,
                double(y[at]), double(r[at]));
  return ok;
}

}  // namespace ref
