// generate's key-value cache on every decoder checkpoint under tests/golden/ (families/ and the
// GPT-2 / GPT-Neo ones in pretrained/): each cached step's logits against a whole run over the
// same prefix (run(), which keeps no cache), within 1e-5 of the largest logit, for ten steps after
// a six-token prompt (past the four-token windows of GPT-Neo's local layer and Mistral); the same
// with heads switched off; the tokens of the cached and the uncached path, greedy and sampled;
// the cached steps on 2 threads bit for bit those on 1. Native only (reads files).
#ifndef __EMSCRIPTEN__
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "fixture_models.hpp"
#include "headlab/pretrained.hpp"
#include "headlab/pretrained_pool.hpp"

using namespace headlab;
using namespace headlab::test;

namespace {

const char* const kDecoders[] = {
    "families/llama-gqa", "families/llama-sp-bf16", "families/qwen2", "families/mistral-window",
    "families/pythia",    "families/phi3",          "families/gemma", "pretrained/gpt2-f32",
    "pretrained/gpt2-f16", "pretrained/gpt2-bf16",  "pretrained/neo-f32", "pretrained/neo-bf16",
};

constexpr std::size_t kPrompt = 6, kSteps = 10;

std::vector<std::int32_t> prompt_of(const PretrainedModel& m, std::uint32_t seed) {
  std::vector<std::int32_t> ids(kPrompt);
  std::uint32_t s = seed;
  for (auto& id : ids) {
    s = s * 1664525u + 1013904223u;
    id = std::int32_t((s >> 8) % m.config().vocab);
  }
  return ids;
}

// The largest |logit - run's logit| of each step over the step's largest |logit|, the prefix
// for step s being the prompt and the first s generated tokens.
double worst_step_error(PretrainedModel& m, const std::vector<std::int32_t>& prompt,
                        const std::vector<std::int32_t>& got, const std::vector<float>& steps,
                        const std::uint8_t* ablate, Path path) {
  const std::size_t v = m.config().vocab;
  REQUIRE(steps.size() >= got.size() * v);
  std::vector<std::int32_t> seq = prompt;
  PretrainedRunOptions o;
  o.ablate = ablate;
  double worst = 0;
  for (std::size_t s = 0; s < got.size(); ++s) {
    PretrainedRunResult r;
    REQUIRE(m.run(seq.data(), seq.size(), o, &r, path) == "");
    double err = 0, big = 0;
    for (std::size_t j = 0; j < v; ++j) {
      err = std::max(err, std::abs(double(steps[s * v + j]) - r.logits[j]));
      big = std::max(big, std::abs(double(r.logits[j])));
    }
    worst = std::max(worst, err / big);
    seq.push_back(got[s]);
  }
  return worst;
}

std::vector<std::uint8_t> some_heads_off(const PretrainedModel& m) {
  const std::size_t big_l = m.config().num_layers, nh = m.config().num_heads;
  std::vector<std::uint8_t> off(big_l * nh, 0);
  off[1 % nh] = 1;                  // layer 0
  off[(big_l - 1) * nh] = 1;        // the last layer's first head
  return off;
}

}  // namespace

TEST_CASE("pretrained generate: each cached step's logits are a whole run's over the same prefix") {
  for (const char* name : kDecoders) {
    const std::string fixture = name;
    CAPTURE(fixture);
    auto m = load_model(golden() + name + "/");
    for (Path path : {Path::simd, Path::ref}) {
      CAPTURE(int(path));
      const auto prompt = prompt_of(*m, 11);
      std::vector<std::int32_t> got;
      std::vector<float> steps;
      PretrainedGenerateOptions g;
      g.step_logits = &steps;
      REQUIRE(m->generate(prompt.data(), prompt.size(), kSteps, 0.0f, 1, -1, &got, path, g) == "");
      REQUIRE(got.size() == kSteps);
      // One step per token, the last token's too (whose own logits are never needed).
      CHECK(steps.size() == kSteps * m->config().vocab);
      const double err = worst_step_error(*m, prompt, got, steps, nullptr, path);
      CAPTURE(err);
      CHECK(err <= 1e-5);
    }
  }
}

