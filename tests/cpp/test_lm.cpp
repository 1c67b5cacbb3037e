// The language model (lm.hpp; its kernels are in test_kernels_lm.cpp):
//   - the whole model's gradient (embeddings, 2 layers of causal attention with
//     W^O and biases, MLP, final LayerNorm, unembedding, cross-entropy with a
//     loss mask, a disabled head) against central finite differences of the
//     double reference in reference_lm.hpp, both paths;
//   - forward logits and attention maps against the reference; no heap growth
//     per training step.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "headlab/lm.hpp"
#include "headlab/lm_kernels.hpp"
#include "reference_lm.hpp"
#include "checks.hpp"

using namespace headlab;
using namespace headlab::test;

// ---- The whole model against the double reference ------------------------------

namespace {

LmConfig tiny_config(std::size_t layers, bool mlp) {
  LmConfig c;
  c.vocab = 7;
  c.seq_len = 5;
  c.d_model = 8;
  c.num_heads = 2;
  c.num_layers = layers;
  c.mlp = mlp;
  c.max_batch = 3;
  return c;
}

struct TinyData {
  std::vector<std::int32_t> tokens, targets;
};

TinyData tiny_data(const LmConfig& c, std::size_t n, std::mt19937& rng) {
  TinyData d;
  for (std::size_t i = 0; i < n * c.seq_len; ++i) d.tokens.push_back(std::int32_t(rng() % c.vocab));
  for (std::size_t s = 0; s < n; ++s)
    for (std::size_t t = 0; t < c.seq_len; ++t)
      d.targets.push_back(t + 1 < c.seq_len ? d.tokens[s * c.seq_len + t + 1] : -1);
  d.targets[1] = -1;  // a masked position inside a sequence
  return d;
}

// Params drawn so every part carries signal: LayerNorm gains and biases not 1/0.
void randomise(LanguageModel& m, std::mt19937& rng) {
  Rng r(7);
  m.init(r);
  const LmLayout& l = m.layout();
  float* p = m.params();
  std::normal_distribution<float> nd(0.0f, 0.3f);
  auto jitter = [&](std::size_t off, std::size_t n, float base) {
    for (std::size_t i = 0; i < n; ++i) p[off + i] = base + nd(rng);
  };
  const std::size_t d = m.config().d_model;
  for (std::size_t i = 0; i < m.config().num_layers; ++i) {
    const LmLayerLayout& y = l.layers[i];
    jitter(y.ln1_g, d, 1.0f), jitter(y.ln1_b, d, 0.0f);
    jitter(y.b_q, 4 * d, 0.0f);  // b_q, b_k, b_v, b_o
    if (m.config().mlp)
      jitter(y.ln2_g, d, 1.0f), jitter(y.ln2_b, d, 0.0f), jitter(y.b_fc, 4 * d, 0.0f),
          jitter(y.b_proj, d, 0.0f);
  }
  jitter(l.lnf_g, d, 1.0f), jitter(l.lnf_b, d, 0.0f), jitter(l.b_unembed, m.config().vocab, 0.0f);
}

// The name of the parameter block holding offset i, for failure messages.
std::string block_name(const LmLayout& l, std::size_t layers, std::size_t i) {
  std::vector<std::pair<std::size_t, std::string>> starts = {{l.tok_emb, "tok_emb"}, {l.pos_emb, "pos_emb"}};
  const char* names[] = {"ln1_g", "ln1_b", "w_q",   "w_k",   "w_v",  "w_o",  "b_q",    "b_k",
                         "b_v",   "b_o",   "ln2_g", "ln2_b", "w_fc", "b_fc", "w_proj", "b_proj"};
  for (std::size_t k = 0; k < layers; ++k) {
    const LmLayerLayout& y = l.layers[k];
    const std::size_t offs[] = {y.ln1_g, y.ln1_b, y.w_q,   y.w_k,   y.w_v,  y.w_o,  y.b_q,    y.b_k,
                                y.b_v,   y.b_o,   y.ln2_g, y.ln2_b, y.w_fc, y.b_fc, y.w_proj, y.b_proj};
    for (std::size_t j = 0; j < 16; ++j)
      starts.push_back({offs[j], "layer" + std::to_string(k) + "." + names[j]});
  }
  starts.push_back({l.lnf_g, "lnf_g"});
  starts.push_back({l.lnf_b, "lnf_b"});
  starts.push_back({l.w_unembed, "w_unembed"});
  starts.push_back({l.b_unembed, "b_unembed"});
  std::string best = "?";
  for (const auto& s : starts)
    if (s.first <= i) best = s.second;  // later blocks start at or after earlier ones
  return best;
}

void check_gradient_against_fd(std::size_t layers, bool mlp, int head_off) {
  const LmConfig c = tiny_config(layers, mlp);
  REQUIRE(std::string(lm_config_error(c)).empty());
  std::mt19937 rng(100 + unsigned(layers) * 10 + (mlp ? 1 : 0));
  LanguageModel m(c);
  randomise(m, rng);
  const std::size_t n = 2;
  const TinyData data = tiny_data(c, n, rng);
  LmBatch batch(c.seq_len, c.max_batch);
  std::copy(data.tokens.begin(), data.tokens.end(), batch.tokens.begin());
  std::copy(data.targets.begin(), data.targets.end(), batch.targets.begin());
  std::vector<std::uint8_t> enabled(layers * c.num_heads, 1);
  if (head_off >= 0) {
    enabled[std::size_t(head_off)] = 0;
    m.set_head_enabled(std::size_t(head_off) / c.num_heads, std::size_t(head_off) % c.num_heads, false);
  }

  std::vector<double> p(m.params(), m.params() + m.num_params());
  const double want_loss = reflm::loss(c, p, data.tokens.data(), data.targets.data(), n, enabled.data());
  std::vector<double> fd(p.size());
  const double h = 1e-5;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double keep = p[i];
    p[i] = keep + h;
    const double up = reflm::loss(c, p, data.tokens.data(), data.targets.data(), n, enabled.data());
    p[i] = keep - h;
    const double down = reflm::loss(c, p, data.tokens.data(), data.targets.data(), n, enabled.data());
    p[i] = keep;
    fd[i] = (up - down) / (2 * h);
  }
  // Every block carries gradient (the test could not pass with one left at zero).
  double fd_norm = 0;
  for (double g : fd) fd_norm += g * g;
  REQUIRE(fd_norm > 1e-6);

