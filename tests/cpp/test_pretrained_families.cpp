// The one-block engine against the model-family fixtures (tests/golden/families/,
// written by make_families.py with an independent float64 forward): Llama with
// grouped-query attention and llama3 rope scaling, bfloat16 Llama (also sharded),
// Qwen2 (q/k/v biases, padded vocabulary), Mistral (a window shorter than the
// text), Pythia (parallel residual, partial rotary, per-head fused QKV), Phi-3
// (fused qkv and gate_up) and Gemma (RMSNorm 1 + w, scaled embeddings, head_dim
// != d / h); the encoders, BertModel (no head) among them. Logits, attention, ablation, the lens, head scores and greedy
// generation within 1e-4 (float32) and 2e-3 (16-bit); the same bits on 1, 2 and 3 threads.
// Native only (reads files).
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

#include "fixture_models.hpp"
#include "headlab/pretrained.hpp"
#include "headlab/pretrained_pool.hpp"

using namespace headlab;
using namespace headlab::test;
using nlohmann::json;

namespace {

std::string fixtures() {
  return golden() + "families/";
}

std::unique_ptr<PretrainedModel> load(const std::string& folder) {
  return load_model(fixtures() + folder + "/");
}

const char* const kDecoders[] = {"llama-gqa", "llama-sp-bf16", "llama-sp-bf16-sharded", "qwen2",
                                 "mistral-window", "pythia", "pythia-step1000", "phi3", "gemma"};

const char* const kEncoders[] = {"bert", "roberta", "distilbert"};

}  // namespace

