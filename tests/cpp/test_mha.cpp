// The multi-head attention forward pass against the course's worked example
// and an independent double-precision reference.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "course_fixture.inc"
#include "headlab/mha.hpp"
#include "reference.hpp"

using namespace headlab;

namespace {

struct Run {
  std::vector<float> output, weights, q, k, v, scores, scaled, heads, concat;
};

Run run(const ref::Problem& p, Path path, bool intermediates = false) {
  const auto& s = p.shape;
  const std::size_t h = s.num_heads;
  Run r;
  r.output.assign(s.t_q * s.d_model, NAN);
  r.weights.assign(h * s.t_q * s.t_k, NAN);
  std::vector<float> ws(mha_workspace_floats(s));
  MhaOutputs out;
  out.output = r.output.data();
  out.weights = r.weights.data();
  if (intermediates) {
    r.q.resize(h * s.t_q * s.d_k);
    r.k.resize(h * s.t_k * s.d_k);
    r.v.resize(h * s.t_k * s.d_v);
    r.scores.resize(h * s.t_q * s.t_k);
    r.scaled.resize(h * s.t_q * s.t_k);
    r.heads.resize(h * s.t_q * s.d_v);
    r.concat.resize(s.t_q * h * s.d_v);
    out.intermediates = {r.q.data(), r.k.data(), r.v.data(), r.scores.data(),
                         r.scaled.data(), r.heads.data(), r.concat.data()};
  }
  mha_forward(s, p.inputs(), p.weights(), out, ws.data(), path);
  return r;
}

template <std::size_t N>
std::vector<double> values(const double (&a)[N]) {
  return std::vector<double>(a, a + N);
}

template <std::size_t N>
std::vector<float> floats(const double (&a)[N]) {
  return std::vector<float>(a, a + N);
}

// The course's worked example (tests/fixtures/course.json, compiled in as
// course_fixture.inc): ball, full, it; two heads with d_k = d_v = 2.
ref::Problem worked_example() {
  ref::Problem p;
  p.shape.t_q = p.shape.t_k = 3;
  p.shape.d_model = std::size_t(course::dModel);
  p.shape.num_heads = std::size_t(course::numHeads);
  REQUIRE(mha_resolve_shape(p.shape).empty());
  p.query = floats(course::query);  // ball, full, it
  // [d_model=4, h*d_k=4]: columns 0-1 head 1 (entity, bias), 2-3 head 2 (adjective, bias)
  p.w_q = floats(course::wQ);
  p.w_k = floats(course::wK);
  p.w_v = floats(course::wV);
  p.w_o = floats(course::wO);
  return p;
}

void check_close4(const float* got, std::vector<double> want) {
  for (std::size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    CAPTURE(got[i]);
    CHECK(std::fabs(got[i] - want[i]) <= 5e-5);  // the course rounds to 4 decimals
  }
}

}  // namespace

TEST_CASE("the course's worked example comes out to 4 decimals on both paths") {
  const auto p = worked_example();
  for (Path path : {Path::ref, Path::simd}) {
    CAPTURE(int(path));
    const Run r = run(p, path, true);
    const std::size_t it = 2, T = 3;
    // Head 1 then head 2 weights on (ball, full, it) for the query "it".
    check_close4(&r.weights[(0 * T + it) * T], values(course::weightsHead1));
    check_close4(&r.weights[(1 * T + it) * T], values(course::weightsHead2));
    // Raw scores 4, 1, 2 and scaled [2.8284, 0.7071, 1.4142] for head 1.
    check_close4(&r.scores[(0 * T + it) * T], values(course::rawScores1));
    check_close4(&r.scores[(1 * T + it) * T], values(course::rawScores2));
    check_close4(&r.scaled[(0 * T + it) * T], values(course::scaledScores1));
    // q1 = [1, 1], K1 = [[3,1],[0,1],[1,1]], V1 = [[1,0],[0,1],[1/3,1/3]]
    check_close4(&r.q[it * 2], values(course::q1));
    check_close4(&r.k[0], values(course::k1));
    check_close4(&r.v[0], values(course::v1));
    check_close4(&r.heads[(0 * T + it) * 2], values(course::headOutput1));
    check_close4(&r.heads[(1 * T + it) * 2], values(course::headOutput2));
    check_close4(&r.concat[it * 4], values(course::output));
    check_close4(&r.output[it * 4], values(course::output));
    // Every head attends to every token: all weights strictly positive.
    for (float w : r.weights) CHECK(w > 0.0f);
  }
}

