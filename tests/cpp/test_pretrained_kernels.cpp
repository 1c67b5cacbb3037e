// Kernels for weights kept as stored (pretrained_kernels.hpp): float16/bfloat16
// widening against exact formulas, and the GEMM with a 16-bit or transposed B
// operand (_ref and _simd) against a double-precision product, over sizes around
// the SIMD width and the widening panel.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "checks.hpp"
#include "headlab/pretrained_kernels.hpp"

using namespace headlab;
using namespace headlab::test;

namespace {

// float16 by its definition: (-1)^s 2^(e-15) (1 + m/1024), subnormals 2^-14 m/1024.
double half_value(std::uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double mag = e == 0 ? std::ldexp(m / 1024.0, -14) : std::ldexp(1.0 + m / 1024.0, e - 15);
  return s ? -mag : mag;
}

// Random 16-bit patterns of finite values for dtype (no inf/NaN exponents), with
// magnitudes kept near 1 so products stay well scaled.
std::vector<std::uint16_t> random_halves(std::mt19937& rng, std::size_t n, DType t) {
  std::vector<std::uint16_t> v(n);
  std::uniform_int_distribution<int> mant(0, t == DType::f16 ? 1023 : 127), sign(0, 1), ex(-4, 1);
  for (auto& h : v) {
    if (t == DType::f16)
      h = std::uint16_t((sign(rng) << 15) | ((15 + ex(rng)) << 10) | mant(rng));
    else
      h = std::uint16_t((sign(rng) << 15) | ((127 + ex(rng)) << 7) | mant(rng));
  }
  return v;
}

}  // namespace

TEST_CASE("pretrained kernels: every finite float16 widens exactly, ref and simd") {
  std::vector<std::uint16_t> all;
  for (std::uint32_t h = 0; h < 65536; ++h)
    if (((h >> 10) & 0x1f) != 0x1f) all.push_back(std::uint16_t(h));
  std::vector<float> ref(all.size()), simd(all.size());
  widen_ref(all.data(), DType::f16, ref.data(), all.size());
  widen_simd(all.data(), DType::f16, simd.data(), all.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const double want = half_value(all[i]);
    if (double(ref[i]) != want || double(simd[i]) != want || std::signbit(simd[i]) != std::signbit(want))
      ++bad;
  }
  CHECK(bad == 0);
  CHECK(std::isinf(half_to_float(0x7c00)));
  CHECK(std::isnan(half_to_float(0x7e00)));
}

TEST_CASE("pretrained kernels: bfloat16 widens exactly; odd lengths and tails") {
  std::mt19937 rng(3);
  for (std::size_t n : {1, 3, 4, 5, 63, 64, 65, 129}) {
    CAPTURE(n);
    auto h = random_halves(rng, n, DType::bf16);
    std::vector<float> ref(n), simd(n);
    widen_ref(h.data(), DType::bf16, ref.data(), n);
    widen_simd(h.data(), DType::bf16, simd.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      std::uint32_t bits = std::uint32_t(h[i]) << 16;
      float want;
      std::memcpy(&want, &bits, 4);
      CHECK(ref[i] == want);
      CHECK(simd[i] == want);
    }
  }
}

TEST_CASE("pretrained kernels: first_nonfinite finds NaN and infinity in each dtype") {
  std::vector<float> f(9, 1.0f);
  CHECK(first_nonfinite(f.data(), DType::f32, 9) == 9);
  f[6] = std::nanf("");
  CHECK(first_nonfinite(f.data(), DType::f32, 9) == 6);
  f[2] = -INFINITY;
  CHECK(first_nonfinite(f.data(), DType::f32, 9) == 2);
  std::vector<std::uint16_t> h(5, 0x3c00);
  CHECK(first_nonfinite(h.data(), DType::f16, 5) == 5);
  h[4] = 0xfc00;  // -inf in float16
  CHECK(first_nonfinite(h.data(), DType::f16, 5) == 4);
  std::vector<std::uint16_t> b(5, 0x3f80);
  CHECK(first_nonfinite(b.data(), DType::bf16, 5) == 5);
  b[1] = 0x7fc0;  // NaN in bfloat16
  CHECK(first_nonfinite(b.data(), DType::bf16, 5) == 1);
}