TEST_CASE("families: every decoder fixture's logits, attention, ablation, lens, head scores, greedy") {
  for (const char* folder : kDecoders) {
    const std::string folder_name = folder;
    CAPTURE(folder_name);
    const std::string dir = fixtures() + folder + "/";
    const json expected = read_json(dir + "expected.json");
    auto loaded = load(folder);
    PretrainedModel& m = *loaded;
    const PretrainedConfig& cfg = m.config();
    const double tol = cfg.dtype == "F32" ? 1e-4 : 2e-3;
    const std::size_t big_l = cfg.num_layers, nh = cfg.num_heads, v = cfg.vocab;
    CHECK(std::size_t(expected.at("shapes").at("vocab")) == v);
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
        REQUIRE(m.run(ids.data(), t, o, &r, path) == "");
        const double dl = max_abs(r.logits, logits), da = max_abs(r.attention, attention);
        MESSAGE(folder_name << " " << name << std::string(path == Path::simd ? " simd" : " ref")
                            << ": max |logits - float64| " << dl << ", attention " << da);
        CHECK(dl <= tol);
        CHECK(da <= tol);
        o.attention = false;  // the fused attention
        PretrainedRunResult fused;
        REQUIRE(m.run(ids.data(), t, o, &fused, path) == "");
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
                CHECK(std::abs(r.lens_probs[at] - std::exp(row[r.lens_ids[at]] - mx) / z) <= tol);
              }
              // The top entry is the reference's most probable token (or within tol of it).
              const double top = std::exp(row[r.lens_ids[(l * t + p) * 5]] - mx) / z;
              CHECK(top >= 1 / z - tol);
            }
        }
      }
    }
    const json& hs = expected.at("headScores");
    const std::vector<std::int32_t> seq = hs.at("sequence");
    std::vector<float> scores;
    REQUIRE(m.head_scores(seq.data(), seq.size(), hs.at("n"), &scores) == "");
    for (const json& s : hs.at("scores")) {
      const std::size_t i = std::size_t(s.at("layer")) * nh + std::size_t(s.at("head"));
      CHECK(std::abs(scores[i * 4 + 0] - double(s.at("previousToken"))) <= tol);
      CHECK(std::abs(scores[i * 4 + 1] - double(s.at("duplicateToken"))) <= tol);
      CHECK(std::abs(scores[i * 4 + 2] - double(s.at("induction"))) <= tol);
      CHECK(std::abs(scores[i * 4 + 3] - double(s.at("firstToken"))) <= tol);
    }
    // Greedy generation with the KV cache (rotated keys kept at their positions).
    const std::vector<std::int32_t> prompt = expected.at("greedy").at("prompt"),
                                    next = expected.at("greedy").at("next");
    std::vector<std::int32_t> got;
    REQUIRE(m.generate(prompt.data(), prompt.size(), next.size(), 0.0f, 1, -1, &got) == "");
    CHECK(got == next);
  }
}
TEST_CASE("families: the encoders' masked-LM logits, attention, ablation, token types, fill, head scores") {
  for (const char* folder : kEncoders) {
    const std::string folder_name = folder;
    CAPTURE(folder_name);
    const std::string dir = fixtures() + folder + "/";
    const json expected = read_json(dir + "expected.json");
    auto m = load(folder);
    const PretrainedConfig& cfg = m->config();
    CHECK(!m->block().causal);
    const double tol = cfg.dtype == "F32" ? 1e-4 : 2e-3;
    const std::size_t big_l = cfg.num_layers, nh = cfg.num_heads, v = cfg.vocab;
    CHECK(expected.at("shapes").at("kind") == "encoder");
    CHECK(std::size_t(expected.at("shapes").at("vocab")) == v);
    for (const json& c : expected.at("cases")) {
      const std::string name = c.at("name");
      CAPTURE(name);
      const std::vector<std::int32_t> ids = c.at("ids");
      std::vector<std::int32_t> types(ids.size(), 0);
      if (c.contains("tokenTypes")) types = c.at("tokenTypes").get<std::vector<std::int32_t>>();
      const std::size_t t = ids.size();
      std::vector<std::uint8_t> ablate(big_l * nh, 0);
      for (const json& a : c.at("ablate")) ablate[std::size_t(a[0]) * nh + std::size_t(a[1])] = 1;
      const std::vector<double> logits = c.at("logits"), attention = c.at("attention");
      for (Path path : {Path::simd, Path::ref}) {
        PretrainedRunOptions o;
        o.attention = true, o.all_logits = true, o.ablate = ablate.data(), o.token_types = types.data();
        PretrainedRunResult r;
        REQUIRE(m->run(ids.data(), t, o, &r, path) == "");
        const double dl = max_abs(r.logits, logits), da = max_abs(r.attention, attention);
        MESSAGE(folder_name << " " << name << std::string(path == Path::simd ? " simd" : " ref")
                            << ": max |logits - float64| " << dl << ", attention " << da);
        CHECK(dl <= tol);
        CHECK(da <= tol);
      }
    }
    // A sentence pair's second segment reads token type row 1: all-zero types give other logits.
    if (folder_name == "bert") {
      const json& pair = expected.at("cases")[2];
      REQUIRE(pair.at("name") == "pair");
      const std::vector<std::int32_t> ids = pair.at("ids");
      PretrainedRunOptions o;
      o.all_logits = true;
      PretrainedRunResult r;
      REQUIRE(m->run(ids.data(), ids.size(), o, &r) == "");
      CHECK(max_abs(r.logits, pair.at("logits").get<std::vector<double>>()) > 100 * tol);
      std::vector<std::int32_t> bad(ids.size(), 0);
      bad[1] = 2;
      o.token_types = bad.data();
      CHECK(m->run(ids.data(), ids.size(), o, &r).find("token type 2 at position 1 is outside 0..1") == 0);
    }
    // The reference's top 5 at every mask, best first.
    for (const json& f : expected.at("fill")) {
      const std::vector<std::int32_t> ids = f.at("ids");
      PretrainedRunOptions o;
      o.all_logits = true;
      PretrainedRunResult r;
      REQUIRE(m->run(ids.data(), ids.size(), o, &r) == "");
      for (std::size_t k = 0; k < f.at("positions").size(); ++k) {
        const std::size_t p = f.at("positions")[k];
        const float* row = r.logits.data() + p * v;
        std::vector<std::int32_t> order(v);
        for (std::size_t j = 0; j < v; ++j) order[j] = std::int32_t(j);
        std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                          [&](std::int32_t a, std::int32_t b) { return row[a] > row[b]; });
        CHECK(std::vector<std::int32_t>(order.begin(), order.begin() + 5) ==
              f.at("top")[k].get<std::vector<std::int32_t>>());
      }
    }
    const json& hs = expected.at("headScores");
    const std::vector<std::int32_t> seq = hs.at("sequence");
    std::vector<float> scores;
    REQUIRE(m->head_scores(seq.data(), seq.size(), hs.at("n"), &scores) == "");
    for (const json& s : hs.at("scores")) {
      const std::size_t i = std::size_t(s.at("layer")) * nh + std::size_t(s.at("head"));
      CHECK(std::abs(scores[i * 4 + 0] - double(s.at("previousToken"))) <= tol);
      CHECK(std::abs(scores[i * 4 + 2] - double(s.at("induction"))) <= tol);
      CHECK(std::abs(scores[i * 4 + 3] - double(s.at("firstToken"))) <= tol);
    }
    std::vector<std::int32_t> got;
    CHECK(m->generate(seq.data(), 3, 2, 0.0f, 1, -1, &got).find("generate needs a decoder") == 0);
  }
}