TEST_CASE("forward matches the double reference over shapes, masks, biases and cross-attention") {
  struct Case {
    std::size_t t_q, t_k, d_model, h, d_k, d_v;
    bool self, bias, causal, mask;
  };
  std::vector<Case> cases;
  for (std::size_t t : {1, 3, 4, 5, 8, 17, 64})
    for (std::size_t dm_h : {0, 1, 2}) {
      const std::size_t dm[] = {4, 16, 24}, hh[] = {1, 4, 3};
      for (int flags = 0; flags < 4; ++flags)
        cases.push_back({t, t, dm[dm_h], hh[dm_h], 0, 0, true, (flags & 1) != 0, (flags & 2) != 0, false});
    }
  for (std::size_t t_q : {1, 4, 5, 9})
    for (std::size_t t_k : {1, 3, 4, 7, 33}) {
      cases.push_back({t_q, t_k, 8, 2, 0, 0, false, true, false, false});
      cases.push_back({t_q, t_k, 8, 2, 3, 5, false, false, false, true});
    }
  cases.push_back({6, 6, 12, 3, 5, 2, true, true, true, true});   // d_k != d_v
  cases.push_back({129, 129, 32, 4, 0, 0, true, true, true, true});
  unsigned seed = 100;
  for (const Case& c : cases) {
    ++seed;
    CAPTURE(seed);
    CAPTURE(c.t_q);
    CAPTURE(c.t_k);
    CAPTURE(c.d_model);
    CAPTURE(c.h);
    CAPTURE(c.causal);
    CAPTURE(c.mask);
    const auto p = ref::random_problem(seed, c.t_q, c.t_k, c.d_model, c.h, c.d_k, c.d_v, c.self,
                                       c.bias, c.causal, c.mask);
    const auto want = ref::mha(p);
    const Run a = run(p, Path::ref), b = run(p, Path::simd);
    CHECK(ref::allclose(a.output, want.output, 1e-5, 1e-4, "ref output vs double"));
    CHECK(ref::allclose(b.output, want.output, 1e-5, 1e-4, "simd output vs double"));
    CHECK(ref::allclose(a.weights, want.weights, 1e-6, 1e-4, "ref weights vs double"));
    CHECK(ref::allclose(b.weights, want.weights, 1e-6, 1e-4, "simd weights vs double"));
    CHECK(ref::allclose(b.output, a.output, 1e-5, 1e-4, "simd vs ref output"));
  }
}

TEST_CASE("a query row that can attend to nothing gets zero weights and zero head output") {
  auto p = ref::random_problem(7, 4, 5, 8, 2, 0, 0, false, false, false, true);
  p.key_mask.assign(5, 0);
  for (Path path : {Path::ref, Path::simd}) {
    const Run r = run(p, path, true);
    for (float w : r.weights) CHECK(w == 0.0f);
    for (float x : r.heads) CHECK(x == 0.0f);
    for (float x : r.output) CHECK(x == 0.0f);  // no bias: W^O of zeros is zero
  }
}

TEST_CASE("scores up to +-1e4 give finite, correct weights") {
  auto p = ref::random_problem(11, 9, 9, 8, 2, 0, 0, true, false, true, false);
  for (auto& x : p.query) x *= 60.0f;  // raw scores in the thousands
  const auto want = ref::mha(p);
  for (Path path : {Path::ref, Path::simd}) {
    const Run r = run(p, path, true);
    float biggest = 0;
    for (float s : r.scaled) if (std::isfinite(s)) biggest = std::max(biggest, std::fabs(s));
    INFO("largest |scaled score| " << biggest);
    CHECK(biggest > 1e3f);
    for (float w : r.weights) CHECK(std::isfinite(w));
    CHECK(ref::allclose(r.weights, want.weights, 1e-4, 1e-3, "weights with huge scores"));
  }
}

