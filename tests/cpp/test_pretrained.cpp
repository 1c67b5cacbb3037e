// Pretrained GPT-2 / GPT-Neo inference (pretrained.hpp) on random small
// checkpoints written here as safetensors files, against the double-precision
// reference of reference_pretrained.hpp; and the loader's answers to damaged files.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "checks.hpp"
#include "headlab/pretrained.hpp"
#include "headlab/pretrained_safetensors.hpp"
#include "reference_pretrained.hpp"

using namespace headlab;
using namespace headlab::test;

namespace {

PretrainedConfig engine_config(const RefConfig& c, const std::string& dtype = "") {
  PretrainedConfig p;
  p.architecture = c.neo ? PretrainedArch::gpt_neo : PretrainedArch::gpt2;
  p.num_layers = c.layers;
  p.num_heads = c.heads;
  p.d_model = c.d;
  p.d_ff = c.ff;
  p.vocab = c.vocab;
  p.context = c.context;
  p.ln_eps = float(c.eps);
  p.scale_scores = !c.neo;
  p.windows = c.windows.empty() ? std::vector<std::size_t>(c.layers, 0) : c.windows;
  p.dtype = dtype;
  return p;
}

struct FileOptions {
  std::string dtype = "F32";
  bool prefix = true, buffers = true, lm_head = true, pad = true;
  std::size_t shards = 1;
};

// The checkpoint as safetensors files (one per shard), tensors in name order.
std::vector<std::vector<std::uint8_t>> checkpoint_files(const RefConfig& c, const RefWeights& w,
                                                        const FileOptions& o) {
  std::vector<FileTensor> all;
  const std::string pre = o.prefix ? "transformer." : "";
  for (const auto& [name, t] : w) all.push_back(encode(pre + name, t, o.dtype));
  if (o.lm_head) all.push_back(encode("lm_head.weight", w.at("wte.weight"), o.dtype));
  if (o.buffers)
    for (std::size_t l = 0; l < c.layers; ++l) {
      const std::string a = pre + "h." + std::to_string(l) + (c.neo ? ".attn.attention." : ".attn.");
      RefTensor mask{{1, 1, c.context, c.context}, std::vector<double>(c.context * c.context, 1.0)};
      all.push_back(encode(a + "bias", mask, "F32"));
      all.push_back(encode(a + "masked_bias", RefTensor{{}, {-1e4}}, "F32"));
    }
  std::vector<std::vector<std::uint8_t>> files;
  for (std::size_t s = 0; s < o.shards; ++s) {
    std::vector<FileTensor> part;
    for (std::size_t i = s; i < all.size(); i += o.shards) part.push_back(all[i]);
    files.push_back(write_safetensors(part, o.pad));
  }
  return files;
}

std::string add_file(PretrainedModel& m, const std::string& name, const std::vector<std::uint8_t>& bytes) {
  std::uint8_t* p = m.alloc_file(bytes.size());
  REQUIRE(p != nullptr);
  std::memcpy(p, bytes.data(), bytes.size());
  return m.add_safetensors(name, p, bytes.size());
}

std::unique_ptr<PretrainedModel> load(const RefConfig& c, const RefWeights& w, const FileOptions& o = {}) {
  auto m = std::make_unique<PretrainedModel>(engine_config(c));
  REQUIRE(pretrained_config_error(m->config()) == "");
  const auto files = checkpoint_files(c, w, o);
  for (std::size_t i = 0; i < files.size(); ++i)
    REQUIRE(add_file(*m, "model-" + std::to_string(i) + ".safetensors", files[i]) == "");
  REQUIRE(m->finish() == "");
  return m;
}

std::vector<std::int32_t> some_ids(const RefConfig& c, std::size_t t, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::int32_t> ids(t);
  for (auto& x : ids) x = std::int32_t(rng() % c.vocab);
  return ids;
}

void check_run(PretrainedModel& m, const RefConfig& c, const RefWeights& w,
               const std::vector<std::int32_t>& ids, const std::vector<std::uint8_t>& ablate, double tol,
               Path path) {
  const RefOutput want = reference_forward(c, w, ids, ablate);
  for (bool attention : {false, true}) {
    CAPTURE(attention);
    PretrainedRunOptions o;
    o.attention = attention;
    o.all_logits = true;
    o.ablate = ablate.empty() ? nullptr : ablate.data();
    PretrainedRunResult r;
    REQUIRE(m.run(ids.data(), ids.size(), o, &r, path) == "");
    std::size_t at = 0;
    const double e = worst(r.logits, want.logits, tol, tol, &at);
    CAPTURE(at);
    CHECK(e <= 1);
    if (attention) CHECK(worst(r.attention, want.attention, tol, tol) <= 1);
    // The last position alone.
    o.all_logits = false;
    REQUIRE(m.run(ids.data(), ids.size(), o, &r, path) == "");
    const std::vector<double> last(want.logits.end() - std::ptrdiff_t(c.vocab), want.logits.end());
    CHECK(worst(r.logits, last, tol, tol) <= 1);
  }
}

}  // namespace