TEST_CASE("families: BertModel (no head): the last hidden state, attention, ablation, token types, head scores") {
  // Names without bert., LayerNorm.weight / bias, the pooler present; no masked-LM head.
  const std::string dir = fixtures() + "bert-model/";
  const json expected = read_json(dir + "expected.json");
  auto m = load("bert-model");
  CHECK(!m->block().causal);
  CHECK(m->block().hidden_output);
  const std::size_t big_l = m->config().num_layers, nh = m->config().num_heads, d = m->config().d_model;
  CHECK(std::size_t(expected.at("shapes").at("hidden")) == d);
  for (const json& c : expected.at("cases")) {
    const std::string name = c.at("name");
    CAPTURE(name);
    const std::vector<std::int32_t> ids = c.at("ids");
    const std::vector<std::int32_t> types = c.at("tokenTypes");
    std::vector<std::uint8_t> ablate(big_l * nh, 0);
    for (const json& a : c.at("ablate")) ablate[std::size_t(a[0]) * nh + std::size_t(a[1])] = 1;
    const std::vector<double> hidden = c.at("hidden"), attention = c.at("attention");
    for (Path path : {Path::simd, Path::ref}) {
      PretrainedRunOptions o;
      o.attention = true, o.ablate = ablate.data(), o.token_types = types.data();
      PretrainedRunResult r;
      REQUIRE(m->run(ids.data(), ids.size(), o, &r, path) == "");
      CHECK(r.logits.empty());
      const double dh = max_abs(r.hidden, hidden), da = max_abs(r.attention, attention);
      MESSAGE(name << std::string(path == Path::simd ? " simd" : " ref") << ": max |hidden - float64| " << dh
                   << ", attention " << da);
      CHECK(dh <= 1e-4);
      CHECK(da <= 1e-4);
      o.attention = false;  // the fused attention: the same hidden state
      REQUIRE(m->run(ids.data(), ids.size(), o, &r, path) == "");
      CHECK(max_abs(r.hidden, hidden) <= 1e-4);
    }
  }
  const json& hs = expected.at("headScores");
  const std::vector<std::int32_t> seq = hs.at("sequence");
  std::vector<float> scores;
  REQUIRE(m->head_scores(seq.data(), seq.size(), hs.at("n"), &scores) == "");
  for (const json& s : hs.at("scores")) {
    const std::size_t i = std::size_t(s.at("layer")) * nh + std::size_t(s.at("head"));
    CHECK(std::abs(scores[i * 4 + 0] - double(s.at("previousToken"))) <= 1e-4);
    CHECK(std::abs(scores[i * 4 + 2] - double(s.at("induction"))) <= 1e-4);
    CHECK(std::abs(scores[i * 4 + 3] - double(s.at("firstToken"))) <= 1e-4);
  }
  // What needs logits is refused in words.
  PretrainedRunOptions o;
  o.lens = true;
  PretrainedRunResult r;
  CHECK(m->run(seq.data(), 5, o, &r).find("this model has no head (BertModel)") != std::string::npos);
  PatchHeadsArgs p;
  p.clean = p.corrupted = seq.data(), p.t = 5, p.answer = 5, p.wrong = 6, p.at = 2;
  PatchHeadsResult pr;
  CHECK(m->patch_heads(p, &pr).find("has no head (BertModel)") != std::string::npos);
  LogitAttribution la;
  CHECK(m->direct_logit_attribution(seq.data(), 5, 5, 6, 2, &la).find("has no head (BertModel)") != std::string::npos);
  std::vector<std::int32_t> got;
  CHECK(m->generate(seq.data(), 3, 2, 0.0f, 1, -1, &got).find("generate needs a decoder") == 0);
}

