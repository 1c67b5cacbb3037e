// The pretrained engine against PyTorch-made checkpoints and their float64
// answers (tests/golden/pretrained/, written by make_pretrained.py): logits and
// attention within 1e-4 (float32 weights) and 2e-3 (float16/bfloat16), ablation,
// the logit lens, head scores, greedy generation, every checkpoint variant; and
// damaged copies of those files. Native only: it reads the fixture files, which
// the wasm doctest run under Node has no file system for (the Node test
// tests/js/pretrained-core.test.mjs loads the same fixtures through the module).
#ifndef __EMSCRIPTEN__
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "checks.hpp"
#include "fixture_models.hpp"
#include "headlab/pretrained.hpp"

using namespace headlab;
using namespace headlab::test;
using nlohmann::json;

namespace {

std::string fixtures() {
  return golden() + "pretrained/";
}

std::unique_ptr<PretrainedModel> load_fixture(const std::string& folder) {
  return load_model(fixtures() + folder + "/");
}

const char* const kFolders[] = {"gpt2-f32",     "gpt2-noprefix-f32", "gpt2-f16", "gpt2-bf16",
                                "gpt2-sharded", "neo-f32",           "neo-bf16"};

}  // namespace

TEST_CASE("pretrained golden: logits, attention, ablation, lens, head scores, greedy for every checkpoint") {
  for (const char* folder : kFolders) {
    const std::string folder_name = folder;
    CAPTURE(folder_name);
    const std::string dir = fixtures() + folder + "/";
    const json expected = read_json(dir + "expected.json");
    auto m = load_fixture(folder);
    const bool wide = std::string(folder).find("16") != std::string::npos;
    const double tol = wide ? 2e-3 : 1e-4;
    const std::size_t big_l = m->config().num_layers, nh = m->config().num_heads, v = m->config().vocab;
    for (const json& c : expected.at("cases")) {
      const std::string name = c.at("name");
      CAPTURE(name);
      const std::vector<std::int32_t> ids = c.at("ids");
      const std::size_t t = ids.size();
      std::vector<std::uint8_t> ablate(big_l * nh, 0);
      for (const json& a : c.at("ablate")) ablate[std::size_t(a[0]) * nh + std::size_t(a[1])] = 1;
      const std::vector<double> logits = c.at("logits"), attention = c.at("attention");
      for (Path path : {Path::simd, Path::ref}) {
        PretrainedRunOptions o;
        o.attention = true, o.all_logits = true, o.ablate = ablate.data();
        o.lens = c.contains("lens"), o.lens_top_k = 5;
        PretrainedRunResult r;
        REQUIRE(m->run(ids.data(), t, o, &r, path) == "");
        const double dl = max_abs(r.logits, logits), da = max_abs(r.attention, attention);
        MESSAGE(std::string(folder) << " " << name << std::string(path == Path::simd ? " simd" : " ref")
                                    << ": max |logits - float64| " << dl << ", attention " << da);
        CHECK(dl <= tol);
        CHECK(da <= tol);
        // The fused attention (no weights asked) gives the same logits.
        o.attention = false;
        PretrainedRunResult fused;
        REQUIRE(m->run(ids.data(), t, o, &fused, path) == "");
        CHECK(max_abs(fused.logits, logits) <= tol);
        if (o.lens) {
          const std::vector<double> lens = c.at("lens");
          for (std::size_t l = 0; l < big_l; ++l)
            for (std::size_t p = 0; p < t; ++p) {
              const double* row = lens.data() + (l * t + p) * v;
              const double mx = *std::max_element(row, row + v);
              double z = 0;
              for (std::size_t j = 0; j < v; ++j) z += std::exp(row[j] - mx);
              for (std::size_t k = 0; k < 5; ++k) {
                const std::size_t at = (l * t + p) * 5 + k;
                const double want = std::exp(row[r.lens_ids[at]] - mx) / z;
                CHECK(std::abs(r.lens_probs[at] - want) <= tol);
                // Ranked: no token outside the top k is more probable than the k-th by more than tol.
                if (k == 4) {
                  std::size_t above = 0;
                  const auto first = r.lens_ids.begin() + std::ptrdiff_t(at - 4), end = first + 5;
                  for (std::size_t j = 0; j < v; ++j)
                    if (std::exp(row[j] - mx) / z > want + tol &&
                        std::count(first, end, std::int32_t(j)) == 0)
                      ++above;
                  CHECK(above == 0);
                }
              }
            }
        }
      }
    }
    const json& hs = expected.at("headScores");
    const std::vector<std::int32_t> seq = hs.at("sequence");
    std::vector<float> scores;
    REQUIRE(m->head_scores(seq.data(), seq.size(), hs.at("n"), &scores) == "");
    for (const json& s : hs.at("scores")) {
      const std::size_t i = std::size_t(s.at("layer")) * nh + std::size_t(s.at("head"));
      CHECK(std::abs(scores[i * 4 + 0] - double(s.at("previousToken"))) <= tol);
      CHECK(std::abs(scores[i * 4 + 1] - double(s.at("duplicateToken"))) <= tol);
      CHECK(std::abs(scores[i * 4 + 2] - double(s.at("induction"))) <= tol);
      CHECK(std::abs(scores[i * 4 + 3] - double(s.at("firstToken"))) <= tol);
    }
    const std::vector<std::int32_t> prompt = expected.at("greedy").at("prompt"),
                                    next = expected.at("greedy").at("next");
    std::vector<std::int32_t> got;
    REQUIRE(m->generate(prompt.data(), prompt.size(), next.size(), 0.0f, 1, -1, &got) == "");
    CHECK(got == next);
  }
}