  for (Path path : {Path::ref, Path::simd}) {
    CAPTURE(path == Path::simd);
    const LmResult r = m.forward(batch, n, true, path);
    CHECK(std::abs(double(r.loss) - want_loss) <= 1e-5 * (1 + want_loss));
    CHECK(r.predictions == n * (c.seq_len - 1) - 1);
    std::vector<float> g(m.grads(), m.grads() + m.num_params());
    std::size_t at = 0;
    const double w = worst(g, fd, 2e-5, 2e-3, &at);
    INFO("worst parameter " << at << " (" << block_name(m.layout(), layers, at) << "): got " << g[at]
                            << ", fd " << fd[at] << ", layers " << layers << ", mlp " << mlp << ", head off "
                            << head_off);
    CHECK(w <= 1);
    if (head_off >= 0) {  // a disabled head's W^Q, W^K, W^V columns get no gradient
      const LmLayerLayout& y = m.layout().layers[std::size_t(head_off) / c.num_heads];
      const std::size_t dk = c.d_model / c.num_heads, head = std::size_t(head_off) % c.num_heads;
      for (std::size_t r2 = 0; r2 < c.d_model; ++r2)
        for (std::size_t k = 0; k < dk; ++k) CHECK(g[y.w_q + r2 * c.d_model + head * dk + k] == 0.0f);
    }
  }
}

}  // namespace

TEST_CASE("lm: gradient of every part against finite differences of the double reference") {
  SUBCASE("2 layers, MLP, causal") {
    check_gradient_against_fd(2, true, -1);
  }
  SUBCASE("1 layer, no MLP") {
    check_gradient_against_fd(1, false, -1);
  }
  SUBCASE("2 layers, MLP, head 1 of layer 0 disabled") {
    check_gradient_against_fd(2, true, 1);
  }
  SUBCASE("3 layers, no MLP") {
    check_gradient_against_fd(3, false, -1);
  }
}