TEST_CASE(
    "pretrained: GPT-2 logits and attention match the double reference (f32, f16, bf16; ref and simd)") {
  RefConfig c;
  c.layers = 2, c.heads = 2, c.d = 8, c.ff = 32, c.vocab = 11, c.context = 16;
  const RefWeights w = random_weights(c, 1);
  for (const char* dtype : {"F32", "F16", "BF16"}) {
    CAPTURE(dtype);
    FileOptions o;
    o.dtype = dtype;
    auto m = load(c, w, o);
    CHECK(m->dtype() == (std::string(dtype) == "F32"   ? "float32"
                         : std::string(dtype) == "F16" ? "float16"
                                                       : "bfloat16"));
    for (std::size_t t : {1, 5, 9, 16})
      for (Path path : {Path::ref, Path::simd}) {
        CAPTURE(t);
        CAPTURE(int(path));
        check_run(*m, c, w, some_ids(c, t, unsigned(t)), {}, 1e-4, path);
        check_run(*m, c, w, some_ids(c, t, unsigned(t)), {0, 1, 1, 0}, 1e-4, path);
      }
  }
}

TEST_CASE(
    "pretrained: GPT-2 with head size around the SIMD width, without prefix, buffers or lm_head, unpadded "
    "header") {
  for (std::size_t dk : {3, 4, 5, 9}) {
    RefConfig c;
    c.layers = 1, c.heads = 3, c.d = 3 * dk, c.ff = 4 * c.d, c.vocab = 13, c.context = 12;
    CAPTURE(dk);
    const RefWeights w = random_weights(c, unsigned(dk));
    FileOptions o;
    o.prefix = false, o.buffers = false, o.lm_head = false, o.pad = false;
    auto m = load(c, w, o);
    for (std::size_t t : {1, 4, 5, 12}) check_run(*m, c, w, some_ids(c, t, 9), {0, 0, 1}, 1e-4, Path::simd);
  }
}

TEST_CASE("pretrained: GPT-Neo with a local layer whose window is shorter than the text, unscaled scores") {
  RefConfig c;
  c.neo = true, c.layers = 2, c.heads = 2, c.d = 8, c.ff = 32, c.vocab = 11, c.context = 16;
  c.windows = {0, 3};
  const RefWeights w = random_weights(c, 2);
  for (const char* dtype : {"F32", "BF16"}) {
    CAPTURE(dtype);
    FileOptions o;
    o.dtype = dtype;
    auto m = load(c, w, o);
    for (std::size_t t : {1, 3, 4, 9, 16})
      for (Path path : {Path::ref, Path::simd}) {
        CAPTURE(t);
        check_run(*m, c, w, some_ids(c, t, unsigned(t + 50)), {}, 1e-4, path);
        check_run(*m, c, w, some_ids(c, t, unsigned(t + 50)), {1, 0, 0, 1}, 1e-4, path);
      }
  }
}