TEST_CASE("pretrained golden: 16-bit checkpoints stay 16-bit in memory") {
  auto f32 = load_fixture("gpt2-f32");
  auto f16 = load_fixture("gpt2-f16");
  auto bf16 = load_fixture("gpt2-bf16");
  CHECK(f32->dtype() == "float32");
  CHECK(f16->dtype() == "float16");
  CHECK(bf16->dtype() == "bfloat16");
  CHECK(f16->weight_bytes() < f32->weight_bytes() * 0.6);
  CHECK(bf16->weight_bytes() == f16->weight_bytes());
  // The float32 file's mask buffers and lm_head copy are not held.
  CHECK(f32->weight_bytes() < read_bytes(fixtures() + "gpt2-f32/model.safetensors").size() * 0.8);
  MESSAGE("gpt2-f32 holds " << f32->weight_bytes() << " bytes, gpt2-f16 " << f16->weight_bytes()
                            << ", parameters " << f32->parameters());
}

TEST_CASE("pretrained golden: damaged fixture files are errors naming the file and the tensor") {
  const std::string dir = fixtures() + "gpt2-f32/";
  const PretrainedConfig c = config_of(read_json(dir + "config.json"));
  const auto good = read_bytes(dir + "model.safetensors");
  auto error = [&](const std::vector<std::uint8_t>& bytes, PretrainedConfig cfg) {
    PretrainedModel m(cfg);
    std::string e = add(m, "model.safetensors", bytes);
    return e.empty() ? m.finish() : e;
  };
  CHECK(error(good, c) == "");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | good[std::size_t(i)];
  const json header = json::parse(good.begin() + 8, good.begin() + 8 + std::ptrdiff_t(n));
  // Truncated: the last tensor in the file runs past the end.
  std::string last;
  std::uint64_t last_end = 0;
  for (const auto& [name, e] : header.items())
    if (name != "__metadata__" && e.at("data_offsets")[1] > last_end)
      last_end = e.at("data_offsets")[1], last = name;
  std::string e = error({good.begin(), good.end() - 100}, c);
  CHECK(e.find("model.safetensors: " + last + ": data_offsets") == 0);
  // Header length beyond the file.
  auto bad = good;
  bad[5] = 1;
  CHECK(error(bad, c).find("model.safetensors: header length") == 0);
  // A NaN in a real tensor.
  bad = good;
  const std::uint64_t at =
      8 + n + std::uint64_t(header.at("transformer.h.1.attn.c_proj.weight").at("data_offsets")[0]) + 4 * 5;
  const float nan = std::nanf("");
  std::memcpy(bad.data() + at, &nan, 4);
  CHECK(
      error(bad, c) ==
      "model.safetensors: transformer.h.1.attn.c_proj.weight: element 5 is NaN (the checkpoint is damaged)");
  // The float16 file under a config that says float32.
  e = error(read_bytes(fixtures() + "gpt2-f16/model.safetensors"), c);
  CHECK(e.find("model.safetensors: ") == 0);
  CHECK(e.find("dtype F16 disagrees with config.json") != std::string::npos);
  // A config with a wider model than the file.
  PretrainedConfig wider = c;
  wider.d_model = 48;
  e = error(good, wider);
  CHECK(e.find("model.safetensors: ") == 0);
  CHECK(e.find("disagrees with config.json") != std::string::npos);
  // GPT-2 weights read as GPT-Neo.
  PretrainedConfig neo = c;
  neo.architecture = PretrainedArch::gpt_neo;
  e = error(good, neo);
  CHECK(e.find("not a tensor of GPTNeoForCausalLM") != std::string::npos);
}
#endif
