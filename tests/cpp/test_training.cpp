// The training stack: tasks, the one-layer model's gradients, the optimizers,
// and trained behaviour measured on the tasks (heads specialise; one head has
// to blend). Every threshold is checked against what training actually does.
//
// Budgets: Adam, learning rate 0.003, batch 64, at most 3000 steps, evaluation
// on 1000 held-out examples every 250 steps (training stops once accuracy
// reaches 0.99): training_runs.hpp. The "measure:" cases are in the
// benchmark executable (bench/native/measure_training.cpp), not the suite.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "headlab/model.hpp"
#include "headlab/tasks.hpp"
#include "headlab/trainer.hpp"
#include "training_runs.hpp"

using namespace headlab;

namespace {

// For each relation, the largest share any head puts on its position.
std::vector<float> best_share(const std::vector<HeadMetrics>& m, std::size_t relations) {
  std::vector<float> best(relations, 0.0f);
  for (const HeadMetrics& h : m)
    for (std::size_t r = 0; r < relations; ++r) best[r] = std::max(best[r], h.relation_share[r]);
  return best;
}

int head_for(const std::vector<HeadMetrics>& m, std::size_t relation) {
  int best = 0;
  for (std::size_t i = 1; i < m.size(); ++i)
    if (m[i].relation_share[relation] > m[best].relation_share[relation]) best = int(i);
  return best;
}

}  // namespace

TEST_CASE("rng: seeded, reproducible, in range, roughly normal") {
  Rng a(42, 7), b(42, 7), c(42, 8);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t x = a.next_u64();
    CHECK(x == b.next_u64());
    differs = differs || x != c.next_u64();
  }
  CHECK(differs);
  Rng r(1);
  std::size_t counts[7] = {};
  for (int i = 0; i < 70000; ++i) {
    const std::uint32_t k = r.below(7);
    REQUIRE(k < 7);
    ++counts[k];
  }
  for (std::size_t k : counts) CHECK(std::fabs(double(k) - 10000.0) < 500.0);
  double sum = 0, sq = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const double z = r.normal();
    REQUIRE(std::isfinite(z));
    sum += z;
    sq += z * z;
  }
  CHECK(std::fabs(sum / n) < 0.02);
  CHECK(std::fabs(sq / n - 1.0) < 0.02);
}

TEST_CASE("tasks: the table describes what the generators produce") {
  REQUIRE(task_count() == 5);
  for (const char* name : {"two-relations", "three-relations", "four-relations", "pronoun", "lookup"})
    CHECK(find_task(name) != nullptr);
  CHECK(find_task("nope") == nullptr);
  CHECK(find_task("two-relations")->num_relations == 2);
  CHECK(find_task("three-relations")->num_relations == 3);
  CHECK(find_task("four-relations")->num_relations == 4);
  for (std::size_t k = 0; k < task_count(); ++k) {
    const TaskSpec& spec = task_at(k);
    CAPTURE(spec.name);
    REQUIRE(spec.num_relations <= kMaxRelations);
    REQUIRE(spec.query_position < spec.seq_len);
    for (std::size_t v = 0; v < spec.vocab; ++v) CHECK(std::strlen(spec.token_names[v]) > 0);
    TaskBatch a(spec, 200), b(spec, 200);
    Rng r1(9, 1), r2(9, 1);
    generate_batch(spec, r1, 200, a);
    generate_batch(spec, r2, 200, b);
    CHECK(a.tokens == b.tokens);  // same seed, same examples
    CHECK(a.size == 200);
    for (std::size_t e = 0; e < 200; ++e) {
      const std::int32_t* tok = &a.tokens[e * spec.seq_len];
      CHECK(a.query[e] == std::int32_t(spec.query_position));
      for (std::size_t t = 0; t < spec.seq_len; ++t)
        CHECK((tok[t] >= 0 && tok[t] < std::int32_t(spec.vocab)));
      for (std::size_t r = 0; r < spec.num_relations; ++r) {
        const std::int32_t pos = a.answer_positions[e * spec.num_relations + r];
        REQUIRE((pos >= 0 && pos < std::int32_t(spec.seq_len)));
        // lookup's first answer names the object of the item at pos (tested below); every other answer is that token.
        if (std::string(spec.name) != "lookup" || r != 0) CHECK(a.answers[e * spec.num_relations + r] == tok[pos]);
        if (spec.relation_positions[r] >= 0) CHECK(pos == spec.relation_positions[r]);
      }
    }
  }
  // Positional tasks: the query marker is the last token id and appears only at the query.
  const TaskSpec& two = *find_task("two-relations");
  TaskBatch tb(two, 50);
  Rng rt(3);
  generate_batch(two, rt, 50, tb);
  for (std::size_t e = 0; e < 50; ++e)
    for (std::size_t t = 0; t < two.seq_len; ++t)
      CHECK((tb.tokens[e * two.seq_len + t] == std::int32_t(two.vocab - 1)) == (t == two.query_position));
}

