// The language model's kernels (lm_kernels.hpp): each _ref against its _simd
// over sizes around the SIMD width; LayerNorm, GELU and cross-entropy backward
// against central finite differences of double-precision formulas.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "headlab/lm_kernels.hpp"
#include "reference_lm.hpp"
#include "checks.hpp"

using namespace headlab;
using namespace headlab::test;

namespace {

std::vector<float> randn(std::mt19937& rng, std::size_t n, float scale = 1.0f) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& e : v) e = d(rng);
  return v;
}

const std::size_t kSizes[] = {1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33};

}  // namespace

// ---- _ref against _simd --------------------------------------------------------

TEST_CASE("lm kernels: layernorm forward and backward, ref == simd") {
  std::mt19937 rng(11);
  for (std::size_t d : kSizes)
    for (std::size_t rows : {std::size_t{1}, std::size_t{5}}) {
      CAPTURE(d);
      CAPTURE(rows);
      const auto x = randn(rng, rows * d, 2.0f), g = randn(rng, d), b = randn(rng, d),
                 dy = randn(rng, rows * d);
      std::vector<float> y1(rows * d), y2(rows * d), m1(rows), m2(rows), r1(rows), r2(rows);
      layernorm_forward_ref({rows, d, x.data(), g.data(), b.data(), y1.data(), m1.data(), r1.data(), 1e-5f});
      layernorm_forward_simd({rows, d, x.data(), g.data(), b.data(), y2.data(), m2.data(), r2.data(), 1e-5f});
      CHECK(worst(y2, y1, 1e-5, 1e-5) <= 1);
      CHECK(worst(r2, r1, 1e-6, 1e-5) <= 1);
      for (bool acc : {false, true}) {
        std::vector<float> dx1(rows * d, 0.5f), dx2(rows * d, 0.5f), dg1(d), dg2(d), db1(d), db2(d);
        layernorm_backward_ref({rows, d, x.data(), g.data(), m1.data(), r1.data(), dy.data(), dx1.data(),
                                dg1.data(), db1.data(), acc});
        layernorm_backward_simd({rows, d, x.data(), g.data(), m1.data(), r1.data(), dy.data(), dx2.data(),
                                 dg2.data(), db2.data(), acc});
        CHECK(worst(dx2, dx1, 1e-5, 1e-4) <= 1);
        CHECK(worst(dg2, dg1, 1e-5, 1e-4) <= 1);
        CHECK(worst(db2, db1, 1e-5, 1e-5) <= 1);
      }
    }
}

