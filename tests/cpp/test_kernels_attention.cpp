// Fused attention (online softmax, attention_fused.hpp) against independent
// answers: a double-precision single-head attention written here, the
// materialising Path::ref forward and the double reference in reference.hpp.
// Each workspace is checked for writes past its advertised size. The packed
// GEMM is in test_kernels_gemm.cpp, exp2 in test_kernels_elementwise.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "headlab/attention_fused.hpp"
#include "headlab/kernels.hpp"
#include "headlab/mha.hpp"
#include "reference.hpp"
#include "checks.hpp"

using namespace headlab;
using namespace headlab::test;

namespace {

struct Head {
  std::size_t t_q, t_k, d_k, d_v, ldq, ldk, ldv, ldo;
  std::vector<float> q, k, v;
  std::vector<std::uint8_t> mask;  // empty = none
  bool causal;
};

Head random_head(std::mt19937& rng, std::size_t t_q, std::size_t t_k, std::size_t d_k, std::size_t d_v,
                 bool causal, int mask_kind, float spread = 1.0f) {
  Head h{t_q, t_k, d_k, d_v, d_k + 3, d_k + 1, d_v + 2, d_v + 5, {}, {}, {}, {}, causal};
  h.q = ref::random_vec(rng, t_q * h.ldq, spread);
  h.k = ref::random_vec(rng, t_k * h.ldk);
  h.v = ref::random_vec(rng, t_k * h.ldv);
  if (mask_kind == 1) {  // every third key padded
    h.mask.assign(t_k, 1);
    for (std::size_t j = 0; j < t_k; j += 3) h.mask[j] = 0;
  } else if (mask_kind == 2) {  // the first keys padded: early causal rows see nothing
    h.mask.assign(t_k, 1);
    for (std::size_t j = 0; j < std::min<std::size_t>(t_k, 5); ++j) h.mask[j] = 0;
  } else if (mask_kind == 3) {  // everything padded
    h.mask.assign(t_k, 0);
  } else if (mask_kind == 4) {  // random, mostly padded
    h.mask.assign(t_k, 0);
    for (auto& m : h.mask) m = (rng() % 5 == 0) ? 1 : 0;
  }
  return h;
}

AttentionArgs args(const Head& h, float* o) {
  AttentionArgs a;
  a.t_q = h.t_q;
  a.t_k = h.t_k;
  a.d_k = h.d_k;
  a.d_v = h.d_v;
  a.q = h.q.data();
  a.ldq = h.ldq;
  a.k = h.k.data();
  a.ldk = h.ldk;
  a.v = h.v.data();
  a.ldv = h.ldv;
  a.o = o;
  a.ldo = h.ldo;
  a.key_mask = h.mask.empty() ? nullptr : h.mask.data();
  a.causal = h.causal;
  a.scale = 1.0f / std::sqrt(static_cast<float>(h.d_k));
  return a;
}

// softmax(q k^T / sqrt(d_k)) v in double, straight from the definition.
std::vector<double> attention_double(const Head& h) {
  std::vector<double> o(h.t_q * h.ldo, 0.0);
  for (std::size_t i = 0; i < h.t_q; ++i) {
    std::vector<double> s(h.t_k);
    double mx = -INFINITY;
    for (std::size_t j = 0; j < h.t_k; ++j) {
      const bool seen = !(h.causal && j > i) && (h.mask.empty() || h.mask[j] != 0);
      double dot = 0;
      for (std::size_t c = 0; c < h.d_k; ++c) dot += double(h.q[i * h.ldq + c]) * h.k[j * h.ldk + c];
      s[j] = seen ? dot / std::sqrt(double(h.d_k)) : -INFINITY;
      mx = std::max(mx, s[j]);
    }
    if (std::isinf(mx)) continue;  // nothing to attend: zeros
    double sum = 0;
    for (double x : s) sum += std::exp(x - mx);
    for (std::size_t j = 0; j < h.t_k; ++j) {
      const double wgt = std::exp(s[j] - mx) / sum;
      for (std::size_t c = 0; c < h.d_v; ++c) o[i * h.ldo + c] += wgt * h.v[j * h.ldv + c];
    }
  }
  return o;
}

// Only the [t_q, d_v] part of an output with leading dimension ldo.
template <class T>
std::vector<double> block(const std::vector<T>& o, const Head& h) {
  std::vector<double> r;
  for (std::size_t i = 0; i < h.t_q; ++i)
    for (std::size_t c = 0; c < h.d_v; ++c) r.push_back(double(o[i * h.ldo + c]));
  return r;
}

}  // namespace