TEST_CASE("tasks: lookup examples follow the documented rule") {
  const TaskSpec& spec = *find_task("lookup");
  REQUIRE(spec.num_relations == 4);
  TaskBatch b(spec, 500);
  Rng r(13);
  generate_batch(spec, r, 500, b);
  std::size_t asked_at[7] = {};
  for (std::size_t e = 0; e < 500; ++e) {
    const std::int32_t* tok = &b.tokens[e * spec.seq_len];
    // Items "colour object" are 0..31 (colour * 4 + object); the question "colour?" is 32 + colour.
    const std::string question = spec.token_names[tok[7]];
    REQUIRE(question.back() == '?');
    const std::string colour = question.substr(0, question.size() - 1);
    int matches = 0, colours_seen = 0;
    bool seen[8] = {};
    for (int t = 0; t < 7; ++t) {
      REQUIRE((tok[t] >= 0 && tok[t] < 32));
      const std::string item = spec.token_names[tok[t]];
      const std::string item_colour = item.substr(0, item.find(' '));
      if (!seen[tok[t] / 4]) ++colours_seen;
      seen[tok[t] / 4] = true;
      if (item_colour != colour) continue;
      ++matches;
      CHECK(b.answer_positions[e * 4] == t);
      CHECK(std::string(spec.token_names[b.answers[e * 4]]) == item.substr(item.find(' ') + 1));
      ++asked_at[t];
    }
    CHECK(matches == 1);
    CHECK(colours_seen == 7);  // every colour at most once
  }
  for (std::size_t t = 0; t < 7; ++t) CHECK(asked_at[t] > 30);  // the asked item can sit anywhere
}

TEST_CASE("tasks: pronoun examples follow the documented rule") {
  const TaskSpec& spec = *find_task("pronoun");
  auto is_entity = [](std::int32_t t) { return t >= 0 && t < 6; };
  auto is_modifier = [](std::int32_t t) { return t >= 6 && t < 12; };
  TaskBatch b(spec, 500);
  Rng r(11);
  generate_batch(spec, r, 500, b);
  std::size_t starts[4] = {};
  for (std::size_t e = 0; e < 500; ++e) {
    const std::int32_t* tok = &b.tokens[e * spec.seq_len];
    CHECK(std::string(spec.token_names[tok[7]]) == "it");
    // The antecedent is the first entity; its modifier is the word right before it.
    std::size_t first = 0;
    while (first < 7 && !is_entity(tok[first])) ++first;
    REQUIRE(first < 7);
    CHECK(b.answers[e * 2 + 0] == tok[first]);
    CHECK(b.answer_positions[e * 2 + 0] == std::int32_t(first));
    REQUIRE(first >= 1);
    CHECK(is_modifier(tok[first - 1]));
    CHECK(b.answers[e * 2 + 1] == tok[first - 1]);
    // Nothing but fillers before the pair; a second, different entity after it.
    for (std::size_t t = 0; t + 1 < first; ++t) CHECK((!is_entity(tok[t]) && !is_modifier(tok[t])));
    bool second = false;
    for (std::size_t t = first + 1; t < 7; ++t)
      second = second || (is_entity(tok[t]) && tok[t] != tok[first]);
    CHECK(second);
    ++starts[first - 1];
  }
  for (std::size_t s : starts) CHECK(s > 50);  // the pair moves around
}

