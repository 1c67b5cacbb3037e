// The causal tools on a grouped-query Llama and on BERT against the float64 answers of
// tests/golden/findings/causal_families.py (make_families.py's forward with a patch point on each
// head's output; patchHeads by one whole patched forward per head): patching, patch_heads on the
// shared and the naive path, and direct logit attribution (Llama; BERT's refusal), within 1e-4
// of the largest value of each case. BERT's metric is read at a [MASK], and one case of each kind
// is a pair with token types 1. Native only (reads files).
#ifndef __EMSCRIPTEN__
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fixture_models.hpp"
#include "headlab/pretrained.hpp"

using namespace headlab;
using namespace headlab::test;

namespace {

std::string findings() {
  return golden() + "findings/";
}

std::string families() {
  return golden() + "families/";
}

// The worst error of each kind over a fixture, relative to each case's largest value.
struct Worst {
  double patch = 0, shared = 0, naive = 0, dla = 0;
};

Worst check_fixture(const std::string& name) {
  const json expected = read_json(findings() + "causal-" + name + ".json");
  auto m = load_model(families() + name + "/");
  const std::size_t big_l = m->config().num_layers, nh = m->config().num_heads;
  REQUIRE(expected.at("shapes").at("layers") == big_l);
  REQUIRE(expected.at("shapes").at("heads") == nh);
  const double tol = 1e-4;
  Worst worst;
  for (const json& c : expected.at("patch")) {
    const auto ids = ids_of(c, "ids"), source = ids_of(c, "source"), types = ids_of(c, "tokenTypes");
    std::vector<std::uint8_t> heads(big_l * nh, 0);
    for (const json& h : c.at("heads")) heads[std::size_t(h[0]) * nh + std::size_t(h[1])] = 1;
    PretrainedRunOptions o;
    o.all_logits = true;
    o.token_types = types.empty() ? nullptr : types.data();
    o.patch_heads = heads.data();
    o.patch_source = source.data();
    o.patch_source_length = source.size();
    PretrainedRunResult r;
    REQUIRE(m->run(ids.data(), ids.size(), o, &r) == "");
    const std::vector<double> want = c.at("logits");
    const double err = max_abs(r.logits, want) / largest(want);
    CAPTURE(err);
    CHECK(err <= tol);
    worst.patch = std::max(worst.patch, err);
    // The patch moves the logits: the unpatched run is far from them.
    PretrainedRunOptions plain;
    plain.all_logits = true;
    plain.token_types = o.token_types;
    REQUIRE(m->run(ids.data(), ids.size(), plain, &r) == "");
    CHECK(max_abs(r.logits, want) / largest(want) > 100 * tol);
  }
  for (const json& c : expected.at("patchHeads")) {
    const auto clean = ids_of(c, "clean"), corrupted = ids_of(c, "corrupted"),
               types = ids_of(c, "tokenTypes");
    PatchHeadsArgs a;
    a.clean = clean.data(), a.corrupted = corrupted.data(), a.t = clean.size();
    a.answer = c.at("answer"), a.wrong = c.at("wrong"), a.at = c.at("at");
    a.token_types = types.empty() ? nullptr : types.data();
    const std::vector<double> want = c.at("effects");
    PatchHeadsResult shared, naive;
    REQUIRE(m->patch_heads(a, &shared) == "");
    REQUIRE(m->patch_heads(a, &naive, Path::simd, true) == "");
    const double scale = largest(want), err = max_abs(shared.effects, want) / scale,
                 naive_err = max_abs(naive.effects, want) / scale;
    CAPTURE(a.at);
    CAPTURE(err);
    CAPTURE(naive_err);
    CHECK(err <= tol);
    CHECK(naive_err <= tol);
    worst.shared = std::max(worst.shared, err);
    worst.naive = std::max(worst.naive, naive_err);
    for (const PatchHeadsResult* p : {&shared, &naive}) {
      CHECK(std::abs(p->metric_clean - double(c.at("metricClean"))) <= tol * scale);
      CHECK(std::abs(p->metric_corrupted - double(c.at("metricCorrupted"))) <= tol * scale);
    }
  }
  for (const json& c : expected.at("dla")) {
    const auto ids = ids_of(c, "ids");
    LogitAttribution d;
    REQUIRE(m->direct_logit_attribution(ids.data(), ids.size(), c.at("answer"), c.at("wrong"), c.at("at"),
                                        &d) == "");
    const std::vector<double> heads = c.at("heads"), mlps = c.at("mlps");
    const double scale = std::max(largest(heads), largest(mlps)),
                 err = std::max(max_abs(d.heads, heads), max_abs(d.mlps, mlps)) / scale;
    CAPTURE(err);
    CHECK(err <= tol);
    worst.dla = std::max(worst.dla, err);
    CHECK(std::abs(d.scale - double(c.at("scale"))) <= tol * double(c.at("scale")));
    CHECK(std::abs(d.logit_diff - double(c.at("logitDiff"))) <=
          tol * std::abs(double(c.at("logitDiff"))) + 1e-5);
  }
  return worst;
}

}  // namespace

TEST_CASE("causal families: grouped-query Llama, patching, patch_heads and attribution against float64") {
  const Worst w = check_fixture("llama-gqa");
  MESSAGE("llama-gqa worst error / largest: patch " << w.patch << ", patch_heads shared " << w.shared
                                                    << ", naive " << w.naive << ", dla " << w.dla);
}

TEST_CASE("causal families: BERT, patching and patch_heads at a mask, with token types, against float64") {
  const Worst w = check_fixture("bert");
  MESSAGE("bert worst error / largest: patch " << w.patch << ", patch_heads shared " << w.shared << ", naive "
                                               << w.naive);
  // BERT normalises after every layer: no sum of parts reaches its logits, and attribution says so.
  const json expected = read_json(findings() + "causal-bert.json");
  CHECK(expected.at("dla").empty());
  auto m = load_model(families() + "bert/");
  const json& c = expected.at("patchHeads").at(0);
  const auto ids = ids_of(c, "clean");
  LogitAttribution d;
  const std::string e =
      m->direct_logit_attribution(ids.data(), ids.size(), c.at("answer"), c.at("wrong"), c.at("at"), &d);
  CHECK(e.find("normalises the residual after every layer") != std::string::npos);
  CHECK(e.find("masked-LM head") != std::string::npos);
  // A token type past the model's is refused in words, and the model keeps working.
  const auto corrupted = ids_of(c, "corrupted");
  std::vector<std::int32_t> types(ids.size(), 0);
  types[2] = 2;
  PatchHeadsArgs a;
  a.clean = ids.data(), a.corrupted = corrupted.data(), a.t = ids.size();
  a.answer = c.at("answer"), a.wrong = c.at("wrong"), a.at = c.at("at"), a.token_types = types.data();
  PatchHeadsResult p;
  CHECK(m->patch_heads(a, &p) == "token_types: token type 2 at position 2 is outside 0..1");
  types[2] = 1;
  CHECK(m->patch_heads(a, &p) == "");
}

#endif
