// Multi-head attention backward: the double reference against central finite
// differences, then the float SIMD and scalar paths against the double
// reference, over shapes around the SIMD width, masks, biases, cross-attention
// and d_k != d_v.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "headlab/mha_backward.hpp"
#include "reference.hpp"
#include "reference_backward.hpp"

using namespace headlab;

namespace {

struct Case {
  std::size_t t_q, t_k, d_model, h, d_k, d_v;
  bool self, bias, causal, pad;
  bool all_masked = false;  // every key padded
  int head_off = -1;        // a disabled head, or -1
};

struct Problem {
  refb::Config cfg;
  refb::Tensors<float> x;  // in self-attention key and value equal query
  std::vector<float> dy;
  bool self = true;
};

std::vector<float> randn(std::mt19937& rng, std::size_t n, float scale) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& e : v) e = d(rng);
  return v;
}

Problem make_problem(const Case& c, unsigned seed) {
  std::mt19937 rng(seed);
  Problem p;
  auto& s = p.cfg.shape;
  s.t_q = c.t_q;
  s.t_k = c.self ? c.t_q : c.t_k;
  s.d_model = c.d_model;
  s.num_heads = c.h;
  s.d_k = c.d_k;
  s.d_v = c.d_v;
  s.causal = c.causal;
  REQUIRE(mha_resolve_shape(s).empty());
  p.cfg.bias = c.bias;
  p.self = c.self;
  const std::size_t hk = s.num_heads * s.d_k, hv = s.num_heads * s.d_v;
  const float ws = 1.0f / std::sqrt(float(s.d_model));
  p.x.query = randn(rng, s.t_q * s.d_model, 1.0f);
  p.x.key = c.self ? p.x.query : randn(rng, s.t_k * s.d_model, 1.0f);
  p.x.value = c.self ? p.x.query : randn(rng, s.t_k * s.d_model, 1.0f);
  // Scores of order 1: a saturated softmax has Q/K gradients far below float
  // rounding of the rest, which no float implementation can reproduce.
  p.x.w_q = randn(rng, s.d_model * hk, ws);
  p.x.w_k = randn(rng, s.d_model * hk, ws);
  p.x.w_v = randn(rng, s.d_model * hv, ws);
  p.x.w_o = randn(rng, hv * s.d_model, ws);
  p.x.b_q = randn(rng, hk, 0.3f);
  p.x.b_k = randn(rng, hk, 0.3f);
  p.x.b_v = randn(rng, hv, 0.3f);
  p.x.b_o = randn(rng, s.d_model, 0.3f);
  p.dy = randn(rng, s.t_q * s.d_model, 1.0f);
  if (c.pad || c.all_masked) {
    p.cfg.key_mask.assign(s.t_k, 1);
    for (std::size_t j = 1; j < s.t_k; j += 3) p.cfg.key_mask[j] = 0;
    if (c.all_masked) p.cfg.key_mask.assign(s.t_k, 0);
  }
  if (c.head_off >= 0) {
    p.cfg.head_on.assign(s.num_heads, 1);
    p.cfg.head_on[c.head_off] = 0;
  }
  return p;
}

template <class To, class From>
refb::Tensors<To> convert(const refb::Tensors<From>& a) {
  refb::Tensors<To> b;
  for (int i = 0; i < refb::Tensors<From>::count; ++i) b.at(i).assign(a.at(i).begin(), a.at(i).end());
  return b;
}

// ||a - b|| / (||b|| + atol * sqrt(n)): a norm-relative error with a small
// absolute floor for all-zero gradients (disabled heads, all-masked rows).
template <class A, class B>
double rel_error(const A& a, const B& b, double atol) {
  double diff = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (double(a[i]) - double(b[i])) * (double(a[i]) - double(b[i]));
    nb += double(b[i]) * double(b[i]);
  }
  const double den = std::sqrt(nb) + atol * std::sqrt(double(a.size()));
  return den == 0 ? 0.0 : std::sqrt(diff) / den;
}