TEST_CASE("model: gradients match finite differences, simd matches scalar") {
  for (int variant = 0; variant < 3; ++variant) {
    CAPTURE(variant);
    const TaskSpec& spec = *find_task(variant == 2 ? "pronoun" : "three-relations");
    ModelConfig mc;
    mc.vocab = spec.vocab;
    mc.seq_len = spec.seq_len;
    mc.num_relations = spec.num_relations;
    mc.d_model = 8;
    mc.num_heads = variant == 1 ? 4 : 2;
    mc.causal = variant == 1;
    mc.max_batch = 5;
    Model m(mc);
    Rng rng(100 + variant);
    m.init(rng);
    for (std::size_t i = m.layout().b_q; i < m.layout().w_read; ++i) m.params()[i] = 0.3f * rng.normal();
    if (variant == 2) m.set_head_enabled(1, false);
    TaskBatch batch(spec, 5);
    generate_batch(spec, rng, 5, batch);

    m.forward(batch, 5, true, Path::ref);
    const std::vector<float> g_ref(m.grads(), m.grads() + m.num_params());
    m.forward(batch, 5, true, Path::simd);
    const std::vector<float> g(m.grads(), m.grads() + m.num_params());
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < g.size(); ++i) {
      diff += double(g[i] - g_ref[i]) * double(g[i] - g_ref[i]);
      norm += double(g_ref[i]) * double(g_ref[i]);
    }
    CHECK(std::sqrt(diff) <= 1e-4 * std::sqrt(norm));

    // Directional derivatives along a random unit direction inside each block.
    const ParamLayout& l = m.layout();
    const std::size_t bounds[] = {l.tok_emb, l.pos_emb, l.w_q, l.w_k,    l.w_v,    l.w_o,  l.b_q,
                                  l.b_k,     l.b_v,     l.b_o, l.w_read, l.b_read, l.total};
    const char* names[] = {"tok_emb", "pos_emb", "w_q", "w_k", "w_v",    "w_o",
                           "b_q",     "b_k",     "b_v", "b_o", "w_read", "b_read"};
    for (std::size_t blk = 0; blk + 1 < sizeof(bounds) / sizeof(bounds[0]); ++blk) {
      const std::string block = names[blk];
      CAPTURE(block);
      std::vector<float> u(m.num_params(), 0.0f);
      double un = 0;
      for (std::size_t i = bounds[blk]; i < bounds[blk + 1]; ++i) {
        u[i] = rng.normal();
        un += double(u[i]) * u[i];
      }
      double analytic = 0, gnorm = 0;
      for (std::size_t i = bounds[blk]; i < bounds[blk + 1]; ++i) {
        u[i] = float(u[i] / std::sqrt(un));
        analytic += double(g[i]) * u[i];
        gnorm += double(g[i]) * g[i];
      }
      const float eps = 1e-2f;
      std::vector<float> keep(m.params(), m.params() + m.num_params());
      for (std::size_t i = 0; i < u.size(); ++i) m.params()[i] = keep[i] + eps * u[i];
      const double up = m.forward(batch, 5, false, Path::ref).loss;
      for (std::size_t i = 0; i < u.size(); ++i) m.params()[i] = keep[i] - eps * u[i];
      const double down = m.forward(batch, 5, false, Path::ref).loss;
      std::copy(keep.begin(), keep.end(), m.params());
      const double numeric = (up - down) / (2 * eps);
      INFO("analytic " << analytic << " numeric " << numeric << " block gradient norm " << std::sqrt(gnorm));
      // Float rounding of the loss limits the numeric side to about 1e-5 absolute.
      CHECK(std::fabs(numeric - analytic) <= 1e-2 * std::fabs(analytic) + 2e-5);
    }
  }
}

TEST_CASE("trainer: config validation names the field") {
  TrainerConfig c;
  CHECK(validate_config(c).empty());
  c.task = "bogus";
  CHECK(validate_config(c).find("task") != std::string::npos);
  c = TrainerConfig();
  c.num_heads = 3;
  CHECK(validate_config(c).find("numHeads") != std::string::npos);
  c = TrainerConfig();
  c.learning_rate = NAN;
  CHECK(validate_config(c).find("learningRate") != std::string::npos);
  c = TrainerConfig();
  c.batch_size = 0;
  CHECK(validate_config(c).find("batchSize") != std::string::npos);
  CHECK(!Trainer::create(c).trainer);
}

#if defined(__EMSCRIPTEN__)
#include <malloc.h>
#define HEADLAB_HEAP_IN_USE 1
std::size_t heap_in_use() { return static_cast<std::size_t>(mallinfo().uordblks); }
#elif defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#include <malloc.h>
#define HEADLAB_HEAP_IN_USE 1
std::size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;  // small blocks + mmapped ones
}
#endif