TEST_CASE("mha_resolve_shape defaults d_k, d_v and names the offending argument") {
  MhaShape s;
  s.t_q = s.t_k = 2;
  s.d_model = 512;
  s.num_heads = 8;
  CHECK(mha_resolve_shape(s).empty());
  CHECK(s.d_k == 64);
  CHECK(s.d_v == 64);

  MhaShape bad = s;
  bad.d_k = bad.d_v = 0;
  bad.num_heads = 3;
  CHECK(mha_resolve_shape(bad).find("numHeads") != std::string::npos);
  bad.d_k = 100;
  bad.d_v = 70;
  CHECK(mha_resolve_shape(bad).empty());

  MhaShape causal = s;
  causal.t_k = 3;
  causal.causal = true;
  CHECK(mha_resolve_shape(causal).find("causal") != std::string::npos);

  MhaShape zero = s;
  zero.d_model = 0;
  CHECK(mha_resolve_shape(zero).find("dModel") != std::string::npos);

  MhaShape huge = s;
  huge.t_q = huge.t_k = std::size_t{1} << 20;
  CHECK(mha_resolve_shape(huge).find("too large") != std::string::npos);
}

TEST_CASE("parameter count: 4 d_model^2 for every h that divides d_model") {
  for (std::size_t h : {1, 2, 4, 8, 16, 64}) {
    ParameterCount c;
    REQUIRE(parameter_count(512, h, 0, 0, false, c).empty());
    CHECK(c.w_q == 262144);
    CHECK(c.w_k == 262144);
    CHECK(c.w_v == 262144);
    CHECK(c.w_o == 262144);
    CHECK(c.weights == 1048576);
    CHECK(c.total == 1048576);
  }
  ParameterCount c;
  CHECK(parameter_count(512, 3, 0, 0, false, c).find("numHeads") != std::string::npos);
  REQUIRE(parameter_count(512, 3, 64, 32, true, c).empty());
  CHECK(c.w_q == 512 * 3 * 64);
  CHECK(c.w_v == 512 * 3 * 32);
  CHECK(c.w_o == 3 * 32 * 512);
  CHECK(c.bias == 2 * 3 * 64 + 3 * 32 + 512);
  CHECK(c.total == c.weights + c.bias);
}

TEST_CASE("head_mask: a switched-off head gives the output of W^O with its rows zeroed, on the fused and the materialising path") {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    // self and cross, biases, causal, d_k != d_v; 3 heads so that one, two or all can be off.
    const bool self = seed % 2 == 1, causal = self && seed % 3 == 0;
    auto p = ref::random_problem(seed, 5, 7, 12, 3, seed % 2 ? 0 : 3, seed % 2 ? 0 : 5, self, true, causal, false);
    const std::size_t h = p.shape.num_heads, dv = p.shape.d_v, dm = p.shape.d_model;
    for (unsigned bits = 0; bits < (1u << h); ++bits) {
      CAPTURE(seed);
      CAPTURE(bits);
      std::vector<std::uint8_t> mask(h);
      for (std::size_t i = 0; i < h; ++i) mask[i] = (bits >> i) & 1u;
      ref::Problem zeroed = p;  // the independent answer: W^O with the off heads' rows zeroed, in double
      for (std::size_t i = 0; i < h; ++i)
        if (!mask[i]) std::fill_n(zeroed.w_o.begin() + i * dv * dm, dv * dm, 0.0f);
      const auto want = ref::mha(zeroed);
      const auto all_on = ref::mha(p);
      for (Path path : {Path::ref, Path::simd}) {
        MhaInputs in = p.inputs();
        in.head_mask = mask.data();
        // Fused: only the output requested.
        std::vector<float> fused(p.shape.t_q * dm, NAN);
        std::vector<float> ws(mha_workspace_floats(p.shape));
        MhaOutputs out;
        out.output = fused.data();
        mha_forward(p.shape, in, p.weights(), out, ws.data(), path);
        CHECK(ref::allclose(fused, want.output, 1e-5, 1e-4, "fused output with head_mask vs zeroed W^O"));
        // Materialising: weights and head outputs are reported as computed, whatever the mask.
        std::vector<float> mat(p.shape.t_q * dm, NAN), weights(h * p.shape.t_q * p.shape.t_k, NAN);
        out.weights = weights.data();
        out.output = mat.data();
        mha_forward(p.shape, in, p.weights(), out, ws.data(), path);
        CHECK(ref::allclose(mat, want.output, 1e-5, 1e-4, "materialised output with head_mask vs zeroed W^O"));
        CHECK(ref::allclose(weights, all_on.weights, 1e-6, 1e-4, "weights unchanged by head_mask"));
      }
    }
  }
}