TEST_CASE("families: a BertModel file whose names carry bert. (a converted file) reads as without") {
  const std::vector<std::uint8_t> file = read_bytes(fixtures() + "bert-model/model.safetensors");
  std::uint64_t n = 0;
  std::memcpy(&n, file.data(), 8);
  const json header = json::parse(file.begin() + 8, file.begin() + 8 + std::ptrdiff_t(n));
  json prefixed;
  for (const auto& [key, value] : header.items()) prefixed[key == "__metadata__" ? key : "bert." + key] = value;
  std::string text = prefixed.dump();
  text.resize((text.size() + 7) / 8 * 8, ' ');
  std::vector<std::uint8_t> bytes(8);
  for (std::size_t i = 0; i < 8; ++i) bytes[i] = std::uint8_t(std::uint64_t(text.size()) >> (8 * i));
  bytes.insert(bytes.end(), text.begin(), text.end());
  bytes.insert(bytes.end(), file.begin() + 8 + std::ptrdiff_t(n), file.end());
  PretrainedModel m(config_of(read_json(fixtures() + "bert-model/config.json")));
  REQUIRE(add(m, "model.safetensors", bytes) == "");
  REQUIRE(m.finish() == "");
  const json c = read_json(fixtures() + "bert-model/expected.json").at("cases")[0];
  const std::vector<std::int32_t> ids = c.at("ids");
  PretrainedRunResult r;
  REQUIRE(m.run(ids.data(), ids.size(), PretrainedRunOptions{}, &r) == "");
  CHECK(max_abs(r.hidden, c.at("hidden").get<std::vector<double>>()) <= 1e-4);
}

TEST_CASE("families: a BERT file with LayerNorm.weight / bias (newer transformers) reads as gamma / beta") {
  // The bert fixture's header rewritten with the other spelling; the data stays where it is.
  const std::vector<std::uint8_t> file = read_bytes(fixtures() + "bert/model.safetensors");
  std::uint64_t n = 0;
  std::memcpy(&n, file.data(), 8);
  json header = json::parse(file.begin() + 8, file.begin() + 8 + std::ptrdiff_t(n)), renamed;
  std::size_t count = 0;
  for (const auto& [key, value] : header.items()) {
    std::string k = key;
    for (const auto& [from, to] : {std::pair<std::string, std::string>{"LayerNorm.gamma", "LayerNorm.weight"},
                                   {"LayerNorm.beta", "LayerNorm.bias"}})
      if (k.size() > from.size() && k.compare(k.size() - from.size(), from.size(), from) == 0)
        k = k.substr(0, k.size() - from.size()) + to, ++count;
    renamed[k] = value;
  }
  CHECK(count == 12);  // the embeddings', 2 per layer and the head's: gamma and beta each
  std::string text = renamed.dump();
  text.resize((text.size() + 7) / 8 * 8, ' ');  // offsets are from the data's start: only its length changes
  std::vector<std::uint8_t> bytes(8);
  for (std::size_t i = 0; i < 8; ++i) bytes[i] = std::uint8_t(std::uint64_t(text.size()) >> (8 * i));
  bytes.insert(bytes.end(), text.begin(), text.end());
  bytes.insert(bytes.end(), file.begin() + 8 + std::ptrdiff_t(n), file.end());
  const PretrainedConfig cfg = config_of(read_json(fixtures() + "bert/config.json"));
  PretrainedModel m(cfg);
  REQUIRE(add(m, "model.safetensors", bytes) == "");
  REQUIRE(m.finish() == "");
  const json expected = read_json(fixtures() + "bert/expected.json");
  const json& c = expected.at("cases")[0];
  const std::vector<std::int32_t> ids = c.at("ids");
  PretrainedRunOptions o;
  o.all_logits = true;
  PretrainedRunResult r;
  REQUIRE(m.run(ids.data(), ids.size(), o, &r) == "");
  CHECK(max_abs(r.logits, c.at("logits").get<std::vector<double>>()) <= 1e-4);
}

