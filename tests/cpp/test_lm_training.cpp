// The language model trained on its tasks: task generators (determinism, the
// cricket language), then training with each task's defaults (lm_tasks.cpp:
// 2 layers x 4 heads, d_model 32, no MLP, batch 64, Adam 1e-2 with beta2 0.95
// after a 1000-step linear warmup; beta1 0.8 for induction (3000 steps), 0.9
// for cricket (2000 steps); position embeddings N(0, 0.1^2), lm.hpp).
//
// Measured natively (held-out accuracy on 1000 sequences; phase step = first
// eval, every 50 steps, with accuracy >= 0.5 (bench/native/aha_sweep.cpp,
// same arithmetic; the test evaluates every 100); best layer-1
// previous-token and layer-2 induction scores; accuracy with layer-2 heads of
// induction >= 0.3 off):
//   induction, 2 layers   seed 1     2     3     4     5
//     accuracy                 0.990 0.983 0.993 0.994 0.991
//     phase step               1150  1200  1250  1150  1450   (median 1200)
//     previous token (L1)      0.71  0.66  0.72  0.77  0.66
//     induction (L2)           0.99  0.98  0.99  1.00  0.98
//     ablated accuracy         0.035 0.035 0.032 0.030 0.031
// With beta1 0.9 (before issue 23) the phase steps were 1800 1350 1350 1300
// 1450 and seed 1 failed (previous token 0.49); the schedules tried, and how
// one ulp of learning rate can move a seed's phase change by 1000 steps, are
// in bench/results/time-to-aha.md.
//   induction, 1 layer: accuracy 0.293 0.288 0.301 0.302 0.291, induction 0.16
//     on every seed (beta1 0.9)
//   cricket (2000 steps): best coreference 0.999 1.000 1.000 0.612 0.975 on
//     seeds 1-5 (with the MLP 0.999 0.781 0.998 1.000 1.000), best fixed
//     position 0.350; accuracy 1.000. The test pins seed 1.
// Before (positions N(0, 1), Adam 3e-3, no warmup, beta2 0.999) the phase
// change came within 3000 steps on 1 of 5 seeds (1900 steps, seed 1), as in 1
// of 4 seeds of the same model and task in PyTorch 1.13. What else was tried
// is in the comment above LanguageModel::init and in the commit messages.
//
// The wasm build (4-lane SIMD) rounds differently from the native AVX2 one
// and the trajectories drift apart: under Node (bench/training/phase-steps.mjs
// --full, phase every 50 steps) seeds 1-5 reach the phase change at steps
// 1150 1200 1300 1150 1600 with accuracy 0.990 0.981 0.996 0.995 0.988,
// previous token 0.72 0.66 0.78 0.76 0.61, induction 0.96-0.99: 5 of 5 there.
// (With beta1 0.9 seed 1 formed its heads late there: phase step 2000,
// previous token 0.34.) Cricket is unchanged: seed 1 reaches coreference 0.757
// (fixed position 0.350).
//
// The training cases run seeds 1-5 natively (about 60 s) and the pinned seed 4
// in the wasm build. They are slow under the sanitizers and are skipped there
// (HEADLAB_LM_SLOW is 0). The "measure:" cases (calibration over seeds,
// steps per second) are in the benchmark executable, not the test suite:
//   headlab_measure -tc="measure: lm*"  (bench/native, -DHEADLAB_BENCH=ON)
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "headlab/lm.hpp"
#include "headlab/lm_tasks.hpp"
#include "lm_runs.hpp"

using namespace headlab;

#if defined(__SANITIZE_ADDRESS__)
#define HEADLAB_LM_SLOW 0
#else
#define HEADLAB_LM_SLOW 1
#endif

