// The causal tools (activation patching, patch_heads, direct logit attribution) against the
// float64 answers of tests/golden/findings/ (make_findings.py: a functional float64 forward
// and a hook-style float32 one, which agree): within 1e-4 of the largest value of each case
// (2e-3 for 16-bit weights); patch_heads' shared work against its naive form; the same bits
// on 1 and 3 threads; the trained IOI model's top-3 heads against PyTorch's own patching.
// Native only (reads files).
#ifndef __EMSCRIPTEN__
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fixture_models.hpp"
#include "headlab/pretrained.hpp"
#include "headlab/pretrained_pool.hpp"

using namespace headlab;
using namespace headlab::test;

namespace {

// The three largest values' indices, largest first, and the third's margin over the fourth.
std::vector<std::size_t> top3(const std::vector<double>& v, double* margin) {
  std::vector<std::size_t> i(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) i[k] = k;
  std::sort(i.begin(), i.end(), [&](std::size_t a, std::size_t b) { return v[a] > v[b]; });
  *margin = v[i[2]] - v[i[3]];
  return {i[0], i[1], i[2]};
}

PatchHeadsArgs args_of(const std::vector<std::int32_t>& clean, const std::vector<std::int32_t>& corrupted,
                       std::int32_t answer, std::int32_t wrong) {
  PatchHeadsArgs a;
  a.clean = clean.data(), a.corrupted = corrupted.data(), a.t = clean.size();
  a.answer = answer, a.wrong = wrong, a.at = clean.size() - 1;
  return a;
}

}  // namespace

TEST_CASE("causal: patching, patch_heads and direct logit attribution against the float64 answers") {
  for (const char* name : {"gpt2-f32", "gpt2-bf16", "neo-f32"}) {
    const std::string folder = name;
    CAPTURE(folder);
    const json expected = read_json(golden() + "findings/causal-" + folder + ".json");
    auto m = load_model(golden() + "pretrained/" + folder + "/");
    const double tol = folder.find("16") != std::string::npos ? 2e-3 : 1e-4;
    const std::size_t big_l = m->config().num_layers, nh = m->config().num_heads;
    for (const json& c : expected.at("patch")) {
      const auto ids = ids_of(c, "ids"), source = ids_of(c, "source");
      std::vector<std::uint8_t> heads(big_l * nh, 0);
      for (const json& h : c.at("heads")) heads[std::size_t(h[0]) * nh + std::size_t(h[1])] = 1;
      PretrainedRunOptions o;
      o.all_logits = true;
      o.patch_heads = heads.data();
      o.patch_source = source.data();
      o.patch_source_length = source.size();
      PretrainedRunResult r;
      REQUIRE(m->run(ids.data(), ids.size(), o, &r) == "");
      const std::vector<double> want = c.at("logits");
      const double err = max_abs(r.logits, want) / largest(want);
      CAPTURE(err);
      CHECK(err <= tol);
      // The patch moves the logits: the unpatched run is far from them.
      PretrainedRunOptions plain;
      plain.all_logits = true;
      REQUIRE(m->run(ids.data(), ids.size(), plain, &r) == "");
      CHECK(max_abs(r.logits, want) / largest(want) > 100 * tol);
    }
    for (const json& c : expected.at("patchHeads")) {
      const auto clean = ids_of(c, "clean"), corrupted = ids_of(c, "corrupted");
      const PatchHeadsArgs a = args_of(clean, corrupted, c.at("answer"), c.at("wrong"));
      const std::vector<double> want = c.at("effects");
      PatchHeadsResult shared, naive;
      REQUIRE(m->patch_heads(a, &shared) == "");
      REQUIRE(m->patch_heads(a, &naive, Path::simd, true) == "");
      const double scale = largest(want), err = max_abs(shared.effects, want) / scale,
                   naive_err = max_abs(naive.effects, want) / scale;
      CAPTURE(err);
      CAPTURE(naive_err);
      CHECK(err <= tol);
      CHECK(naive_err <= tol);
      CHECK(std::abs(shared.metric_clean - double(c.at("metricClean"))) <= tol * scale);
      CHECK(std::abs(shared.metric_corrupted - double(c.at("metricCorrupted"))) <= tol * scale);
    }
    for (const json& c : expected.at("dla")) {
      const auto ids = ids_of(c, "ids");
      LogitAttribution d;
      REQUIRE(m->direct_logit_attribution(ids.data(), ids.size(), c.at("answer"), c.at("wrong"), ids.size() - 1,
                                          &d) == "");
      const std::vector<double> heads = c.at("heads"), mlps = c.at("mlps");
      const double scale = std::max(largest(heads), largest(mlps));
      CHECK(max_abs(d.heads, heads) / scale <= tol);
      CHECK(max_abs(d.mlps, mlps) / scale <= tol);
      CHECK(std::abs(d.scale - double(c.at("scale"))) <= tol * double(c.at("scale")));
      CHECK(std::abs(d.logit_diff - double(c.at("logitDiff"))) <= tol * std::abs(double(c.at("logitDiff"))) + 1e-5);
    }
  }
}