TEST_CASE("pretrained kernels: gemm_wide ref and simd against double, all dtypes, both layouts") {
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (DType t : {DType::f32, DType::f16, DType::bf16})
    for (bool trans : {false, true})
      for (std::size_t m : {1, 3, 4, 5, 8, 9})
        for (std::size_t n : {1, 5, 63, 64, 65, 131, 4099})
          for (std::size_t k : {1, 4, 5, 17}) {
            CAPTURE(int(t));
            CAPTURE(trans);
            CAPTURE(m);
            CAPTURE(n);
            CAPTURE(k);
            std::vector<float> a(m * k), bias(n), c0(m * n);
            for (auto& x : a) x = nd(rng);
            for (auto& x : bias) x = nd(rng);
            for (auto& x : c0) x = nd(rng);
            // B [k, n] as stored: [k][n+2] (ldb n+2) or transposed [n][k+1] (ldb k+1).
            const std::size_t ldb = trans ? k + 1 : n + 2, elems = (trans ? n : k) * ldb;
            std::vector<float> bf(elems);
            std::vector<std::uint16_t> bh;
            if (t == DType::f32)
              for (auto& x : bf) x = nd(rng);
            else
              bh = random_halves(rng, elems, t);
            const void* b = t == DType::f32 ? static_cast<const void*>(bf.data()) : bh.data();
            for (bool acc : {false, true}) {
              std::vector<double> want(m * n);
              for (std::size_t i = 0; i < m; ++i)
                for (std::size_t j = 0; j < n; ++j) {
                  double s = (acc ? c0[i * n + j] : 0.0) + bias[j];
                  for (std::size_t p = 0; p < k; ++p)
                    s += double(a[i * k + p]) * load_element(b, t, trans ? j * ldb + p : p * ldb + j);
                  want[i * n + j] = s;
                }
              std::vector<float> cr = c0, cs = c0;
              WideGemmArgs g{m, n, k, a.data(), k, b, t, ldb, trans, cr.data(), n, bias.data(), acc};
              gemm_wide_ref(g);
              g.c = cs.data();
              Guarded ws(gemm_wide_workspace_floats(g));
              gemm_wide_simd(g, ws.data());
              CHECK(worst(cr, want, 1e-5, 1e-5) <= 1);
              CHECK(worst(cs, want, 1e-5, 1e-5) <= 1);
              CHECK(ws.intact());
            }
          }
}

TEST_CASE("pretrained kernels: embed_wide adds widened token and position rows") {
  std::mt19937 rng(5);
  for (DType t : {DType::f32, DType::f16, DType::bf16})
    for (std::size_t d : {1, 4, 5, 300}) {
      CAPTURE(int(t));
      CAPTURE(d);
      const std::size_t vocab = 7, ctx = 6, tl = 5;
      std::vector<float> tef(vocab * d), pef(ctx * d);
      std::normal_distribution<float> nd;
      for (auto& x : tef) x = nd(rng);
      for (auto& x : pef) x = nd(rng);
      auto teh = random_halves(rng, vocab * d, t == DType::f32 ? DType::bf16 : t);
      auto peh = random_halves(rng, ctx * d, t == DType::f32 ? DType::bf16 : t);
      const void* te = t == DType::f32 ? static_cast<const void*>(tef.data()) : teh.data();
      const void* pe = t == DType::f32 ? static_cast<const void*>(pef.data()) : peh.data();
      const std::int32_t tokens[tl] = {3, 0, 6, 3, 1};
      std::vector<float> xr(tl * d), xs(tl * d);
      std::vector<double> want(tl * d);
      for (std::size_t p = 0; p < tl; ++p)
        for (std::size_t c = 0; c < d; ++c)
          want[p * d + c] = double(load_element(te, t, tokens[p] * d + c)) + load_element(pe, t, p * d + c);
      embed_wide_ref(tokens, tl, d, te, t, pe, t, xr.data());
      embed_wide_simd(tokens, tl, d, te, t, pe, t, xs.data());
      CHECK(worst(xr, want, 1e-6, 1e-6) <= 1);
      CHECK(worst(xs, want, 1e-6, 1e-6) <= 1);
    }
}