// Softmax is invariant to adding one constant to a row of scores, and b_k adds
// q . b_k to every score of row q: the gradient of b_k is exactly zero in exact
// arithmetic, and what is computed is rounding noise of the other terms. Measure
// it against the scale of its sibling gradient, w_k's.
template <class A, class B, class G>
double error_of(int which, const A& a, const B& b, const G& grads, double atol) {
  if (which != 8) return rel_error(a, b, atol);
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    diff += (double(a[i]) - double(b[i])) * (double(a[i]) - double(b[i]));
  for (auto x : grads.w_k) scale += double(x) * double(x);
  return std::sqrt(diff) / (std::sqrt(scale) + atol);
}

double loss_of(const refb::Config& cfg, const refb::Tensors<double>& x, const std::vector<double>& dy) {
  const auto f = refb::forward(cfg, x);
  double l = 0;
  for (std::size_t i = 0; i < dy.size(); ++i) l += dy[i] * f.y[i];
  return l;
}

// Central differences of sum(dy * Y) for one tensor, in double.
std::vector<double> finite_diff(const refb::Config& cfg, refb::Tensors<double> x,
                                const std::vector<double>& dy, int which) {
  const double eps = 1e-5;
  std::vector<double>& t = x.at(which);
  std::vector<double> g(t.size());
  for (std::size_t i = 0; i < t.size(); ++i) {
    const double keep = t[i];
    t[i] = keep + eps;
    const double up = loss_of(cfg, x, dy);
    t[i] = keep - eps;
    const double down = loss_of(cfg, x, dy);
    t[i] = keep;
    g[i] = (up - down) / (2 * eps);
  }
  return g;
}

struct LibRun {
  std::vector<float> y, weights;
  refb::Tensors<float> g;
};

// The library on a batch of sequences that share shape and weights; x_b holds
// each sequence's inputs, masks each sequence's key mask (or empty).
LibRun run_lib(const refb::Config& cfg, const std::vector<const refb::Tensors<float>*>& xs,
               const std::vector<std::vector<std::uint8_t>>& masks, const std::vector<float>& dy, bool self,
               Path path) {
  const auto& s = cfg.shape;
  const std::size_t batch = xs.size(), dm = s.d_model;
  const refb::Tensors<float>& w0 = *xs[0];
  std::vector<float> query, key, value;
  std::vector<std::uint8_t> mask;
  for (std::size_t b = 0; b < batch; ++b) {
    query.insert(query.end(), xs[b]->query.begin(), xs[b]->query.end());
    key.insert(key.end(), xs[b]->key.begin(), xs[b]->key.end());
    value.insert(value.end(), xs[b]->value.begin(), xs[b]->value.end());
  }
  bool any_mask = false;
  for (const auto& m : masks) any_mask = any_mask || !m.empty();
  if (any_mask)
    for (const auto& m : masks) {
      if (m.empty())
        mask.insert(mask.end(), s.t_k, 1);
      else
        mask.insert(mask.end(), m.begin(), m.end());
    }
  MhaInputs in;
  in.query = query.data();
  in.key = self ? query.data() : key.data();
  in.value = self ? query.data() : value.data();
  in.key_mask = mask.empty() ? nullptr : mask.data();
  MhaWeights w;
  w.w_q = w0.w_q.data();
  w.w_k = w0.w_k.data();
  w.w_v = w0.w_v.data();
  w.w_o = w0.w_o.data();
  if (cfg.bias) {
    w.b_q = w0.b_q.data();
    w.b_k = w0.b_k.data();
    w.b_v = w0.b_v.data();
    w.b_o = w0.b_o.data();
  }
  const std::uint8_t* head_on = cfg.head_on.empty() ? nullptr : cfg.head_on.data();
  std::vector<float> cache_store(mha_cache_floats(s, batch), NAN);
  const MhaCache cache = mha_cache_view(s, batch, cache_store.data());
  std::vector<float> fws(mha_forward_cached_workspace_floats(s), NAN);
  std::vector<float> bws(mha_backward_workspace_floats(s, batch), NAN);
  LibRun r;
  r.y.assign(batch * s.t_q * dm, NAN);
  mha_forward_cached(s, batch, in, w, head_on, cache, r.y.data(), fws.data(), path);
  r.weights.assign(cache.weights, cache.weights + batch * s.num_heads * s.t_q * s.t_k);
  refb::Tensors<float>& g = r.g;
  for (int i = 0; i < refb::Tensors<float>::count; ++i)
    g.at(i).assign(w0.at(i).size() * (i < 3 ? batch : 1), NAN);
  MhaGrads mg;
  mg.w_q = g.w_q.data();
  mg.w_k = g.w_k.data();
  mg.w_v = g.w_v.data();
  mg.w_o = g.w_o.data();
  mg.b_q = g.b_q.data();
  mg.b_k = g.b_k.data();
  mg.b_v = g.b_v.data();
  mg.b_o = g.b_o.data();
  mg.query = g.query.data();
  mg.key = self ? g.query.data() : g.key.data();
  mg.value = self ? g.query.data() : g.value.data();
  mha_backward(s, batch, in, w, head_on, cache, dy.data(), mg, bws.data(), path);
  return r;
}

