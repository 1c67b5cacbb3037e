// Language-model files (format in lm_file.hpp): a round trip gives the same
// forward pass bit for bit and training continues; every refusal names its
// field; random damage is refused or loads a usable model, never crashes.
// Also LmSession: attention blocks, prediction and generation.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "headlab/lm_file.hpp"
#include "headlab/lm_session.hpp"
#include "headlab/model.hpp"
#include "headlab/trainer.hpp"

using namespace headlab;

namespace {

LmTrainConfig small(std::uint64_t seed = 3) {
  LmTrainConfig c;
  c.num_layers = 2;
  c.num_heads = 2;
  c.d_model = 8;
  c.mlp = true;
  c.batch_size = 8;
  c.seed = seed;
  return c;
}

std::unique_ptr<LmSession> make(const char* task = "induction", const LmTrainConfig& c = small()) {
  LmSessionOrError r = LmSession::create(*find_lm_task(task), c);
  REQUIRE_MESSAGE(r.session, r.error);
  return std::move(r.session);
}

std::vector<std::uint8_t> saved(LmSession& s) {
  std::string error;
  std::vector<std::uint8_t> b = s.save(&error);
  REQUIRE_MESSAGE(error.empty(), error);
  return b;
}

// Offset of the field at `offset + L` in the format table.
std::size_t at(const std::vector<std::uint8_t>& b, std::size_t offset) { return offset + b[8]; }

void put_u32(std::vector<std::uint8_t>& b, std::size_t pos, std::uint32_t v) {
  for (int k = 0; k < 4; ++k) b[pos + k] = std::uint8_t(v >> (8 * k));
}
void put_f32(std::vector<std::uint8_t>& b, std::size_t pos, float f) {
  std::uint32_t v;
  std::memcpy(&v, &f, 4);
  put_u32(b, pos, v);
}
// The CRC-32 made to match again, as in a file written by hand.
void restamp(std::vector<std::uint8_t>& b) { put_u32(b, b.size() - 4, crc32(b.data(), b.size() - 4)); }

std::string load_error(const std::vector<std::uint8_t>& b) {
  const LmLoaded r = load_lm(b.data(), b.size());
  CHECK(!r.trainer);
  return r.error;
}

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// Full-length attention maps of one held-out-like sequence.
std::vector<float> maps_of(LmSession& s, const std::vector<std::int32_t>& tokens) {
  const std::size_t n = s.config().num_layers * s.config().num_heads * tokens.size() * tokens.size();
  const float* a = s.attention(tokens.data(), tokens.size());
  return std::vector<float>(a, a + n);
}

std::vector<std::int32_t> some_tokens(const LmTaskSpec& spec) {
  LmBatch b(spec.seq_len, 1);
  Rng rng(42, 9);
  generate_lm_batch(spec, rng, 1, b);
  return b.tokens;
}

}  // namespace

TEST_CASE("lm file: round trip gives the same forward pass bit for bit, steps and head flags") {
  for (const char* task : {"induction", "cricket"}) {
    CAPTURE(std::string(task));
    auto s = make(task);
    s->step(15);
    s->set_head_enabled(1, 0, false);
    const std::vector<std::uint8_t> b = saved(*s);
    CHECK(std::memcmp(b.data(), "HLLM", 4) == 0);
    CHECK(b.size() == at(b, 66) + 4 + 4 * s->trainer().model().num_params() + 4);
    LmSessionOrError r = LmSession::load(b.data(), b.size());
    REQUIRE_MESSAGE(r.session, r.error);
    LmSession& t = *r.session;
    CHECK(t.steps() == 15);
    CHECK(!t.head_enabled(1, 0));
    CHECK(t.head_enabled(0, 1));
    CHECK(t.config().seed == s->config().seed);
    CHECK(t.config().mlp);
    const std::vector<std::int32_t> tokens = some_tokens(s->spec());
    const std::vector<float> a = maps_of(*s, tokens), c = maps_of(t, tokens);
    CHECK(std::memcmp(a.data(), c.data(), a.size() * 4) == 0);
    const LmEval e1 = s->evaluate(64), e2 = t.evaluate(64);
    CHECK(e1.loss == e2.loss);
    CHECK(e1.accuracy == e2.accuracy);
    CHECK(saved(t) == b);  // saving a loaded model gives the same bytes
    // Training continues, on the batches the original would have drawn next.
    t.step(1);
    CHECK(t.steps() == 16);
    CHECK(std::isfinite(t.evaluate(16).loss));
  }
}