namespace {

std::vector<std::string> words_of(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

std::string sentence(const LmTaskSpec& spec, const LmBatch& b, std::size_t row) {
  std::string s;
  for (std::size_t t = 0; t < b.seq_len; ++t) {
    const std::int32_t tok = b.tokens[row * b.seq_len + t];
    if (tok == spec.start_token || tok == spec.pad_token) continue;
    s += (s.empty() ? "" : " ") + std::string(spec.token_names[tok]);
  }
  return s;
}

}  // namespace

// ---- Task generators -----------------------------------------------------------

TEST_CASE("lm tasks: the table and determinism by seed") {
  REQUIRE(lm_task_count() == 3);
  for (std::size_t i = 0; i < lm_task_count(); ++i) {
    const LmTaskSpec& s = lm_task_at(i);
    CAPTURE(s.name);
    CHECK(find_lm_task(s.name) == &s);
    std::set<std::string> names;
    for (std::size_t t = 0; t < s.vocab; ++t) names.insert(s.token_names[t]);
    CHECK(names.size() == s.vocab);  // printable and distinct
    LmBatch a(s.seq_len, 50), b(s.seq_len, 50), c(s.seq_len, 50);
    Rng r1(5), r2(5), r3(6);
    generate_lm_batch(s, r1, 50, a);
    generate_lm_batch(s, r2, 50, b);
    generate_lm_batch(s, r3, 50, c);
    CHECK(a.tokens == b.tokens);
    CHECK(a.targets == b.targets);
    CHECK(a.scored == b.scored);
    CHECK(a.tokens != c.tokens);
    for (std::size_t row = 0; row < 50; ++row) {
      CHECK(a.tokens[row * s.seq_len] == s.start_token);
      for (std::size_t t = 0; t + 1 < s.seq_len; ++t) {
        const std::int32_t tg = a.targets[row * s.seq_len + t];
        CHECK((tg == -1 || tg == a.tokens[row * s.seq_len + t + 1]));
      }
    }
  }
  CHECK(find_lm_task("nope") == nullptr);
}

TEST_CASE("lm tasks: induction sequences repeat a segment at a random offset") {
  const LmTaskSpec& s = *find_lm_task("induction");
  CHECK(s.vocab == 33);
  CHECK(s.seq_len == 24);
  const std::size_t n = 2000;
  LmBatch b(s.seq_len, n);
  Rng rng(9);
  generate_lm_batch(s, rng, n, b);
  std::set<int> starts, lens;
  for (std::size_t row = 0; row < n; ++row) {
    const std::int32_t* tok = b.tokens.data() + row * s.seq_len;
    const std::size_t st = std::size_t(b.seg_start[row]), len = std::size_t(b.seg_len[row]);
    starts.insert(int(st));
    lens.insert(int(len));
    REQUIRE(len >= 4);
    REQUIRE(len <= 10);
    REQUIRE(st >= 1);
    REQUIRE(st + 2 * len <= s.seq_len);
    std::set<std::int32_t> seg(tok + st, tok + st + len);
    CHECK(seg.size() == len);  // distinct
    for (std::size_t j = 0; j < len; ++j) CHECK(tok[st + len + j] == tok[st + j]);
    std::size_t scored = 0;
    for (std::size_t t = 0; t < s.seq_len; ++t) scored += b.scored[row * s.seq_len + t];
    CHECK(scored == len - 1);
  }
  CHECK(lens.size() == 7);
  CHECK(starts.size() >= 12);
}

TEST_CASE("lm tasks: the cricket language") {
  const LmTaskSpec& s = *find_lm_task("cricket");
  int ref = -1;
  CHECK(cricket_parse(words_of("virat hit the ball because it was full"), &ref));
  CHECK(ref == 3);
  CHECK(cricket_parse(words_of("with the bat virat hit the ball because it was full ."), &ref));
  CHECK(ref == 6);
  CHECK(cricket_parse(words_of("rohit calmly checked the pitch near the glove again because it was dry"),
                      &ref));
  CHECK(ref == 4);
  CHECK_FALSE(cricket_parse(words_of("virat hit the ball because it was dry")));  // pitch's adjective
  CHECK_FALSE(cricket_parse(words_of("virat hit the ball near the ball because it was full")));
  CHECK_FALSE(cricket_parse(words_of("virat hit ball because it was full")));
  CHECK_FALSE(cricket_parse(words_of("virat hit the ball because it was full full")));
  CHECK_FALSE(cricket_parse(words_of("on the bat virat hit the ball past the pitch because it was full")));

  const std::size_t n = 4000;
  LmBatch b(s.seq_len, n);
  Rng rng(10);
  generate_lm_batch(s, rng, n, b);
  std::map<int, std::size_t> ref_pos, ref_offset;
  std::size_t with_distractor = 0, distractor_last = 0, sentences_seen = 0;
  for (std::size_t row = 0; row < n; ++row) {
    const std::string text = sentence(s, b, row);
    int parsed_ref = -1;
    CHECK_MESSAGE(cricket_parse(words_of(text), &parsed_ref), text);
    // parse indices exclude the start token
    CHECK(parsed_ref + 1 == b.referent[row]);
    ++sentences_seen;
    const int pr = b.pronoun[row], rf = b.referent[row], ds = b.distractor[row];
    ++ref_pos[rf];
    ++ref_offset[pr - rf];
    if (ds >= 0) {
      ++with_distractor;
      distractor_last += ds > rf ? 1 : 0;  // the distractor is the last noun before "it"
    }
    CHECK(b.tokens[row * s.seq_len + std::size_t(pr)] == cricket_token("it"));
    CHECK(b.scored[row * s.seq_len + std::size_t(pr) + 1] == 1);
  }
  CHECK(ref_pos.size() >= 4);
  CHECK(ref_offset.size() >= 4);
  for (const auto& kv : ref_pos) CHECK(double(kv.second) / double(n) <= 0.4);     // no fixed position
  for (const auto& kv : ref_offset) CHECK(double(kv.second) / double(n) <= 0.4);  // no fixed offset
  const double rate = double(with_distractor) / double(n), last = double(distractor_last) / double(n);
  CHECK(rate >= 0.6);
  CHECK(rate <= 0.9);
  CHECK(last >= 0.3);  // "the last noun" is wrong this often
  std::printf(
      "cricket: distractor in %.2f of sentences, after the referent in %.2f; referent at %zu positions, "
      "%zu offsets\n",
      rate, last, ref_pos.size(), ref_offset.size());
}

// ---- Training -------------------------------------------------------------------

// RunSpec, train, print_report, induction_run: lm_runs.hpp (shared with bench/native/measure_lm.cpp).

// Seeds the training cases run: 1..5 natively, the pinned seed 4 in the wasm
// build (slower under Node; 4-lane SIMD rounds differently from AVX2, and seed
// 1 takes another path there: see the header).
#if defined(__EMSCRIPTEN__)
constexpr std::uint64_t kFirstSeed = 4, kLastSeed = 4;
#else
constexpr std::uint64_t kFirstSeed = 1, kLastSeed = 5;
#endif
constexpr std::uint64_t kSeeds = kLastSeed - kFirstSeed + 1;


#if HEADLAB_LM_SLOW
TEST_CASE("lm training: two layers form previous-token and induction heads early, on 4 of 5 seeds") {
  std::size_t formed = 0;
  std::vector<std::size_t> phase_steps;  // of the seeds where the heads formed
  for (std::uint64_t seed = kFirstSeed; seed <= kLastSeed; ++seed) {
    CAPTURE(seed);
    const InductionRun r = induction_run(2, seed);
    if (!r.formed) continue;
    ++formed;
    phase_steps.push_back(r.phase_step);
    CHECK(r.accuracy - r.ablated >= 0.4f);  // the layer-2 induction heads do the work
  }
  CHECK(formed >= (kSeeds == 1 ? 1 : 4));
  REQUIRE(!phase_steps.empty());
  std::sort(phase_steps.begin(), phase_steps.end());
  const std::size_t median = phase_steps[phase_steps.size() / 2], worst = phase_steps.back();
  std::printf("induction 2 layers: heads formed in %zu of %llu seeds, phase step median %zu, worst %zu\n",
              formed, (unsigned long long)kSeeds, median, worst);
  CHECK(median <= 1500);  // ~6 s in the browser at 250 steps/s
  CHECK(worst <= 2500);
}

TEST_CASE("lm training: one layer cannot form an induction head, on any seed") {
  for (std::uint64_t seed = kFirstSeed; seed <= kLastSeed; ++seed) {
    CAPTURE(seed);
    const InductionRun r = induction_run(1, seed);
    CHECK(r.ind <= 0.3f);
    CHECK(r.accuracy <= 0.5f);
  }
}

TEST_CASE("lm training: cricket forms a coreference head that no fixed position explains") {
  const LmTaskSpec& spec = *find_lm_task("cricket");
  RunSpec rs;
  rs.task = "cricket";
  rs.seed = 1;  // pinned; "measure: lm cricket, 5 seeds" prints the others
  RunResult r = train(rs);
  Rng probe(78, 5);
  const LmHeadReport rep = detect_heads(r.model(), spec, probe, 500);
  print_report("cricket", rs.seed, r, rep);
  std::printf("  best coreference %.3f, best fixed position %.3f\n", rep.best_coreference,
              rep.best_fixed_position);
  CHECK(rep.best_coreference >= 0.6f);
  CHECK(rep.best_fixed_position <= 0.4f);
}
#endif