TEST_CASE("lm: forward logits and attention maps against the double reference") {
  for (bool mlp : {true, false}) {
    const LmConfig c = tiny_config(2, mlp);
    std::mt19937 rng(21);
    LanguageModel m(c);
    randomise(m, rng);
    const std::size_t n = 3;
    const TinyData data = tiny_data(c, n, rng);
    LmBatch batch(c.seq_len, c.max_batch);
    std::copy(data.tokens.begin(), data.tokens.end(), batch.tokens.begin());
    std::copy(data.targets.begin(), data.targets.end(), batch.targets.begin());
    const std::vector<double> p(m.params(), m.params() + m.num_params());
    reflm::Mat logits;
    std::vector<std::vector<std::vector<reflm::Mat>>> weights;
    reflm::loss(c, p, data.tokens.data(), data.targets.data(), n, nullptr, &logits, &weights);
    // Reference probabilities from its logits.
    std::vector<double> want;
    for (const auto& row : logits) {
      const double mx = *std::max_element(row.begin(), row.end());
      double z = 0;
      for (double e : row) z += std::exp(e - mx);
      for (double e : row) want.push_back(std::exp(e - mx) / z);
    }
    for (Path path : {Path::ref, Path::simd}) {
      m.forward(batch, n, false, path);
      std::vector<float> got(m.probabilities(), m.probabilities() + want.size());
      CHECK(worst(got, want, 1e-6, 1e-4) <= 1);
    }
    std::vector<float> maps(c.num_layers * c.num_heads * c.seq_len * c.seq_len);
    m.attention_maps(data.tokens.data() + c.seq_len, maps.data());  // sequence 1
    std::vector<double> wmaps;
    for (const auto& layer : weights[1])
      for (const auto& head : layer)
        for (const auto& row : head) wmaps.insert(wmaps.end(), row.begin(), row.end());
    CHECK(worst(maps, wmaps, 1e-6, 1e-4) <= 1);
  }
}

TEST_CASE("lm: config checks and layout") {
  LmConfig c = tiny_config(2, true);
  CHECK(std::string(lm_config_error(c)).empty());
  c.num_layers = 5;
  CHECK(std::string(lm_config_error(c)).find("num_layers") != std::string::npos);
  c = tiny_config(2, true);
  c.num_heads = 3;
  CHECK(std::string(lm_config_error(c)).find("num_heads") != std::string::npos);
  // Layout: blocks tile [0, total) with the documented sizes.
  c = tiny_config(2, true);
  const LmLayout l = lm_layout(c);
  const std::size_t d = 8, v = 7, t = 5;
  const std::size_t per_layer = 2 * d + 4 * d * d + 4 * d + 2 * d + d * 4 * d + 4 * d + 4 * d * d + d;
  CHECK(l.total == v * d + t * d + 2 * per_layer + 2 * d + d * v + v);
  CHECK(l.layers[1].ln1_g == l.layers[0].ln1_g + per_layer);
  c.mlp = false;
  const LmLayout l2 = lm_layout(c);
  CHECK(l2.total == v * d + t * d + 2 * (2 * d + 4 * d * d + 4 * d) + 2 * d + d * v + v);
}

#if defined(__EMSCRIPTEN__)
#include <malloc.h>
namespace {
std::size_t lm_heap_in_use() {
  return static_cast<std::size_t>(mallinfo().uordblks);
}
}  // namespace
#define HEADLAB_LM_HEAP 1
#elif defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#include <malloc.h>
namespace {
std::size_t lm_heap_in_use() {
  const struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}
}  // namespace
#define HEADLAB_LM_HEAP 1
#endif

#ifdef HEADLAB_LM_HEAP
TEST_CASE("lm: buffer_bytes is what a LanguageModel allocates") {
  for (bool mlp : {false, true})
    for (std::size_t batch : {1, 64}) {
      LmConfig c = tiny_config(2, mlp);
      c.vocab = 33;
      c.seq_len = 24;
      c.d_model = 32;
      c.num_heads = 4;
      c.max_batch = batch;
      const std::size_t before = lm_heap_in_use();
      auto m = std::make_unique<LanguageModel>(c);
      const double used = double(lm_heap_in_use() - before), want = double(LanguageModel::buffer_bytes(c));
      CAPTURE(mlp);
      CAPTURE(batch);
      CHECK(std::abs(used - want) <= 0.02 * want + 4096);
    }
}