TEST_CASE("families: results do not depend on the number of threads") {
  for (const char* folder : {"llama-gqa", "pythia", "gemma"}) {
    CAPTURE(std::string(folder));
    const json expected = read_json(fixtures() + folder + "/expected.json");
    const std::vector<std::int32_t> ids = expected.at("cases")[0].at("ids");
    PretrainedRunOptions o;
    o.attention = true, o.all_logits = true, o.lens = true;
    auto m = load(folder);
    PretrainedRunResult one;
    REQUIRE(m->run(ids.data(), ids.size(), o, &one) == "");
    std::vector<std::int32_t> gen1, gen;
    REQUIRE(m->generate(ids.data(), 4, 6, 0.8f, 7, -1, &gen1) == "");
    for (std::size_t threads : {2, 3}) {
      m->set_pool(make_pretrained_pool(threads));
      PretrainedRunResult r;
      REQUIRE(m->run(ids.data(), ids.size(), o, &r) == "");
      CHECK(r.logits == one.logits);
      CHECK(r.attention == one.attention);
      CHECK(r.lens_ids == one.lens_ids);
      REQUIRE(m->generate(ids.data(), 4, 6, 0.8f, 7, -1, &gen) == "");
      CHECK(gen == gen1);
    }
  }
}

namespace {

// Two workers in name, the chunks run in order on the calling thread (alternating worker
// ids): counts the parallel steps of a pass.
class CountingPool final : public PretrainedPool {
 public:
  std::size_t steps = 0;
  std::size_t workers() const override { return 2; }
  void run(std::size_t chunks, const Task& task) override {
    ++steps;
    for (std::size_t c = 0; c < chunks; ++c) task(c, c % 2);
  }
};

}  // namespace

TEST_CASE("families: separate Q, K, V (and gate, up) weights make one parallel step each, same answers") {
  // Llama's q_proj, k_proj, v_proj share their input, as do gate_proj and up_proj: one wait
  // for each group (on threads every step ends in a wait for the slowest worker). Per layer:
  // Q|K|V, attention, the output projection, gate|up with SiLU(gate) * up, down; then the
  // unembedding.
  const std::string folder = "llama-gqa";
  const json expected = read_json(fixtures() + folder + "/expected.json");
  const json config = read_json(fixtures() + folder + "/config.json");
  const std::size_t layers = config.at("num_hidden_layers");
  const std::vector<std::int32_t> ids = expected.at("cases")[0].at("ids");
  PretrainedRunOptions o;
  o.all_logits = true;
  auto m = load(folder);
  PretrainedRunResult one;
  REQUIRE(m->run(ids.data(), ids.size(), o, &one) == "");
  auto pool = std::make_unique<CountingPool>();
  CountingPool* counting = pool.get();
  m->set_pool(std::move(pool));
  PretrainedRunResult r;
  REQUIRE(m->run(ids.data(), ids.size(), o, &r) == "");
  CHECK(counting->steps == 5 * layers + 1);
  CHECK(r.logits == one.logits);
}
#endif