TEST_CASE("lm file: each refusal names its field") {
  auto s = make();
  s->step(3);
  const std::vector<std::uint8_t> good = saved(*s);
  auto edited = [&](auto edit) {
    std::vector<std::uint8_t> b = good;
    edit(b);
    restamp(b);
    return load_error(b);
  };
  CHECK(contains(load_error({}), "no data"));
  std::vector<std::uint8_t> hlab = good;
  std::memcpy(hlab.data(), "HLAB", 4);
  CHECK(contains(load_error(hlab), "loadTrainer"));
  CHECK(contains(edited([](auto& b) { b[0] = 'X'; }), "magic"));
  CHECK(contains(edited([](auto& b) { b[4] = 2; }), "version 2 (expected 1)"));
  CHECK(contains(edited([](auto& b) { b[9] = 'X'; }), "task: unknown task 'Xnduction'"));
  CHECK(contains(edited([&](auto& b) { put_u32(b, at(b, 9), 40); }), "vocab: 40 does not match task induction (33)"));
  CHECK(contains(edited([&](auto& b) { put_u32(b, at(b, 13), 25); }), "seqLen: 25 does not match"));
  CHECK(contains(edited([&](auto& b) { put_u32(b, at(b, 17), 5); }), "numLayers must be in 1..4, got 5"));
  CHECK(contains(edited([&](auto& b) { put_u32(b, at(b, 21), 3); }), "numHeads must divide dModel"));
  CHECK(contains(edited([&](auto& b) { put_u32(b, at(b, 25), 0); }), "dModel must be in 1..1024"));
  CHECK(contains(edited([&](auto& b) { b[at(b, 29)] = 2; }), "mlp"));
  CHECK(contains(edited([&](auto& b) { put_f32(b, at(b, 30), -1.0f); }), "learningRate"));
  CHECK(contains(edited([&](auto& b) { put_u32(b, at(b, 34), 0); }), "batchSize must be in 1..4096"));
  CHECK(contains(edited([&](auto& b) { b[at(b, 62)] = 7; }), "head flags"));
  CHECK(contains(edited([&](auto& b) { put_u32(b, at(b, 66), 12); }), "parameter count 12 does not match"));
  CHECK(contains(edited([&](auto& b) { put_f32(b, at(b, 70) + 4 * 5, NAN); }), "parameter 5 is not finite"));
  CHECK(contains(edited([&](auto& b) { put_f32(b, at(b, 70) + 4 * 6, 3e38f); }), "parameter 6 is 3e+38, beyond"));
  CHECK(contains(edited([&](auto& b) { put_f32(b, at(b, 70), -2e4f); }), "parameter 0 is -20000"));
  // Cut short or with extra bytes, the CRC made to match: the length names it.
  CHECK(contains(edited([](auto& b) { b.resize(b.size() - 8); }), "cut short"));
  CHECK(contains(edited([](auto& b) { b.insert(b.end() - 4, 0); }), "extra bytes"));
  CHECK(contains(load_error(std::vector<std::uint8_t>(good.begin(), good.begin() + 30)), "the file ends inside the header"));
  // Without a matching CRC every change is damage, with the field check as a hint.
  std::vector<std::uint8_t> cut(good.begin(), good.end() - 1);
  CHECK(contains(load_error(cut), "the file is damaged (checksum mismatch"));
  std::vector<std::uint8_t> flipped = good;
  flipped[at(flipped, 70) + 100] ^= 1;
  CHECK(load_error(flipped) == "load: the file is damaged (checksum mismatch) — save it again or download it again");
}

TEST_CASE("lm file: a model too large for memory is refused by name") {
  LmTrainConfig c = small();
  c.d_model = 1024;
  c.num_heads = 1;
  c.batch_size = 4096;
  c.num_layers = 4;
  const std::string e = lm_train_config_error(*find_lm_task("induction"), c);
  CHECK(contains(e, "too large"));
  CHECK(contains(e, "384 MiB"));
  CHECK(lm_train_config_error(*find_lm_task("induction"), small()).empty());
}