TEST_CASE("lm: a training step allocates nothing") {
  LmConfig c = tiny_config(2, true);
  c.max_batch = 8;
  c.seq_len = find_lm_task("cricket")->seq_len;
  c.vocab = find_lm_task("cricket")->vocab;
  LanguageModel m(c);
  Rng rng(3);
  m.init(rng);
  LmBatch batch(c.seq_len, c.max_batch);
  generate_lm_batch(*find_lm_task("cricket"), rng, 8, batch);
  Optimizer adam(OptimizerKind::adam, m.num_params(), 1e-3f);
  m.forward(batch, 8, true);
  adam.step(m.params(), m.grads());
  const std::size_t before = lm_heap_in_use();
  for (int i = 0; i < 5; ++i) {
    generate_lm_batch(*find_lm_task("cricket"), rng, 8, batch);
    m.forward(batch, 8, true);
    adam.step(m.params(), m.grads());
  }
  CHECK(lm_heap_in_use() == before);
}
#endif

TEST_CASE("lm: ref and simd paths agree at training size (k-blocked GEMMs, 64 x 24 rows)") {
  for (bool mlp : {false, true}) {
    CAPTURE(mlp);
    const LmTaskSpec& spec = *find_lm_task("induction");
    LmConfig c;
    c.vocab = spec.vocab;
    c.seq_len = spec.seq_len;
    c.d_model = 32;
    c.num_heads = 4;
    c.num_layers = 2;
    c.mlp = mlp;
    c.max_batch = 64;
    LanguageModel m(c);
    Rng rng(4);
    m.init(rng);
    LmBatch batch(c.seq_len, c.max_batch);
    generate_lm_batch(spec, rng, 64, batch);
    const LmResult a = m.forward(batch, 64, true, Path::ref);
    const std::vector<float> ga(m.grads(), m.grads() + m.num_params());
    const LmResult b = m.forward(batch, 64, true, Path::simd);
    const std::vector<float> gb(m.grads(), m.grads() + m.num_params());
    CHECK(std::abs(a.loss - b.loss) <= 1e-5f * a.loss);
    double scale = 0;
    for (float g : ga) scale = std::max(scale, double(std::abs(g)));
    std::size_t at = 0;
    const double w = worst(gb, ga, 1e-4 * scale, 1e-3, &at);
    INFO("parameter " << at << " ref " << ga[at] << " simd " << gb[at] << " max |g| " << scale);
    CHECK(w <= 1);
  }
}

TEST_CASE("lm: forward at the induction model's size against the double reference") {
  const LmTaskSpec& spec = *find_lm_task("induction");
  LmConfig c;
  c.vocab = spec.vocab;
  c.seq_len = spec.seq_len;
  c.d_model = 32;
  c.num_heads = 4;
  c.num_layers = 2;
  c.mlp = false;
  c.max_batch = 64;
  LanguageModel m(c);
  Rng rng(8);
  m.init(rng);
  LmBatch batch(c.seq_len, c.max_batch);
  generate_lm_batch(spec, rng, 64, batch);
  const std::size_t n = 3;  // the reference is slow: check the first sequences of a full batch
  const std::vector<double> p(m.params(), m.params() + m.num_params());
  reflm::Mat logits;
  std::vector<std::vector<std::vector<reflm::Mat>>> weights;
  const double want =
      reflm::loss(c, p, batch.tokens.data(), batch.targets.data(), n, nullptr, &logits, &weights);
  for (Path path : {Path::ref, Path::simd}) {
    const LmResult r = m.forward(batch, n, false, path);
    CHECK(std::abs(double(r.loss) - want) <= 1e-5 * want);
    m.forward(batch, 64, false, path);
    double w = 0;
    for (std::size_t s = 0; s < n; ++s)
      for (std::size_t l = 0; l < 2; ++l)
        for (std::size_t h = 0; h < 4; ++h)
          for (std::size_t a = 0; a < c.seq_len; ++a)
            for (std::size_t b = 0; b < c.seq_len; ++b)
              w = std::max(w, std::abs(double(m.attention(l)[((s * 4 + h) * c.seq_len + a) * c.seq_len + b]) -
                                       weights[s][l][h][a][b]));
    CHECK(w <= 1e-5);
  }
}