TEST_CASE("causal: a patch from a run of another length, bad tokens and encoders' attribution are refused") {
  auto m = load_model(golden() + "pretrained/gpt2-f32/");
  const std::vector<std::int32_t> ids = {1, 2, 3, 4}, other = {1, 2, 3};
  std::vector<std::uint8_t> heads(m->config().num_layers * m->config().num_heads, 0);
  heads[1] = 1;
  PretrainedRunOptions o;
  o.patch_heads = heads.data();
  o.patch_source = other.data();
  o.patch_source_length = other.size();
  PretrainedRunResult r;
  const std::string e = m->run(ids.data(), ids.size(), o, &r);
  CHECK(e.find("patch.source is 3 tokens long and the run 4") != std::string::npos);
  PatchHeadsResult p;
  CHECK(m->patch_heads(args_of(ids, ids, 9999, 1), &p).find("answer must be a token id") == 0);
  // The model keeps working afterwards.
  CHECK(m->run(ids.data(), ids.size(), PretrainedRunOptions{}, &r) == "");
  auto bert = load_model(golden() + "families/bert/");
  LogitAttribution d;
  CHECK(bert->direct_logit_attribution(ids.data(), ids.size(), 5, 6, 3, &d).find("normalises the residual") !=
        std::string::npos);
}

TEST_CASE("causal: patch_heads gives the same bits on 1 and 3 threads, and on a window shorter than the text") {
  for (const char* name : {"pretrained/neo-f32", "families/mistral-window", "families/llama-gqa",
                           "families/pythia", "families/bert"}) {
    const std::string folder = name;
    CAPTURE(folder);
    auto m = load_model(golden() + folder + "/");
    const std::size_t v = m->config().vocab;
    std::vector<std::int32_t> clean(14), corrupted;
    for (std::size_t i = 0; i < clean.size(); ++i) clean[i] = std::int32_t((i * 37 + 11) % v);
    corrupted = clean;
    corrupted[6] = std::int32_t((corrupted[6] + 5) % v);
    corrupted[9] = std::int32_t((corrupted[9] + 7) % v);
    PatchHeadsArgs a = args_of(clean, corrupted, 3, 4);
    if (folder == "families/bert") a.at = 6;
    PatchHeadsResult one, naive, three;
    REQUIRE(m->patch_heads(a, &one) == "");
    // The shared work (prefix rows, earlier layers, batched heads) changes nothing but rounding.
    REQUIRE(m->patch_heads(a, &naive, Path::simd, true) == "");
    double scale = 0, err = 0;
    for (std::size_t i = 0; i < one.effects.size(); ++i) {
      scale = std::max(scale, double(std::abs(naive.effects[i])));
      err = std::max(err, double(std::abs(one.effects[i] - naive.effects[i])));
    }
    CAPTURE(err);
    CAPTURE(scale);
    CHECK(scale > 1e-3);
    CHECK(err <= 1e-4 * scale);
    m->set_pool(make_pretrained_pool(3));
    REQUIRE(m->patch_heads(a, &three) == "");
    CHECK(three.effects == one.effects);
  }
}

TEST_CASE("causal: on the trained IOI model, patch_heads and attribution single out PyTorch's top 3") {
  const std::string dir = golden() + "findings/ioi-model/";
  const json expected = read_json(dir + "expected.json");
  auto m = load_model(dir);
  const std::size_t lh = m->config().num_layers * m->config().num_heads;
  std::vector<double> effects(lh, 0.0), dla(lh, 0.0);
  for (const json& c : expected.at("cases")) {
    const auto clean = ids_of(c, "ids"), corrupted = ids_of(c, "corruptedIds");
    PatchHeadsResult p;
    REQUIRE(m->patch_heads(args_of(clean, corrupted, c.at("answerId"), c.at("wrongId")), &p) == "");
    LogitAttribution d;
    REQUIRE(m->direct_logit_attribution(clean.data(), clean.size(), c.at("answerId"), c.at("wrongId"),
                                        clean.size() - 1, &d) == "");
    for (std::size_t i = 0; i < lh; ++i) effects[i] += p.effects[i], dla[i] += d.heads[i];
    // Single prompts: the same three heads wherever PyTorch's third beats its fourth clearly.
    double margin = 0;
    const std::vector<double> pe(p.effects.begin(), p.effects.end()), de(d.heads.begin(), d.heads.end());
    const json want_p = c.at("top3Patch"), want_d = c.at("top3Dla");
    auto flat = [&](const json& top) {
      std::vector<std::size_t> f;
      for (const json& x : top) f.push_back(std::size_t(x[0]) * m->config().num_heads + std::size_t(x[1]));
      std::sort(f.begin(), f.end());
      return f;
    };
    auto sorted = [](std::vector<std::size_t> v) {
      std::sort(v.begin(), v.end());
      return v;
    };
    if (double(c.at("top3PatchMargin")) > 0.05) CHECK(sorted(top3(pe, &margin)) == flat(want_p));
    if (double(c.at("top3DlaMargin")) > 0.05) CHECK(sorted(top3(de, &margin)) == flat(want_d));
  }
  const json mean = expected.at("mean");
  const std::size_t nh = m->config().num_heads;
  double margin = 0;
  auto named = [&](const std::vector<std::size_t>& top) {
    std::vector<std::vector<std::size_t>> out;
    for (std::size_t i : top) out.push_back({i / nh, i % nh});
    return out;
  };
  CHECK(named(top3(effects, &margin)) == mean.at("top3Patch").get<std::vector<std::vector<std::size_t>>>());
  CHECK(named(top3(dla, &margin)) == mean.at("top3Dla").get<std::vector<std::vector<std::size_t>>>());
}

#endif