std::vector<Case> sweep_cases() {
  std::vector<Case> cs;
  const std::size_t sizes[] = {1, 3, 4, 5, 8, 17};
  int k = 0;
  for (std::size_t n : sizes) {
    for (int f = 0; f < 4; ++f, ++k) {
      const bool bias = f & 1, causal = f & 2, pad = (k % 3) == 1;
      cs.push_back({n, n, 8, 2, 4, 4, true, bias, causal, pad});                // sequence length
      cs.push_back({5, 5, 6, 2, n, 1 + (n + 2) % 5, true, bias, causal, pad});  // d_k != d_v
      cs.push_back({n, n + 2, 5, 3, 2, n, false, bias, false, !pad});           // cross, d_v sweep
    }
    cs.push_back({3, 4, n, 1, n, n, false, true, false, true});  // d_model = d_k = n, one head
  }
  cs.push_back({4, 6, 6, 2, 3, 2, false, true, false, false, true});      // every key padded
  cs.push_back({1, 7, 4, 2, 2, 3, false, false, false, false, true});     // and no bias
  cs.push_back({5, 5, 8, 3, 3, 4, true, true, true, false, false, 1});    // head 1 disabled
  cs.push_back({6, 3, 8, 2, 5, 2, false, false, false, true, false, 0});  // head 0 disabled
  return cs;
}

// In self-attention the library writes d_query + d_key + d_value into one buffer.
refb::Tensors<double> fold_self(refb::Tensors<double> g, bool self) {
  if (self)
    for (std::size_t i = 0; i < g.query.size(); ++i) g.query[i] += g.key[i] + g.value[i];
  return g;
}

}  // namespace

TEST_CASE("backward: double reference matches central finite differences") {
  unsigned seed = 500;
  double worst = 0;
  for (const Case& c : sweep_cases()) {
    const Problem p = make_problem(c, ++seed);
    CAPTURE(seed);
    CAPTURE(c.t_q);
    CAPTURE(c.t_k);
    CAPTURE(c.d_model);
    CAPTURE(c.d_k);
    CAPTURE(c.d_v);
    const auto xd = convert<double>(p.x);
    const std::vector<double> dy(p.dy.begin(), p.dy.end());
    const auto g = refb::backward(p.cfg, xd, dy);
    // Self-attention is checked as three separate inputs that happen to be equal.
    for (int i = 0; i < refb::Tensors<double>::count; ++i) {
      if (i >= 7 && !c.bias) continue;  // biases are not in the forward
      const std::string tensor = refb::Tensors<double>::name(i);
      CAPTURE(tensor);
      const auto fd = finite_diff(p.cfg, xd, dy, i);
      const double err = error_of(i, g.at(i), fd, g, 1e-9);
      if (!(err < 1e-6))
        std::printf("seed %u %s: rel error %.3g\n", seed, refb::Tensors<double>::name(i), err);
      CHECK(err < 1e-6);
      worst = std::max(worst, err);
    }
  }
  std::printf("backward: double reference vs finite differences, worst relative error %.2g\n", worst);
}