TEST_CASE("lm kernels: gelu, cross-entropy, embeddings, ref == simd") {
  std::mt19937 rng(12);
  for (std::size_t n : kSizes) {
    CAPTURE(n);
    auto x = randn(rng, n, 3.0f);
    if (n >= 3) x[0] = 40.0f, x[1] = -40.0f, x[2] = 0.0f;  // saturated tanh both ways
    const auto dy = randn(rng, n);
    std::vector<float> y1(n), y2(n), d1(n), d2(n);
    gelu_forward_ref(x.data(), y1.data(), n);
    gelu_forward_simd(x.data(), y2.data(), n);
    CHECK(worst(y2, y1, 1e-6, 1e-5) <= 1);
    gelu_backward_ref(x.data(), dy.data(), d1.data(), n);
    gelu_backward_simd(x.data(), dy.data(), d2.data(), n);
    // tanh from exp: absolute error ~1e-7 where gelu' crosses 0 (x near -0.75)
    CHECK(worst(d2, d1, 1e-5, 1e-4) <= 1);

    const std::size_t rows = 4, v = n + 1;
    const auto logits = randn(rng, rows * v, 3.0f);
    const std::int32_t targets[rows] = {0, std::int32_t(v - 1), -1, std::int32_t(v / 2)};
    std::vector<float> p1 = logits, p2 = logits, l1(rows), l2(rows), g1(rows * v), g2(rows * v);
    std::vector<std::int32_t> a1(rows), a2(rows);
    const double s1 =
        cross_entropy_rows_ref({rows, v, p1.data(), targets, l1.data(), g1.data(), a1.data(), 0.25f});
    const double s2 =
        cross_entropy_rows_simd({rows, v, p2.data(), targets, l2.data(), g2.data(), a2.data(), 0.25f});
    CHECK(std::abs(s1 - s2) <= 1e-5 * (1 + std::abs(s1)));
    CHECK(worst(p2, p1, 1e-6, 1e-5) <= 1);
    CHECK(worst(g2, g1, 1e-6, 1e-5) <= 1);
    CHECK(a1 == a2);
    CHECK(l1[2] == 0.0f);
    for (std::size_t c = 0; c < v; ++c) CHECK(g1[2 * v + c] == 0.0f);  // ignored row

    const std::size_t batch = 2, t_len = 3, vocab = 5;
    const std::vector<std::int32_t> tok = {0, 4, 4, 2, 0, 1};
    const auto te = randn(rng, vocab * n), pe = randn(rng, t_len * n), dx = randn(rng, batch * t_len * n);
    std::vector<float> e1(batch * t_len * n), e2(e1.size()), gt1(vocab * n, 9.0f), gt2(gt1), gp1(t_len * n),
        gp2(gp1.size());
    embedding_forward_ref(tok.data(), batch, t_len, n, te.data(), pe.data(), e1.data());
    embedding_forward_simd(tok.data(), batch, t_len, n, te.data(), pe.data(), e2.data());
    CHECK(e2 == e1);
    embedding_backward_ref(tok.data(), batch, t_len, n, vocab, dx.data(), gt1.data(), gp1.data());
    embedding_backward_simd(tok.data(), batch, t_len, n, vocab, dx.data(), gt2.data(), gp2.data());
    CHECK(worst(gt2, gt1, 1e-6, 1e-6) <= 1);
    CHECK(worst(gp2, gp1, 1e-6, 1e-6) <= 1);
    // Token 3 never occurs: its gradient row is zero, not left over.
    for (std::size_t c = 0; c < n; ++c) CHECK(gt1[3 * n + c] == 0.0f);
    // Token 4 occurs twice (positions 1 and 2 of sequence 0).
    CHECK(std::abs(gt1[4 * n] - (dx[1 * n] + dx[2 * n])) <= 1e-6f);
  }
}

// ---- Kernel backward against finite differences of double formulas -----------

namespace {

// LayerNorm of one row in double, weighted by w: sum_c w[c] y[c].
double ln_objective(const std::vector<double>& x, const std::vector<double>& g, const std::vector<double>& b,
                    const std::vector<double>& w) {
  const std::size_t d = x.size();
  double mean = 0, var = 0;
  for (double e : x) mean += e;
  mean /= double(d);
  for (double e : x) var += (e - mean) * (e - mean);
  var /= double(d);
  double s = 0;
  for (std::size_t c = 0; c < d; ++c) s += w[c] * ((x[c] - mean) / std::sqrt(var + 1e-5) * g[c] + b[c]);
  return s;
}

}  // namespace