#ifdef HEADLAB_HEAP_IN_USE
TEST_CASE("trainer: Model::buffer_bytes is what a Model allocates") {
  for (std::size_t d : {16, 128, 512})
    for (std::size_t b : {1, 64, 512}) {
      const ModelConfig m{16, 8, 2, d, d / 16, b == 64, b};
      const std::size_t before = heap_in_use();
      auto model = std::make_unique<Model>(m);
      const double used = double(heap_in_use() - before), want = double(Model::buffer_bytes(m));
      CAPTURE(d);
      CAPTURE(b);
      CHECK(std::abs(used - want) <= 0.02 * want + 96 * 1024);
    }
}
#endif

TEST_CASE("trainer: a model whose buffers cannot fit is refused before anything is allocated") {
  TrainerConfig c;
  c.d_model = 1024;
  c.num_heads = 1;
  c.batch_size = 4096;
  const std::string why = validate_config(c);
  CHECK(why.find("batchSize") != std::string::npos);
  CHECK(why.find("MiB") != std::string::npos);
  CHECK(!Trainer::create(c).trainer);
  // The estimate is what the model really allocates: a config just under the limit builds.
  c.batch_size = 64;
  CHECK(validate_config(c).empty());
  const ModelConfig m{16, 8, 2, 1024, 1, false, 64};
  CHECK(Model::buffer_bytes(m) > 64 * 8 * 1024 * sizeof(float) * 2);  // at least X and dX
  CHECK(Model::buffer_bytes(m) < (std::size_t{384} << 20));
}

TEST_CASE("trainer: the same seed gives bit-identical loss curves") {
  for (OptimizerKind opt : {OptimizerKind::adam, OptimizerKind::sgd}) {
    TrainerConfig c;
    c.seed = 77;
    c.batch_size = 16;
    c.optimizer = opt;
    c.learning_rate = opt == OptimizerKind::sgd ? 0.1f : 0.003f;
    auto a = Trainer::create(c).trainer, b = Trainer::create(c).trainer;
    c.seed = 78;
    auto other = Trainer::create(c).trainer;
    bool differs = false;
    for (int i = 0; i < 60; ++i) {
      const StepResult x = a->step(), y = b->step(), z = other->step();
      REQUIRE(std::memcmp(&x.loss, &y.loss, sizeof(float)) == 0);
      CHECK(x.step == std::uint64_t(i + 1));
      differs = differs || x.loss != z.loss;
    }
    CHECK(differs);
    CHECK(std::memcmp(a->model().params(), b->model().params(), a->model().num_params() * sizeof(float)) ==
          0);
    const EvalResult ea = a->evaluate(300), eb = b->evaluate(300);
    CHECK(std::memcmp(&ea.loss, &eb.loss, sizeof(float)) == 0);
    CHECK(a->attention_weights() == b->attention_weights());
  }
}