TEST_CASE("pretrained kernels: gemm_wide and embed_wide on float32 weights packed at load") {
  const std::size_t nr = gemm_packed_panel_cols();
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (std::size_t m : {1, 3, 4, 5, 8, 9})
    for (std::size_t n : {std::size_t(1), nr - 1, nr, 2 * nr + 3, 4 * nr + 1})
      for (std::size_t k : {1, 5, 17, 64}) {
        CAPTURE(m);
        CAPTURE(n);
        CAPTURE(k);
        std::vector<float> a(m * k), bias(n), c0(m * n), b(k * n), packed(k * n);
        for (auto* v : {&a, &bias, &c0, &b})
          for (auto& x : *v) x = nd(rng);
        pack_b_panels_ref(b.data(), n, false, k, n, packed.data());  // B [k, n] as stored
        for (bool acc : {false, true}) {
          std::vector<double> want(m * n);
          for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
              double s = (acc ? c0[i * n + j] : 0.0) + bias[j];
              for (std::size_t p = 0; p < k; ++p) s += double(a[i * k + p]) * b[p * n + j];
              want[i * n + j] = s;
            }
          std::vector<float> cr = c0, cs = c0;
          WideGemmArgs g{m, n,     k,         a.data(), k,           packed.data(), DType::f32,
                         0, false, cr.data(), n,        bias.data(), acc,           true};
          gemm_wide_ref(g);
          g.c = cs.data();
          Guarded ws(gemm_wide_workspace_floats(g));
          gemm_wide_simd(g, ws.data());
          CHECK(worst(cr, want, 1e-5, 1e-5) <= 1);
          CHECK(worst(cs, want, 1e-5, 1e-5) <= 1);
          CHECK(ws.intact());
        }
      }
  // The embedding lookup reads a packed wte ([vocab, d] stored, packed as wte^T: k = d, n = vocab).
  for (std::size_t vocab : {std::size_t(3), nr + 1, 3 * nr + 2})
    for (std::size_t d : {1, 4, 5, 300}) {
      CAPTURE(vocab);
      CAPTURE(d);
      const std::size_t tl = 6;
      std::vector<float> te(vocab * d), pe(tl * d), packed(vocab * d);
      for (auto& x : te) x = nd(rng);
      for (auto& x : pe) x = nd(rng);
      pack_b_panels_ref(te.data(), d, true, d, vocab, packed.data());
      const std::int32_t tokens[tl] = {0, std::int32_t(vocab - 1), 1, std::int32_t(vocab / 2), 0, 2};
      std::vector<double> want(tl * d);
      for (std::size_t p = 0; p < tl; ++p)
        for (std::size_t c = 0; c < d; ++c) want[p * d + c] = double(te[tokens[p] * d + c]) + pe[p * d + c];
      std::vector<float> xr(tl * d), xs(tl * d);
      embed_wide_ref(tokens, tl, d, packed.data(), DType::f32, pe.data(), DType::f32, xr.data(), vocab);
      embed_wide_simd(tokens, tl, d, packed.data(), DType::f32, pe.data(), DType::f32, xs.data(), vocab);
      CHECK(worst(xr, want, 1e-6, 1e-6) <= 1);
      CHECK(worst(xs, want, 1e-6, 1e-6) <= 1);
    }
}