// load_lm's last check, a non-finite held-out loss, is a defence bounded weights
// do not reach at these sizes (logits stay below ~1e11); a diverged model is
// caught earlier, when saving.
TEST_CASE("lm file: save refuses a model whose training diverged") {
  auto s = make();
  float* p = s->trainer().model().params();
  p[0] = NAN;
  std::string error;
  CHECK(s->save(&error).empty());
  CHECK(contains(error, "parameter 0 is nan: training diverged"));
}

TEST_CASE("lm file: random damage never crashes; what loads is usable") {
  auto s = make("cricket");
  s->step(2);
  const std::vector<std::uint8_t> good = saved(*s);
  Rng rng(7, 1);
  std::size_t loaded = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::uint8_t> b = good;
    const std::uint32_t kind = rng.below(4);
    const std::uint32_t flips = 1 + rng.below(4);
    for (std::uint32_t k = 0; k < flips; ++k) b[rng.below(std::uint32_t(b.size()))] ^= std::uint8_t(1 + rng.below(255));
    if (kind == 1) b.resize(rng.below(std::uint32_t(b.size())));
    if (kind >= 2) restamp(b);  // past the checksum, into the field checks
    const LmLoaded r = load_lm(b.data(), b.size());
    if (!r.trainer) {
      CHECK(!r.error.empty());
      continue;
    }
    ++loaded;
    CHECK(std::isfinite(r.trainer->evaluate(8).loss));
  }
  CHECK(loaded < 300);
}

TEST_CASE("lm session: attention of a prefix is the top-left block of the full map, causal and row-stochastic") {
  auto s = make();
  s->step(5);
  const std::vector<std::int32_t> full = some_tokens(s->spec());
  const std::size_t big_t = full.size(), maps = 4;
  const std::vector<float> a = maps_of(*s, full);
  const std::vector<std::int32_t> prefix(full.begin(), full.begin() + 7);
  const std::vector<float> b = maps_of(*s, prefix);
  for (std::size_t k = 0; k < maps; ++k)
    for (std::size_t i = 0; i < 7; ++i) {
      double sum = 0;
      for (std::size_t j = 0; j < 7; ++j) {
        const float x = b[(k * 7 + i) * 7 + j];
        CHECK(std::fabs(x - a[(k * big_t + i) * big_t + j]) <= 1e-6f);
        if (j > i) CHECK(x == 0.0f);
        sum += x;
      }
      CHECK(std::fabs(sum - 1.0) < 1e-5);
    }
}

TEST_CASE("lm session: predict sums to 1; generate is deterministic by seed, stays in the vocabulary and stops") {
  auto s = make("cricket");
  s->step(30);
  std::vector<std::int32_t> start(s->spec().seq_len, 0);
  start[0] = s->spec().start_token;
  const float* p = s->predict(start.data(), 1);
  double sum = 0;
  for (std::size_t i = 0; i < s->spec().vocab; ++i) sum += p[i];
  CHECK(std::fabs(sum - 1.0) < 1e-4);
  for (float temperature : {0.0f, 0.7f, 1.0f, 3.0f}) {
    std::vector<std::int32_t> a = start, b = start;
    const std::size_t na = s->generate(a.data(), 1, 100, temperature, 5);
    const std::size_t nb = s->generate(b.data(), 1, 100, temperature, 5);
    CHECK(na == nb);
    CHECK(a == b);
    CHECK(na <= s->spec().seq_len);
    for (std::size_t i = 1; i < na; ++i) {
      CHECK(a[i] >= 0);
      CHECK(a[i] < std::int32_t(s->spec().vocab));
      CHECK(a[i] != s->spec().pad_token);
      CHECK(a[i] != s->spec().start_token);
      if (a[i] == lm_stop_token(s->spec())) CHECK(i == na - 1);
    }
  }
  std::vector<std::int32_t> c = start;
  CHECK(s->generate(c.data(), 1, 3, 1.0f, 9) <= 4);
  CHECK(lm_stop_token(*find_lm_task("induction")) == -1);
}