TEST_CASE("lm kernels: layernorm, gelu and cross-entropy backward match finite differences") {
  std::mt19937 rng(13);
  for (Path path : {Path::ref, Path::simd}) {
    CAPTURE(path == Path::simd);
    for (std::size_t d : {std::size_t{1}, std::size_t{5}, std::size_t{9}}) {
      CAPTURE(d);
      const auto xf = randn(rng, d, 1.5f), gf = randn(rng, d), bf = randn(rng, d), wf = randn(rng, d);
      std::vector<double> x(xf.begin(), xf.end()), g(gf.begin(), gf.end()), b(bf.begin(), bf.end()),
          w(wf.begin(), wf.end());
      std::vector<float> y(d), mean(1), rstd(1), dx(d), dg(d), db(d);
      const LayerNormArgs fa{1,        d,           xf.data(),   gf.data(), bf.data(),
                             y.data(), mean.data(), rstd.data(), 1e-5f};
      const LayerNormBackwardArgs ba{1,         d,         xf.data(), gf.data(), mean.data(), rstd.data(),
                                     wf.data(), dx.data(), dg.data(), db.data(), false};
      path == Path::simd ? layernorm_forward_simd(fa) : layernorm_forward_ref(fa);
      path == Path::simd ? layernorm_backward_simd(ba) : layernorm_backward_ref(ba);
      const double h = 1e-6;
      std::vector<double> fx(d), fg(d), fb(d);
      for (std::size_t i = 0; i < d; ++i) {
        auto xp = x, xm = x, gp = g, gm = g, bp = b, bm = b;
        xp[i] += h, xm[i] -= h, gp[i] += h, gm[i] -= h, bp[i] += h, bm[i] -= h;
        fx[i] = (ln_objective(xp, g, b, w) - ln_objective(xm, g, b, w)) / (2 * h);
        fg[i] = (ln_objective(x, gp, b, w) - ln_objective(x, gm, b, w)) / (2 * h);
        fb[i] = (ln_objective(x, g, bp, w) - ln_objective(x, g, bm, w)) / (2 * h);
      }
      CHECK(worst(dx, fx, 1e-4, 1e-3) <= 1);
      CHECK(worst(dg, fg, 1e-4, 1e-3) <= 1);
      CHECK(worst(db, fb, 1e-4, 1e-3) <= 1);
    }
    {
      const std::vector<float> x = {-6.0f, -2.5f, -1.0f, -0.3f, 0.0f, 0.2f, 0.7f, 1.3f, 3.0f};
      std::vector<float> ones(x.size(), 1.0f), dx(x.size());
      path == Path::simd ? gelu_backward_simd(x.data(), ones.data(), dx.data(), x.size())
                         : gelu_backward_ref(x.data(), ones.data(), dx.data(), x.size());
      std::vector<double> fd(x.size());
      for (std::size_t i = 0; i < x.size(); ++i)
        fd[i] = (reflm::gelu(double(x[i]) + 1e-6) - reflm::gelu(double(x[i]) - 1e-6)) / 2e-6;
      CHECK(worst(dx, fd, 1e-5, 1e-4) <= 1);
      std::vector<float> y(x.size());
      path == Path::simd ? gelu_forward_simd(x.data(), y.data(), x.size())
                         : gelu_forward_ref(x.data(), y.data(), x.size());
      std::vector<double> want(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) want[i] = reflm::gelu(double(x[i]));
      CHECK(worst(y, want, 1e-6, 1e-5) <= 1);
    }
    {
      const std::size_t v = 6;
      const auto zf = randn(rng, v, 2.0f);
      std::vector<float> p = zf, dz(v);
      const std::int32_t target = 4;
      float loss = 0;
      const CrossEntropyArgs a{1, v, p.data(), &target, &loss, dz.data(), nullptr, 1.0f};
      path == Path::simd ? cross_entropy_rows_simd(a) : cross_entropy_rows_ref(a);
      auto ce = [&](std::vector<double> z) {
        double mx = *std::max_element(z.begin(), z.end()), s = 0;
        for (double e : z) s += std::exp(e - mx);
        return std::log(s) + mx - z[target];
      };
      std::vector<double> z(zf.begin(), zf.end()), fd(v);
      CHECK(std::abs(loss - ce(z)) <= 1e-5 * (1 + ce(z)));
      for (std::size_t i = 0; i < v; ++i) {
        auto zp = z, zm = z;
        zp[i] += 1e-6, zm[i] -= 1e-6;
        fd[i] = (ce(zp) - ce(zm)) / 2e-6;
      }
      CHECK(worst(dz, fd, 1e-5, 1e-4) <= 1);
    }
  }
}