// Matrices many GEMM panels wide with a partial last one (the panel width is 16 in wasm, 32
// with AVX2), and a d_ff past the k of a packed panel's rows (a 16-bit [in, out] product's
// widened panel is then the largest workspace: the sanitize build checks it is sized for).
TEST_CASE("pretrained: GPT-2 and GPT-Neo with matrices of many panels, float32 and float16") {
  for (bool neo : {false, true}) {
    RefConfig c;
    c.neo = neo, c.layers = 2, c.heads = 3, c.d = 24, c.ff = 600, c.vocab = 83, c.context = 20;
    if (neo) c.windows = {0, 5};
    CAPTURE(neo);
    const RefWeights w = random_weights(c, 12);
    for (const char* dtype : {"F32", "F16"}) {
      CAPTURE(dtype);
      FileOptions o;
      o.dtype = dtype;
      auto m = load(c, w, o);
      for (std::size_t t : {1, 7, 20})
        for (Path path : {Path::ref, Path::simd}) {
          CAPTURE(t);
          CAPTURE(int(path));
          check_run(*m, c, w, some_ids(c, t, unsigned(t + 70)), {}, 1e-4, path);
        }
      // Generation: one row at a time after the prompt; greedy picks the reference's arg-max.
      const auto prompt = some_ids(c, 5, 3);
      std::vector<std::int32_t> got;
      REQUIRE(m->generate(prompt.data(), prompt.size(), 3, 0.0f, 1, -1, &got) == "");
      REQUIRE(got.size() == 3);
      std::vector<std::int32_t> seq = prompt;
      for (std::int32_t id : got) {
        const RefOutput want = reference_forward(c, w, seq);
        const auto last = want.logits.end() - std::ptrdiff_t(c.vocab);
        CHECK(last[id] >= *std::max_element(last, want.logits.end()) - 1e-5);  // up to a near tie
        seq.push_back(id);
      }
    }
  }
}

TEST_CASE("pretrained: sharded checkpoint loads as one") {
  RefConfig c;
  const RefWeights w = random_weights(c, 4);
  FileOptions o;
  o.shards = 3;
  auto m = load(c, w, o);
  check_run(*m, c, w, some_ids(c, 7, 1), {}, 1e-4, Path::simd);
  CHECK(m->parameters() ==
        11 * 8 + 16 * 8 + 2 * 8 + 2 * (4 * 8 + 32 + 8 + 8 * 24 + 24 + 64 + 8 + 8 * 32 * 2));
}

TEST_CASE("pretrained: logit lens top-k matches softmax of the reference's per-layer logits") {
  RefConfig c;
  c.vocab = 37;
  const RefWeights w = random_weights(c, 5);
  auto m = load(c, w);
  const auto ids = some_ids(c, 9, 3);
  const RefOutput want = reference_forward(c, w, ids);
  PretrainedRunOptions o;
  o.lens = true;
  o.lens_top_k = 4;
  PretrainedRunResult r;
  REQUIRE(m->run(ids.data(), ids.size(), o, &r) == "");
  REQUIRE(r.lens_ids.size() == c.layers * 9 * 4);
  for (std::size_t l = 0; l < c.layers; ++l)
    for (std::size_t t = 0; t < 9; ++t) {
      const double* row = want.lens.data() + (l * 9 + t) * c.vocab;
      std::vector<double> p(row, row + c.vocab);
      const double mx = *std::max_element(p.begin(), p.end());
      double z = 0;
      for (double& x : p) z += x = std::exp(x - mx);
      for (double& x : p) x /= z;
      std::vector<std::size_t> order(c.vocab);
      for (std::size_t i = 0; i < c.vocab; ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] > p[b]; });
      for (std::size_t k = 0; k < 4; ++k) {
        const std::size_t at = (l * 9 + t) * 4 + k;
        CHECK(std::abs(r.lens_probs[at] - p[order[k]]) < 1e-5);
        CHECK(std::abs(p[std::size_t(r.lens_ids[at])] - p[order[k]]) < 1e-6);  // ties may swap ids
      }
    }
}