TEST_CASE("attention_fused_simd and _ref match a double softmax(QK^T/sqrt(d_k))V") {
  std::mt19937 rng(7);
  const std::size_t ts[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 33, 63, 64, 65, 100, 129, 200};
  unsigned n_cases = 0;
  for (std::size_t d_k : {1, 2, 3, 4, 5, 8, 17, 64})
    for (std::size_t t : ts) {
      const std::size_t d_v =
          (t % 3 == 0) ? d_k : (t % 3 == 1 ? 2 * d_k + 1 : std::max<std::size_t>(1, d_k / 2 + 3));
      const std::size_t t_k = (t % 2 == 0) ? t : t + 11;  // cross-attention lengths too
      for (int variant = 0; variant < 6; ++variant) {
        const bool causal = (variant % 2 == 1) && t_k == t;
        const int mask_kind = variant / 2 == 0 ? 0 : (variant / 2 == 1 ? 1 : 2 + int(t % 3));
        if ((variant % 2 == 1) && !causal) continue;
        ++n_cases;
        CAPTURE(d_k);
        CAPTURE(d_v);
        CAPTURE(t);
        CAPTURE(t_k);
        CAPTURE(causal);
        CAPTURE(mask_kind);
        const Head h = random_head(rng, t, t_k, d_k, d_v, causal, mask_kind);
        const auto want = attention_double(h);
        std::vector<float> o_ref(h.t_q * h.ldo, -7.0f), o_simd(h.t_q * h.ldo, -7.0f);
        Guarded ws_ref(attention_fused_ref_workspace_floats(args(h, nullptr)));
        Guarded ws_simd(attention_fused_simd_workspace_floats(args(h, nullptr)));
        attention_fused_ref(args(h, o_ref.data()), ws_ref.data());
        attention_fused_simd(args(h, o_simd.data()), ws_simd.data());
        CHECK(ws_ref.intact());
        CHECK(ws_simd.intact());
        CHECK(ref::allclose(block(o_ref, h), block(want, h), 2e-6, 1e-5, "fused ref vs double"));
        CHECK(ref::allclose(block(o_simd, h), block(want, h), 2e-6, 1e-5, "fused simd vs double"));
        // Columns between rows (ldo > d_v) are not touched.
        bool gaps_untouched = true;
        for (std::size_t i = 0; i < h.t_q; ++i)
          for (std::size_t c = h.d_v; c < h.ldo; ++c)
            gaps_untouched = gaps_untouched && o_simd[i * h.ldo + c] == -7.0f;
        CHECK(gaps_untouched);
      }
    }
  CHECK(n_cases > 400);
}

TEST_CASE("fused attention: rows with nothing to attend are exactly zero, never NaN") {
  std::mt19937 rng(8);
  for (std::size_t t : {1, 5, 33, 70}) {
    for (int mask_kind : {2, 3}) {
      CAPTURE(t);
      CAPTURE(mask_kind);
      const Head h = random_head(rng, t, t, 8, 6, true, mask_kind);
      std::vector<float> o(h.t_q * h.ldo, NAN);
      Guarded ws(attention_fused_simd_workspace_floats(args(h, nullptr)));
      attention_fused_simd(args(h, o.data()), ws.data());
      std::vector<float> o_ref(h.t_q * h.ldo, NAN), acc(h.d_v);
      attention_fused_ref(args(h, o_ref.data()), acc.data());
      for (std::size_t i = 0; i < h.t_q; ++i) {
        // Causal row i sees keys 0..i; mask 2 pads keys 0..4, mask 3 pads them all.
        const bool empty = mask_kind == 3 || i < 5;
        for (std::size_t c = 0; c < h.d_v; ++c) {
          CAPTURE(i);
          CHECK(!std::isnan(o[i * h.ldo + c]));
          CHECK(!std::isnan(o_ref[i * h.ldo + c]));
          if (empty) {
            CHECK(o[i * h.ldo + c] == 0.0f);
            CHECK(o_ref[i * h.ldo + c] == 0.0f);
          }
        }
      }
    }
  }
}

TEST_CASE("fused attention stays finite and correct with scores in the thousands") {
  std::mt19937 rng(9);
  for (bool causal : {false, true}) {
    const Head h = random_head(rng, 70, 70, 16, 16, causal, 1, 80.0f);
    const auto want = attention_double(h);
    std::vector<float> o(h.t_q * h.ldo);
    Guarded ws(attention_fused_simd_workspace_floats(args(h, nullptr)));
    attention_fused_simd(args(h, o.data()), ws.data());
    for (std::size_t i = 0; i < h.t_q; ++i)
      for (std::size_t c = 0; c < h.d_v; ++c) CHECK(std::isfinite(o[i * h.ldo + c]));
    // Huge scores amplify the float rounding of the dot products themselves.
    CHECK(ref::allclose(block(o, h), block(want, h), 1e-3, 1e-3, "fused simd, huge scores"));
  }
}