TEST_CASE("pretrained generate: switched-off heads stay off in every cached step") {
  for (const char* name : kDecoders) {
    const std::string fixture = name;
    CAPTURE(fixture);
    auto m = load_model(golden() + name + "/");
    const auto prompt = prompt_of(*m, 12);
    const auto off = some_heads_off(*m);
    std::vector<std::int32_t> got, plain;
    std::vector<float> steps, plain_steps;
    PretrainedGenerateOptions g;
    g.ablate = off.data();
    g.step_logits = &steps;
    REQUIRE(m->generate(prompt.data(), prompt.size(), kSteps, 0.0f, 1, -1, &got, Path::simd, g) == "");
    REQUIRE(got.size() == kSteps);
    const double err = worst_step_error(*m, prompt, got, steps, off.data(), Path::simd);
    CAPTURE(err);
    CHECK(err <= 1e-5);
    // The switched-off heads matter: the steps without them differ from a run with every head.
    CHECK(worst_step_error(*m, prompt, got, steps, nullptr, Path::simd) > 1e-3);
  }
}

TEST_CASE("pretrained generate: the cached and the uncached path draw the same tokens") {
  for (const char* name : kDecoders) {
    const std::string fixture = name;
    CAPTURE(fixture);
    auto m = load_model(golden() + name + "/");
    const auto prompt = prompt_of(*m, 13);
    for (float temperature : {0.0f, 1.0f, 0.7f}) {
      CAPTURE(temperature);
      for (std::uint64_t seed : {1u, 5u}) {
        std::vector<std::int32_t> cached, uncached;
        std::vector<float> cached_steps, uncached_steps;
        PretrainedGenerateOptions g;
        g.step_logits = &cached_steps;
        REQUIRE(m->generate(prompt.data(), prompt.size(), kSteps, temperature, seed, -1, &cached, Path::simd, g) ==
                "");
        g.cached = false;
        g.step_logits = &uncached_steps;
        REQUIRE(m->generate(prompt.data(), prompt.size(), kSteps, temperature, seed, -1, &uncached, Path::simd,
                            g) == "");
        CHECK(cached == uncached);
        // The uncached path is run's own arithmetic (bit for bit).
        CHECK(worst_step_error(*m, prompt, uncached, uncached_steps, nullptr, Path::simd) == 0.0);
      }
    }
  }
}

TEST_CASE("pretrained generate: cached steps on 2 threads give 1 thread's bits") {
  for (const char* name : kDecoders) {
    const std::string fixture = name;
    CAPTURE(fixture);
    auto one = load_model(golden() + name + "/");
    auto two = load_model(golden() + name + "/");
    two->set_pool(make_pretrained_pool(2));
    REQUIRE(two->threads() == 2);
    const auto prompt = prompt_of(*one, 14);
    const auto off = some_heads_off(*one);
    for (bool ablate : {false, true}) {
      std::vector<std::int32_t> a, b;
      std::vector<float> sa, sb;
      PretrainedGenerateOptions g;
      g.ablate = ablate ? off.data() : nullptr;
      g.step_logits = &sa;
      REQUIRE(one->generate(prompt.data(), prompt.size(), kSteps, 0.8f, 3, -1, &a, Path::simd, g) == "");
      g.step_logits = &sb;
      REQUIRE(two->generate(prompt.data(), prompt.size(), kSteps, 0.8f, 3, -1, &b, Path::simd, g) == "");
      CHECK(a == b);
      REQUIRE(sa.size() == sb.size());
      CHECK(std::memcmp(sa.data(), sb.data(), sa.size() * sizeof(float)) == 0);
    }
  }
}
#endif