TEST_CASE("pretrained: head scores follow their definitions on the reference's attention") {
  RefConfig c;
  c.vocab = 23, c.context = 16, c.heads = 2;
  const RefWeights w = random_weights(c, 6);
  auto m = load(c, w);
  const std::size_t n = 5, t = 2 * n + 1;
  std::vector<std::int32_t> seq = {0};
  const auto r = some_ids(c, n, 8);
  seq.insert(seq.end(), r.begin(), r.end());
  seq.insert(seq.end(), r.begin(), r.end());
  std::vector<float> got;
  REQUIRE(m->head_scores(seq.data(), t, n, &got) == "");
  const RefOutput want = reference_forward(c, w, seq);
  for (std::size_t lh = 0; lh < c.layers * c.heads; ++lh) {
    const double* a = want.attention.data() + lh * t * t;
    double prev = 0, dup = 0, ind = 0, first = 0;
    for (std::size_t q = 2; q <= 2 * n; ++q) prev += a[q * t + q - 1] / double(2 * n - 1);
    for (std::size_t q = n + 1; q <= 2 * n; ++q)
      dup += a[q * t + q - n] / double(n), ind += a[q * t + q - n + 1] / double(n);
    for (std::size_t q = 1; q <= 2 * n; ++q) first += a[q * t] / double(2 * n);
    CHECK(got[lh * 4 + 0] == doctest::Approx(prev).epsilon(1e-5));
    CHECK(got[lh * 4 + 1] == doctest::Approx(dup).epsilon(1e-5));
    CHECK(got[lh * 4 + 2] == doctest::Approx(ind).epsilon(1e-5));
    CHECK(got[lh * 4 + 3] == doctest::Approx(first).epsilon(1e-5));
  }
  CHECK(m->head_scores(seq.data(), t, n + 1, &got) != "");
}

TEST_CASE(
    "pretrained: greedy generation (one row per token after the prompt) follows the reference's arg-max") {
  for (bool neo : {false, true})
    for (Path path : {Path::simd, Path::ref}) {
      CAPTURE(neo);
      RefConfig c;
      c.vocab = 17, c.context = 12, c.neo = neo;
      if (neo) c.windows = {3, 0};
      const RefWeights w = random_weights(c, neo ? 17 : 7);
      auto m = load(c, w);
      std::vector<std::int32_t> prompt = {1, 2, 3, 4};
      std::vector<std::int32_t> got;
      REQUIRE(m->generate(prompt.data(), 4, 7, 0.0f, 1, -1, &got, path) == "");
      REQUIRE(got.size() == 7);
      std::vector<std::int32_t> seq = prompt;
      for (std::int32_t next : got) {
        const RefOutput r = reference_forward(c, w, seq);
        const auto last = r.logits.end() - std::ptrdiff_t(c.vocab);
        const double best = *std::max_element(last, r.logits.end());
        CHECK(last[next] >= best - 1e-5);  // the arg-max, up to a near tie
        seq.push_back(next);
      }
    }
}

TEST_CASE("pretrained: generate, seeded sampling repeats; stop and context") {
  RefConfig c;
  c.vocab = 17, c.context = 12;
  const RefWeights w = random_weights(c, 7);
  auto m = load(c, w);
  std::vector<std::int32_t> prompt = {1, 2, 3};
  std::vector<std::int32_t> got;
  std::vector<std::int32_t> a, b, d;
  REQUIRE(m->generate(prompt.data(), 3, 20, 1.0f, 42, -1, &a) == "");
  REQUIRE(m->generate(prompt.data(), 3, 20, 1.0f, 42, -1, &b) == "");
  CHECK(a == b);
  CHECK(a.size() == c.context - 3);  // stops at the context
  REQUIRE(m->generate(prompt.data(), 3, 20, 1.0f, 43, -1, &d) == "");
  CHECK(a != d);
  std::vector<std::int32_t> stopped;
  REQUIRE(m->generate(prompt.data(), 3, 20, 1.0f, 42, a[2], &stopped) == "");
  CHECK(stopped.size() <= 2);
  CHECK(m->generate(prompt.data(), 3, 2, -1.0f, 1, -1, &got) != "");
  prompt[1] = 99;
  CHECK(m->generate(prompt.data(), 3, 2, 1.0f, 1, -1, &got).find("position 1") != std::string::npos);
  std::vector<std::int32_t> full(c.context, 1);
  CHECK(m->generate(full.data(), c.context, 2, 1.0f, 1, -1, &got) == "");
  CHECK(got.empty());
}