TEST_CASE("trainer: probe attention map, task info and head metrics are well formed") {
  auto t = make("three-relations", 3, 24, 4);
  t->step(20);
  const TaskInfo info = t->task_info();
  CHECK(info.seq_len == 8);
  CHECK(info.query_position == 7);
  CHECK(info.relation_positions == std::vector<int>{6, 0, 3});
  const std::vector<float> w = t->attention_weights();
  REQUIRE(w.size() == 3 * 8 * 8);
  for (std::size_t row = 0; row < 3 * 8; ++row) {
    double s = 0;
    for (std::size_t j = 0; j < 8; ++j) s += w[row * 8 + j];
    CHECK(s == doctest::Approx(1.0).epsilon(1e-5));
  }
  // The probe map's query row (full self-attention through mha_forward) equals
  // the model's own query-row attention (t_q = 1 through mha_forward_cached).
  const TaskSpec& spec = t->task();
  TaskBatch probe(spec, 1);
  probe.tokens = t->probe_tokens();
  probe.query[0] = 7;
  for (std::size_t r = 0; r < 3; ++r)
    probe.answers[r] = probe.tokens[std::size_t(spec.relation_positions[r])];
  t->model().forward(probe, 1, false);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 8; ++j)
      CHECK(t->model().query_weights()[i * 8 + j] == doctest::Approx(w[(i * 8 + 7) * 8 + j]).epsilon(1e-5));
  const auto m = t->head_metrics(1);
  REQUIRE(m.size() == 3);
  for (const HeadMetrics& h : m) {
    CHECK(h.entropy >= 0.0f);
    CHECK(h.entropy <= std::log(8.0f) + 1e-5f);
    CHECK(h.mean_distance >= 0.0f);
    CHECK(h.mean_distance <= 7.0f);
  }
  // The metrics' values, recomputed in double from the same attention weights:
  // with n no larger than the batch, head_metrics runs one forward pass, whose
  // query-row weights [n, h, T] the model still holds afterwards. The query and
  // the three answers sit at fixed positions in three-relations.
  const std::size_t n = 40;
  const auto pinned = t->head_metrics(n);
  const float* qw = t->model().query_weights();
  for (std::size_t i = 0; i < 3; ++i) {
    double entropy = 0, distance = 0, share[3] = {};
    for (std::size_t b = 0; b < n; ++b) {
      const float* row = qw + (b * 3 + i) * 8;
      for (std::size_t j = 0; j < 8; ++j) {
        if (row[j] > 0.0f) entropy -= double(row[j]) * std::log(double(row[j]));
        distance += double(row[j]) * std::fabs(7.0 - double(j));
      }
      for (std::size_t r = 0; r < 3; ++r) share[r] += row[info.relation_positions[r]];
    }
    CAPTURE(i);
    CHECK(pinned[i].entropy == doctest::Approx(entropy / double(n)).epsilon(1e-6));
    CHECK(pinned[i].mean_distance == doctest::Approx(distance / double(n)).epsilon(1e-6));
    for (std::size_t r = 0; r < 3; ++r)
      CHECK(pinned[i].relation_share[r] == doctest::Approx(share[r] / double(n)).epsilon(1e-6));
  }
  // Causal: no query row looks ahead.
  TrainerConfig c;
  c.causal = true;
  auto causal = Trainer::create(c).trainer;
  const std::vector<float> cw = causal->attention_weights();
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t r = 0; r < 8; ++r)
      for (std::size_t j = r + 1; j < 8; ++j) CHECK(cw[(i * 8 + r) * 8 + j] == 0.0f);
}

TEST_CASE("trainer: save/load round trip, and load rejects damaged bytes") {
  auto t = make("two-relations", 2, 16, 5, 0.003f, 32);
  t->step(100);
  t->set_head_enabled(1, false);
  const std::vector<std::uint8_t> bytes = t->save();
  REQUIRE(bytes.size() > 60);
  CHECK(std::memcmp(bytes.data(), "HLAB", 4) == 0);

  TrainerOrError back = Trainer::load(bytes.data(), bytes.size());
  REQUIRE_MESSAGE(back.trainer, back.error);
  CHECK(back.trainer->steps() == 100);
  CHECK(!back.trainer->head_enabled(1));
  CHECK(back.trainer->save() == bytes);
  const EvalResult a = t->evaluate(500), b = back.trainer->evaluate(500);
  CHECK(std::memcmp(&a, &b, sizeof(EvalResult)) == 0);
  CHECK(t->attention_weights() == back.trainer->attention_weights());
  // The generator state is saved: the next training batch is the same one, so
  // the next step's loss (computed before the update) is identical.
  const StepResult s1 = t->step(1), s2 = back.trainer->step(1);
  CHECK(std::memcmp(&s1.loss, &s2.loss, sizeof(float)) == 0);
  CHECK(s2.step == 101);

  // Every truncation is rejected with a message.
  for (std::size_t n = 0; n < bytes.size(); n += (n < 200 ? 1 : 97)) {
    CAPTURE(n);
    const TrainerOrError r = Trainer::load(bytes.data(), n);
    CHECK(!r.trainer);
    CHECK(!r.error.empty());
  }
  auto corrupt = [&](std::size_t at, std::uint8_t value) {
    std::vector<std::uint8_t> b2 = bytes;
    b2[at] = value;
    return Trainer::load(b2.data(), b2.size());
  };
  CHECK(corrupt(0, 'X').error.find("magic") != std::string::npos);
  CHECK(corrupt(4, 9).error.find("version") != std::string::npos);
  CHECK(corrupt(8, 200).error.find("task name") != std::string::npos);
  CHECK(corrupt(9, 'x').error.find("task") != std::string::npos);
  const std::size_t heads_at = 9 + 13;         // after "two-relations"
  CHECK(!corrupt(heads_at, 3).error.empty());  // 3 heads do not divide 16
  // A NaN parameter (the last float, before the CRC-32): 0x7fc00000 little-endian,
  // in a file whose CRC is then made to match, so the parameter check is what refuses it.
  {
    std::vector<std::uint8_t> b2 = bytes;
    const std::uint8_t nan[4] = {0x00, 0x00, 0xc0, 0x7f};
    for (std::size_t k = 0; k < 4; ++k) b2[bytes.size() - 8 + k] = nan[k];
    const std::uint32_t crc = crc32(b2.data(), b2.size() - 4);
    for (std::size_t k = 0; k < 4; ++k) b2[b2.size() - 4 + k] = std::uint8_t(crc >> (8 * k));
    CHECK(Trainer::load(b2.data(), b2.size()).error.find("finite") != std::string::npos);
  }
  {
    std::vector<std::uint8_t> b2 = bytes;
    b2.push_back(0);
    CHECK(!Trainer::load(b2.data(), b2.size()).error.empty());
  }
  CHECK(!Trainer::load(nullptr, 0).error.empty());
}