// One forward for every position against predict() on each prefix (a forward per prefix, its
// probabilities from the cross-entropy kernel's softmax); ablation per call against switching
// the heads off with set_head_enabled; the switches are back as they were after the call.
TEST_CASE("lm session: log_probabilities at every position equal predict on each prefix; ablation is per call") {
  auto s = make("cricket");
  s->step(30);
  const LmTaskSpec& spec = s->spec();
  const std::size_t v = spec.vocab, h = s->config().num_heads, heads = s->config().num_layers * h;
  const std::vector<std::int32_t> full = some_tokens(spec);
  s->set_head_enabled(0, 1, false);  // a head the user switched off stays off
  for (std::size_t t : {std::size_t(1), std::size_t(5), spec.seq_len}) {
    for (int ablate = 0; ablate < 2; ++ablate) {
      std::vector<std::uint8_t> off(heads, 0);
      if (ablate) off[1 * h + 0] = 1;  // layer 1, head 0 for this call only
      std::vector<float> got(t * v);
      const float* lp = s->log_probabilities(full.data(), t, off.data(), true);
      std::copy(lp, lp + t * v, got.begin());
      const std::vector<float> last(s->last_probabilities(), s->last_probabilities() + v);
      const std::size_t maps_n = heads * t * t;
      const std::vector<float> maps(s->last_attention(), s->last_attention() + maps_n);
      CHECK(s->head_enabled(1, 0));
      CHECK(!s->head_enabled(0, 1));
      if (ablate) s->set_head_enabled(1, 0, false);
      double worst = 0;
      for (std::size_t r = 1; r <= t; ++r) {
        const float* p = s->predict(full.data(), r);
        double sum = 0;
        for (std::size_t i = 0; i < v; ++i) {
          sum += std::exp(double(got[(r - 1) * v + i]));
          if (p[i] > 1e-30f) worst = std::max(worst, std::fabs(double(got[(r - 1) * v + i]) - std::log(double(p[i]))));
          if (r == t) CHECK(last[i] == p[i]);
        }
        CHECK(std::fabs(sum - 1.0) < 1e-5);
      }
      CHECK_MESSAGE(worst < 1e-5, "t " << t << " ablate " << ablate << " max |log p - log predict| " << worst);
      const float* a = s->attention(full.data(), t);
      for (std::size_t k = 0; k < maps_n; ++k) CHECK(maps[k] == a[k]);
      if (ablate) s->set_head_enabled(1, 0, true);
    }
  }
}

// The language model diverges like the one-layer Trainer (one Optimizer, one rule):
// a step that would push a weight past ±1e4 is not taken and training stops there.
TEST_CASE("lm trainer: a diverging step is not taken; the model keeps its last good state") {
  const LmTaskSpec& spec = *find_lm_task("induction");
  LmTrainConfig c = lm_train_defaults(spec, 3);
  c.num_layers = 1;
  c.batch_size = 8;
  c.warmup_steps = 0;
  c.learning_rate = 3e4f;  // Adam moves each weight by about lr on step 1: past 1e4
  auto s = LmSession::create(spec, c).session;
  REQUIRE(s);
  LanguageModel& m = s->trainer().model();
  const std::vector<float> before(m.params(), m.params() + m.num_params());
  const LmEval e0 = s->evaluate(64);
  s->step(5);
  CHECK(s->steps() == 0);
  CHECK(s->diverged_at() == 1);
  CHECK(s->trainer().divergence() == Divergence::update);
  CHECK(std::equal(before.begin(), before.end(), m.params()));
  CHECK(contains(s->divergence_message(), "training diverged at step 1 with learningRate 30000 (adam)"));
  CHECK(contains(s->divergence_message(), "the model kept its state from step 0"));
  s->step(3);  // stays diverged
  CHECK(s->steps() == 0);
  CHECK(s->evaluate(64).loss == e0.loss);  // evaluation goes on, on the kept state
  std::string error;
  CHECK_FALSE(s->save(&error).empty());

  // A rate that trains: steps are taken and nothing diverges.
  c.learning_rate = 1e-2f;
  auto ok = LmSession::create(spec, c).session;
  ok->step(5);
  CHECK(ok->steps() == 5);
  CHECK(ok->diverged_at() == 0);
  CHECK(ok->divergence_message().empty());
}