TEST_CASE("pretrained: memory holds the weights as stored (16-bit stays 16-bit; buffers dropped)") {
  RefConfig c;
  c.d = 16, c.ff = 64, c.vocab = 50, c.context = 32;
  const RefWeights w = random_weights(c, 9);
  FileOptions o;
  auto f32 = load(c, w, o);
  o.dtype = "F16";
  auto f16 = load(c, w, o);
  const std::size_t params = f32->parameters();
  // Matrices as stored (+ at most 16 bytes of alignment each) and vectors widened to float32.
  const std::size_t vectors = c.layers * (4 * c.d + 3 * c.d + c.ff + c.d) + 2 * c.d;
  CHECK(f32->weight_bytes() >= 4 * params);
  CHECK(f32->weight_bytes() <= 4 * params + 4 * vectors + 16 * 40);
  CHECK(f16->weight_bytes() <= 2 * params + 4 * vectors + 16 * 40);
  const auto ids = some_ids(c, 20, 2);
  PretrainedRunResult r;
  REQUIRE(f16->run(ids.data(), 20, {}, &r) == "");
  CHECK(f16->memory_bytes() <= f16->weight_bytes() + f16->activation_bytes(20, false, false, false));
}

TEST_CASE("pretrained: run refuses bad lengths and ids, and a model without weights") {
  RefConfig c;
  const RefWeights w = random_weights(c, 10);
  PretrainedModel empty(engine_config(c));
  std::vector<std::int32_t> ids(20, 1);
  PretrainedRunResult r;
  CHECK(empty.run(ids.data(), 3, {}, &r) != "");
  auto m = load(c, w);
  CHECK(m->run(ids.data(), 0, {}, &r).find("outside") != std::string::npos);
  CHECK(m->run(ids.data(), 17, {}, &r).find("context") != std::string::npos);
  ids[2] = 11;
  CHECK(m->run(ids.data(), 3, {}, &r).find("position 2") != std::string::npos);
  ids[2] = -1;
  CHECK(m->run(ids.data(), 3, {}, &r).find("position 2") != std::string::npos);
}

// ---- damaged input: every error names the file and the tensor or field -------------