TEST_CASE("backward: float simd and scalar paths match the double reference") {
  unsigned seed = 900;
  double worst[2] = {0, 0};
  for (const Case& c : sweep_cases()) {
    const Problem p = make_problem(c, ++seed);
    CAPTURE(seed);
    CAPTURE(c.t_q);
    CAPTURE(c.t_k);
    CAPTURE(c.d_model);
    CAPTURE(c.h);
    CAPTURE(c.d_k);
    CAPTURE(c.d_v);
    CAPTURE(c.causal);
    CAPTURE(c.pad);
    const auto xd = convert<double>(p.x);
    const std::vector<double> dy(p.dy.begin(), p.dy.end());
    const auto f = refb::forward(p.cfg, xd);
    const auto g = fold_self(refb::backward(p.cfg, xd, dy), c.self);
    for (Path path : {Path::simd, Path::ref}) {
      CAPTURE(int(path));
      const LibRun r = run_lib(p.cfg, {&p.x}, {p.cfg.key_mask}, p.dy, c.self, path);
      CHECK(rel_error(r.y, f.y, 1e-6) < 1e-5);
      CHECK(ref::allclose(r.weights, f.p, 1e-6, 1e-4, "weights"));
      for (int i = 0; i < refb::Tensors<double>::count; ++i) {
        if (c.self && (i == 1 || i == 2)) continue;  // folded into query
        const std::string tensor = refb::Tensors<double>::name(i);
        CAPTURE(tensor);
        const double err = error_of(i, r.g.at(i), g.at(i), g, 1e-6);
        if (!(err < 1e-3))
          std::printf("seed %u %s: rel error %.3g\n", seed, refb::Tensors<double>::name(i), err);
        CHECK(err < 1e-3);
        worst[path == Path::simd ? 0 : 1] = std::max(worst[path == Path::simd ? 0 : 1], err);
      }
    }
  }
  std::printf("backward: float vs double reference, worst relative error simd %.2g, scalar %.2g\n", worst[0],
              worst[1]);
}

TEST_CASE("backward: cached forward agrees with mha_forward") {
  unsigned seed = 1300;
  for (const Case& c : sweep_cases()) {
    if (c.head_off >= 0) continue;  // mha_forward has no head mask
    const Problem p = make_problem(c, ++seed);
    CAPTURE(seed);
    const auto& s = p.cfg.shape;
    for (Path path : {Path::simd, Path::ref}) {
      const LibRun r = run_lib(p.cfg, {&p.x}, {p.cfg.key_mask}, p.dy, c.self, path);
      MhaInputs in;
      in.query = p.x.query.data();
      in.key = p.x.key.data();
      in.value = p.x.value.data();
      in.key_mask = p.cfg.key_mask.empty() ? nullptr : p.cfg.key_mask.data();
      MhaWeights w;
      w.w_q = p.x.w_q.data();
      w.w_k = p.x.w_k.data();
      w.w_v = p.x.w_v.data();
      w.w_o = p.x.w_o.data();
      if (c.bias) {
        w.b_q = p.x.b_q.data();
        w.b_k = p.x.b_k.data();
        w.b_v = p.x.b_v.data();
        w.b_o = p.x.b_o.data();
      }
      std::vector<float> y(s.t_q * s.d_model), wts(s.num_heads * s.t_q * s.t_k);
      std::vector<float> ws(mha_workspace_floats(s));
      MhaOutputs out;
      out.output = y.data();
      out.weights = wts.data();
      mha_forward(s, in, w, out, ws.data(), path);
      CHECK(ref::allclose(r.y, y, 1e-5, 1e-4, "cached vs mha_forward output"));
      CHECK(ref::allclose(r.weights, wts, 1e-6, 1e-5, "cached vs mha_forward weights"));
    }
  }
}