TEST_CASE("lm: gradient at the induction model's size, sampled parameters against finite differences") {
  const LmTaskSpec& spec = *find_lm_task("induction");
  LmConfig c;
  c.vocab = spec.vocab;
  c.seq_len = spec.seq_len;
  c.d_model = 32;
  c.num_heads = 4;
  c.num_layers = 2;
  c.mlp = false;
  c.max_batch = 4;
  LanguageModel m(c);
  Rng rng(9);
  m.init(rng);
  LmBatch batch(c.seq_len, c.max_batch);
  generate_lm_batch(spec, rng, 4, batch);
  const std::size_t n = 4;
  m.forward(batch, n, true, Path::simd);
  const std::vector<float> g(m.grads(), m.grads() + m.num_params());
  std::vector<double> p(m.params(), m.params() + m.num_params());
  const LmLayout& l = m.layout();
  // Samples from every block: embeddings, both layers' attention and LayerNorm, the head.
  std::vector<std::size_t> idx;
  std::mt19937 pick(5);
  const std::size_t starts[] = {l.tok_emb,       l.pos_emb,       l.layers[0].ln1_g, l.layers[0].w_q,
                                l.layers[0].w_k, l.layers[0].w_v, l.layers[0].w_o,   l.layers[0].b_q,
                                l.layers[1].w_q, l.layers[1].w_k, l.layers[1].w_v,   l.layers[1].w_o,
                                l.lnf_g,         l.w_unembed};
  const std::size_t lens[] = {c.vocab * 32, c.seq_len * 32, 64,   1024, 1024, 1024, 1024,
                              128,          1024,           1024, 1024, 1024, 64,   32 * c.vocab};
  for (std::size_t b = 0; b < 14; ++b)
    for (int k = 0; k < 6; ++k) idx.push_back(starts[b] + pick() % lens[b]);
  std::vector<double> fd, got;
  for (std::size_t i : idx) {
    const double keep = p[i], h = 1e-5;
    p[i] = keep + h;
    const double up = reflm::loss(c, p, batch.tokens.data(), batch.targets.data(), n);
    p[i] = keep - h;
    const double down = reflm::loss(c, p, batch.tokens.data(), batch.targets.data(), n);
    p[i] = keep;
    fd.push_back((up - down) / (2 * h));
    got.push_back(g[i]);
  }
  std::size_t at = 0;
  const double w = worst(got, fd, 2e-5, 2e-3, &at);
  INFO("sample " << at << " parameter " << idx[at] << ": got " << got[at] << ", fd " << fd[at]);
  CHECK(w <= 1);
}

// ---- Head detectors on hand-built attention patterns ---------------------------