namespace {

std::string load_error(const RefConfig& c, std::vector<std::uint8_t> bytes, const std::string& dtype = "") {
  PretrainedModel m(engine_config(c, dtype));
  std::string e = add_file(m, "model.safetensors", bytes);
  if (e.empty()) e = m.finish();
  return e;
}

std::vector<std::uint8_t> with_header(const std::string& json, std::size_t data_bytes) {
  std::vector<std::uint8_t> f(8 + json.size() + data_bytes, 0);
  for (int i = 0; i < 8; ++i) f[std::size_t(i)] = std::uint8_t(std::uint64_t(json.size()) >> (8 * i));
  std::copy(json.begin(), json.end(), f.begin() + 8);
  return f;
}

bool has(const std::string& e, const std::string& part) {
  return e.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("pretrained: damaged safetensors files are errors naming the file and the tensor") {
  RefConfig c;
  const RefWeights w = random_weights(c, 11);
  const auto good = checkpoint_files(c, w, {})[0];
  CHECK(load_error(c, good) == "");

  std::string e = load_error(c, std::vector<std::uint8_t>(good.begin(), good.begin() + 5));
  CHECK(has(e, "model.safetensors: truncated"));
  e = load_error(c, std::vector<std::uint8_t>(good.begin(), good.begin() + 200));
  CHECK(has(e, "model.safetensors: header length"));
  e = load_error(c, std::vector<std::uint8_t>(good.begin(), good.end() - 3));
  CHECK(has(e, "model.safetensors: "));
  CHECK(has(e, "beyond the data"));

  e = load_error(c, with_header(R"({"wte.weight":{"dtype":"F32","shape":[11,8],"data_offsets":[0,352]},)"
                                R"("wpe.weight":{"dtype":"F32","shape":[16,8],"data_offsets":[300,812]}})",
                                812));
  CHECK(has(e, "model.safetensors: wpe.weight: data_offsets [300, 812] overlap wte.weight"));
  e = load_error(c,
                 with_header(R"({"wte.weight":{"dtype":"F32","shape":[11,8],"data_offsets":[0,352]}})", 100));
  CHECK(has(e, "model.safetensors: wte.weight: data_offsets [0,352] beyond the data"));
  e = load_error(c,
                 with_header(R"({"wte.weight":{"dtype":"F32","shape":[11,8],"data_offsets":[0,350]}})", 352));
  CHECK(has(e, "model.safetensors: wte.weight: data_offsets [0,350] hold 350 bytes"));
  e = load_error(c,
                 with_header(R"({"wte.weight":{"dtype":"Q4","shape":[11,8],"data_offsets":[0,352]}})", 352));
  CHECK(has(e, "model.safetensors: wte.weight: unknown dtype \"Q4\""));
  e = load_error(c,
                 with_header(R"({"wte.weight":{"dtype":"I32","shape":[11,8],"data_offsets":[0,352]}})", 352));
  CHECK(has(e, "model.safetensors: wte.weight: dtype I32 is not supported"));
  e = load_error(c,
                 with_header(R"({"wte.weight":{"dtype":"F32","shape":[8,11],"data_offsets":[0,352]}})", 352));
  CHECK(has(e, "model.safetensors: wte.weight: shape [8, 11] disagrees with config.json"));
  e = load_error(
      c, with_header(R"({"wte.weight":{"dtype":"F32","shape":[11,-8],"data_offsets":[0,352]}})", 352));
  CHECK(has(e, "model.safetensors: wte.weight: shape"));
  e = load_error(c, with_header(R"({"wte.weight":{"dtype":"F32","shape":[11,8]}})", 352));
  CHECK(has(e, "model.safetensors: wte.weight: data_offsets missing"));
  e = load_error(
      c, with_header(R"({"wte.weight":{"dtype":"F32","shape":[11,8],"data_offsets":[0,352]},)"
                     R"("transformer.wte.weight":{"dtype":"F32","shape":[11,8],"data_offsets":[352,704]}})",
                     704));
  CHECK(has(e, "wte.weight: appears twice"));
  e = load_error(c,
                 with_header(R"({"h.7.ln_1.weight":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}})", 32));
  CHECK(has(e, "model.safetensors: h.7.ln_1.weight: not a tensor of GPT2LMHeadModel with 2 layers"));
  e = load_error(c, with_header("{\"wte.weight\": [", 0));
  CHECK(has(e, "model.safetensors: header is not valid JSON"));
  e = load_error(c, with_header("[1, 2]", 0));
  CHECK(has(e, "model.safetensors: header is not a JSON object"));

  // A file without some tensors: finish names them.
  e = load_error(c,
                 with_header(R"({"wte.weight":{"dtype":"F32","shape":[11,8],"data_offsets":[0,352]}})", 352));
  CHECK(has(e, "missing tensors"));
  CHECK(has(e, "h.0."));

  // dtype disagreeing with config.json's torch_dtype.
  FileOptions half;
  half.dtype = "F16";
  e = load_error(c, checkpoint_files(c, w, half)[0], "F32");
  CHECK(has(e, "model.safetensors: "));
  CHECK(has(e, "dtype F16 disagrees with config.json"));

  // A NaN weight: finish names the tensor and the element.
  RefWeights bad = w;
  bad["h.1.mlp.c_fc.weight"].v[13] = std::nan("");
  e = load_error(c, checkpoint_files(c, bad, {})[0]);
  CHECK(has(e, "model-0.safetensors") == false);
  CHECK(has(e, "model.safetensors: transformer.h.1.mlp.c_fc.weight: element 13 is NaN"));
  bad = w;
  bad["ln_f.bias"].v[2] = INFINITY;
  FileOptions bf;
  bf.dtype = "BF16";
  e = load_error(c, checkpoint_files(c, bad, bf)[0]);
  CHECK(has(e, "model.safetensors: transformer.ln_f.bias: element 2 is infinite"));
}

TEST_CASE("pretrained: config errors name the field") {
  RefConfig c;
  PretrainedConfig p = engine_config(c);
  CHECK(pretrained_config_error(p) == "");
  p.num_heads = 3;
  CHECK(has(pretrained_config_error(p), "dModel"));
  p = engine_config(c);
  p.windows = {0};
  CHECK(has(pretrained_config_error(p), "windows"));
  p = engine_config(c);
  p.dtype = "F64";
  CHECK(has(pretrained_config_error(p), "dtype"));
}