TEST_CASE("two-relations, d_model 16: two heads specialise, one head splits its weight") {
  // h = 2: at least 4 of 5 seeds reach 0.99 held-out accuracy within the budget,
  // with each relation position owned by a head (>= 0.7 of its query-row weight).
  int good = 0;
  std::unique_ptr<Trainer> keep;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    auto t = make("two-relations", 2, 16, seed);
    const EvalResult e = train_until(*t, kBudget);
    const auto m = t->head_metrics(kHeldOut);
    print_metrics("two-relations h=2", seed, *t, e, m);
    const auto best = best_share(m, 2);
    const bool ok =
        e.accuracy >= 0.99f && best[0] >= 0.7f && best[1] >= 0.7f && head_for(m, 0) != head_for(m, 1);
    good += ok ? 1 : 0;
    if (ok && !keep) keep = std::move(t);
  }
  CHECK(good >= 4);

  // Ablation: switching off the head that owns a relation drops accuracy sharply,
  // mostly on that relation; switching it back on restores it.
  REQUIRE(keep);
  const auto m = keep->head_metrics(kHeldOut);
  for (std::size_t r = 0; r < 2; ++r) {
    const int head = head_for(m, r);
    keep->set_head_enabled(std::size_t(head), false);
    const EvalResult off = keep->evaluate(kHeldOut);
    std::printf("ablate head %d (owns relation %zu): accuracy %.3f, per relation %.3f/%.3f\n", head, r,
                off.accuracy, off.relation_accuracy[0], off.relation_accuracy[1]);
    CHECK(off.accuracy < 0.5f);
    CHECK(off.relation_accuracy[r] < 0.5f);
    CHECK(off.relation_accuracy[1 - r] > 0.8f);
    keep->set_head_enabled(std::size_t(head), true);
    CHECK(keep->evaluate(kHeldOut).accuracy >= 0.99f);
  }

  // h = 1: one softmax has to blend both positions.
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    auto t = make("two-relations", 1, 16, seed);
    const EvalResult e = train_until(*t, kBudget, false);
    const auto m1 = t->head_metrics(kHeldOut);
    print_metrics("two-relations h=1", seed, *t, e, m1);
    CHECK(m1[0].relation_share[0] >= 0.2f);
    CHECK(m1[0].relation_share[1] >= 0.2f);
    CHECK(e.accuracy < 0.99f);
  }
}

TEST_CASE("three-relations, d_model 24: three heads solve it, one head cannot") {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    auto t3 = make("three-relations", 3, 24, seed);
    const EvalResult e3 = train_until(*t3, kBudget);
    print_metrics("three-relations h=3", seed, *t3, e3, t3->head_metrics(kHeldOut));
    CHECK(e3.accuracy >= 0.99f);
    auto t1 = make("three-relations", 1, 24, seed);
    const EvalResult e1 = train_until(*t1, kBudget, false);
    print_metrics("three-relations h=1", seed, *t1, e1, t1->head_metrics(kHeldOut));
    CHECK(e1.accuracy <= 0.92f);
  }
}