namespace {

std::vector<float> forward(const ref::Problem& p, Path path, bool with_weights, std::size_t ws_floats,
                           bool* intact) {
  const auto& s = p.shape;
  std::vector<float> out(s.t_q * s.d_model, NAN), weights(s.num_heads * s.t_q * s.t_k, NAN);
  MhaOutputs o;
  o.output = out.data();
  if (with_weights) o.weights = weights.data();
  Guarded ws(ws_floats);
  mha_forward(s, p.inputs(), p.weights(), o, ws.data(), path);
  *intact = ws.intact();
  return out;
}

}  // namespace

TEST_CASE("mha_forward's fused path matches the materialising Path::ref and the double reference") {
  struct Case {
    std::size_t t_q, t_k, d_model, h, d_k, d_v;
    bool self, bias, causal, mask;
  };
  std::vector<Case> cases;
  for (std::size_t t : {1, 3, 4, 5, 17, 33, 64, 65, 100, 129})
    for (int flags = 0; flags < 8; ++flags)
      cases.push_back({t, t, 24, 3, 0, 0, true, (flags & 1) != 0, (flags & 2) != 0, (flags & 4) != 0});
  for (std::size_t t_q : {1, 6, 40})
    for (std::size_t t_k : {1, 7, 33, 90}) {
      cases.push_back({t_q, t_k, 16, 2, 0, 0, false, true, false, false});
      cases.push_back({t_q, t_k, 16, 2, 5, 11, false, false, false, true});  // d_k != d_v
    }
  cases.push_back({70, 70, 20, 4, 17, 3, true, true, true, true});
  cases.push_back({130, 130, 64, 1, 64, 64, true, true, true, false});
  cases.push_back({50, 50, 32, 8, 1, 2, true, false, false, true});
  unsigned seed = 300;
  for (const Case& c : cases) {
    ++seed;
    CAPTURE(seed);
    CAPTURE(c.t_q);
    CAPTURE(c.t_k);
    CAPTURE(c.d_model);
    CAPTURE(c.h);
    CAPTURE(c.causal);
    CAPTURE(c.mask);
    auto p = ref::random_problem(seed, c.t_q, c.t_k, c.d_model, c.h, c.d_k, c.d_v, c.self, c.bias, c.causal,
                                 c.mask);
    const auto& s = p.shape;
    const auto want = ref::mha(p);
    const std::size_t small = mha_workspace_floats(s, MhaWorkspaceFor::output_only);
    const std::size_t any = mha_workspace_floats(s);
    CHECK(small <= any);
    CHECK(mha_workspace_floats(s, MhaWorkspaceFor::any) == any);
    bool ok_mat = false, ok_simd = false, ok_ref = false, ok_big = false;
    const auto materialised = forward(p, Path::ref, true, any, &ok_mat);
    const auto fused_simd = forward(p, Path::simd, false, small, &ok_simd);
    const auto fused_ref = forward(p, Path::ref, false, small, &ok_ref);
    const auto fused_big_ws = forward(p, Path::simd, false, any, &ok_big);
    CHECK(ok_mat);
    CHECK(ok_simd);
    CHECK(ok_ref);
    CHECK(ok_big);
    CHECK(ref::allclose(fused_simd, materialised, 1e-6, 1e-5, "fused simd vs materialising ref"));
    CHECK(ref::allclose(fused_ref, materialised, 1e-6, 1e-5, "fused ref vs materialising ref"));
    CHECK(ref::allclose(fused_simd, want.output, 1e-6, 1e-5, "fused simd vs double"));
    CHECK(fused_big_ws == fused_simd);
  }
}

TEST_CASE("mha_forward, fused: all keys padded gives the output bias alone") {
  auto p = ref::random_problem(31, 9, 9, 8, 2, 0, 0, true, true, true, true);
  p.key_mask.assign(9, 0);
  bool ok = false;
  for (Path path : {Path::simd, Path::ref}) {
    const auto y = forward(p, path, false, mha_workspace_floats(p.shape, MhaWorkspaceFor::output_only), &ok);
    CHECK(ok);
    for (std::size_t t = 0; t < 9; ++t)
      for (std::size_t m = 0; m < 8; ++m) CHECK(y[t * 8 + m] == p.b_o[m]);
  }
}

TEST_CASE("fused workspace is O((t_q + t_k) d): far below the materialising one at long T") {
  MhaShape s;
  s.t_q = s.t_k = 4096;
  s.d_model = 512;
  s.num_heads = 8;
  REQUIRE(mha_resolve_shape(s).empty());
  const std::size_t small = mha_workspace_floats(s, MhaWorkspaceFor::output_only);
  INFO("output_only " << small << " floats, any " << mha_workspace_floats(s));
  CHECK(small < 4 * 4096 * 512 + 1024 * 1024);  // Qp, Kp, Vp, concat and scratch
  CHECK(mha_workspace_floats(s) >= s.t_q * s.t_k);
}