TEST_CASE("backward: masked keys, all-masked sequences and disabled heads get exactly zero gradient") {
  // Batch of three cross-attention sequences sharing weights: the second has every key
  // padded, the third some keys; head 2 is disabled.
  Case c{4, 6, 8, 3, 3, 5, false, true, false, true, false, 2};
  Problem p0 = make_problem(c, 71), p1 = make_problem(c, 72), p2 = make_problem(c, 73);
  p1.x.w_q = p2.x.w_q = p0.x.w_q;
  p1.x.w_k = p2.x.w_k = p0.x.w_k;
  p1.x.w_v = p2.x.w_v = p0.x.w_v;
  p1.x.w_o = p2.x.w_o = p0.x.w_o;
  p1.x.b_q = p2.x.b_q = p0.x.b_q;
  p1.x.b_k = p2.x.b_k = p0.x.b_k;
  p1.x.b_v = p2.x.b_v = p0.x.b_v;
  p1.x.b_o = p2.x.b_o = p0.x.b_o;
  const auto& s = p0.cfg.shape;
  const std::size_t dm = s.d_model, hk = s.num_heads * s.d_k, hv = s.num_heads * s.d_v;
  std::vector<std::uint8_t> none(s.t_k, 0);
  std::vector<std::uint8_t> some = p2.cfg.key_mask;
  std::vector<float> dy = p0.dy;
  dy.insert(dy.end(), p1.dy.begin(), p1.dy.end());
  dy.insert(dy.end(), p2.dy.begin(), p2.dy.end());

  // The reference, sequence by sequence; weight gradients add over the batch.
  refb::Config c1 = p1.cfg, c2 = p2.cfg;
  c1.key_mask = none;
  c2.key_mask = some;
  const auto g0 =
      refb::backward(p0.cfg, convert<double>(p0.x), std::vector<double>(p0.dy.begin(), p0.dy.end()));
  const auto g1 = refb::backward(c1, convert<double>(p1.x), std::vector<double>(p1.dy.begin(), p1.dy.end()));
  const auto g2 = refb::backward(c2, convert<double>(p2.x), std::vector<double>(p2.dy.begin(), p2.dy.end()));

  for (Path path : {Path::simd, Path::ref}) {
    CAPTURE(int(path));
    const LibRun r = run_lib(p0.cfg, {&p0.x, &p1.x, &p2.x}, {p0.cfg.key_mask, none, some}, dy, false, path);
    for (int i = 3; i < refb::Tensors<double>::count; ++i) {
      const std::string tensor = refb::Tensors<double>::name(i);
      CAPTURE(tensor);
      std::vector<double> want(g0.at(i).size());
      for (std::size_t j = 0; j < want.size(); ++j) want[j] = g0.at(i)[j] + g1.at(i)[j] + g2.at(i)[j];
      CHECK(error_of(i, r.g.at(i), want, g0, 1e-6) < 1e-3);
    }
    for (int i = 0; i < 3; ++i) {
      std::vector<double> want = g0.at(i);
      want.insert(want.end(), g1.at(i).begin(), g1.at(i).end());
      want.insert(want.end(), g2.at(i).begin(), g2.at(i).end());
      CHECK(rel_error(r.g.at(i), want, 1e-6) < 1e-3);
    }
    // Sequence 1 attends to nothing: its inputs get exactly zero gradient and its weights are 0.
    for (std::size_t j = 0; j < s.t_q * dm; ++j) CHECK(r.g.query[s.t_q * dm + j] == 0.0f);
    for (std::size_t j = 0; j < s.t_k * dm; ++j) {
      CHECK(r.g.key[s.t_k * dm + j] == 0.0f);
      CHECK(r.g.value[s.t_k * dm + j] == 0.0f);
    }
    const std::size_t per = s.num_heads * s.t_q * s.t_k;
    for (std::size_t j = 0; j < per; ++j) CHECK(r.weights[per + j] == 0.0f);
    // Padded keys of sequences 0 and 2: zero weight, zero key/value gradient.
    for (std::size_t b : {std::size_t{0}, std::size_t{2}})
      for (std::size_t t = 0; t < s.t_k; ++t) {
        if (p0.cfg.key_mask[t] != 0) continue;
        for (std::size_t m = 0; m < dm; ++m) {
          CHECK(r.g.key[(b * s.t_k + t) * dm + m] == 0.0f);
          CHECK(r.g.value[(b * s.t_k + t) * dm + m] == 0.0f);
        }
        for (std::size_t i = 0; i < s.num_heads; ++i)
          for (std::size_t q = 0; q < s.t_q; ++q)
            CHECK(r.weights[((b * s.num_heads + i) * s.t_q + q) * s.t_k + t] == 0.0f);
      }
    // The disabled head: its projection columns and its rows of W^O get zero gradient.
    const std::size_t off = 2;
    for (std::size_t m = 0; m < dm; ++m) {
      for (std::size_t a = 0; a < s.d_k; ++a) {
        CHECK(r.g.w_q[m * hk + off * s.d_k + a] == 0.0f);
        CHECK(r.g.w_k[m * hk + off * s.d_k + a] == 0.0f);
      }
      for (std::size_t a = 0; a < s.d_v; ++a) {
        CHECK(r.g.w_v[m * hv + off * s.d_v + a] == 0.0f);
        CHECK(r.g.w_o[(off * s.d_v + a) * dm + m] == 0.0f);
      }
    }
  }
}