TEST_CASE("lm detectors: scores and labels of known attention patterns") {
  // Layer 0: previous token, first token, uniform, duplicate token.
  // Layer 1: induction, coreference (cricket), and two heads copying layer 0's.
  for (const char* task : {"induction", "cricket"}) {
    CAPTURE(task);
    const LmTaskSpec& spec = *find_lm_task(task);
    const std::size_t t_len = spec.seq_len, h = 4, n = 40;
    LmBatch batch(t_len, n);
    Rng rng(31);
    generate_lm_batch(spec, rng, n, batch);
    std::vector<float> w0(n * h * t_len * t_len, 0.0f), w1(w0.size(), 0.0f);
    for (std::size_t b = 0; b < n; ++b) {
      const std::int32_t* tok = batch.tokens.data() + b * t_len;
      for (std::size_t t = 0; t < t_len; ++t) {
        auto row = [&](std::vector<float>& w, std::size_t head) {
          return w.data() + ((b * h + head) * t_len + t) * t_len;
        };
        row(w0, 0)[t == 0 ? 0 : t - 1] = 1.0f;
        row(w0, 1)[0] = 1.0f;
        for (std::size_t j = 0; j <= t; ++j) row(w0, 2)[j] = 1.0f / float(t + 1);
        // duplicate: the latest earlier occurrence, else itself
        std::size_t dup = t;
        for (std::size_t j = 0; j < t; ++j)
          if (tok[j] == tok[t]) dup = j;
        row(w0, 3)[dup] = 1.0f;
        // induction: the token after the latest earlier occurrence, else position 0
        row(w1, 0)[dup < t ? dup + 1 : 0] = 1.0f;
        // coreference: from "it" and "was" onto the referent, else itself
        const bool at_it =
            batch.pronoun[b] >= 0 && (int(t) == batch.pronoun[b] || int(t) == batch.pronoun[b] + 1);
        row(w1, 1)[at_it ? std::size_t(batch.referent[b]) : t] = 1.0f;
        row(w1, 2)[t == 0 ? 0 : t - 1] = 1.0f;
        row(w1, 3)[0] = 1.0f;
      }
    }
    LmHeadScorer scorer(spec, 2, h, t_len);
    const float* weights[2] = {w0.data(), w1.data()};
    scorer.add(batch, n / 2, weights);  // two chunks, as detect_heads feeds them
    std::vector<float> v0(w0.begin() + long(n / 2 * h * t_len * t_len), w0.end()),
        v1(w1.begin() + long(n / 2 * h * t_len * t_len), w1.end());
    LmBatch second(t_len, n / 2);
    for (std::size_t b = 0; b < n / 2; ++b) {
      std::copy_n(batch.tokens.begin() + long((n / 2 + b) * t_len), t_len,
                  second.tokens.begin() + long(b * t_len));
      second.seg_start[b] = batch.seg_start[n / 2 + b];
      second.seg_len[b] = batch.seg_len[n / 2 + b];
      second.pronoun[b] = batch.pronoun[n / 2 + b];
      second.referent[b] = batch.referent[n / 2 + b];
    }
    const float* weights2[2] = {v0.data(), v1.data()};
    scorer.add(second, n / 2, weights2);
    const LmHeadReport r = scorer.report();
    CHECK(r.at(0, 0).prev_token == doctest::Approx(1.0));
    CHECK(std::string(r.at(0, 0).label) == "previous token");
    CHECK(r.at(0, 1).first_token == doctest::Approx(1.0));
    CHECK(std::string(r.at(0, 1).label) == "first token");
    CHECK(r.at(0, 2).prev_token < 0.3f);
    CHECK(std::string(r.at(0, 2).label).empty());
    CHECK(r.at(1, 2).prev_token == doctest::Approx(1.0));
    if (spec.kind == LmTaskKind::induction) {
      // In the second copy the latest earlier occurrence is in the first copy
      // (segment tokens are distinct), so both patterns score exactly 1.
      CHECK(r.at(0, 3).duplicate == doctest::Approx(1.0));
      CHECK(r.at(1, 0).induction == doctest::Approx(1.0));
      CHECK(std::string(r.at(1, 0).label) == "induction");
      CHECK(r.at(0, 0).induction < 0.3f);
      CHECK(r.best_coreference == 0.0f);
    } else {
      CHECK(r.at(1, 1).coreference == doctest::Approx(1.0));
      CHECK(r.at(1, 1).coreference_next == doctest::Approx(1.0));
      CHECK(r.at(1, 1).coreference_pronoun == doctest::Approx(1.0));
      CHECK(r.at(1, 0).coreference < 0.2f);
      CHECK(std::string(r.at(1, 1).label) == "coreference");
      CHECK(r.best_coreference == doctest::Approx(1.0));
      // Attending from "was" to "it" is one fixed offset: position_peak 1.
      CHECK(r.at(1, 2).position_peak == doctest::Approx(1.0));
      CHECK(r.at(1, 1).position_peak < 0.5f);
      CHECK(r.best_fixed_position < 0.4f);
      CHECK(r.best_fixed_position > 0.15f);
    }
  }
}
