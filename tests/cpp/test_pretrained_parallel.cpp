// PretrainedModel on threads (set_pool, headlab/pretrained_pool.hpp): 2 and 3
// workers give exactly what one gives (the GEMMs split into chunks of 64-column
// panels, the heads, the lens rows: each output computed by the same arithmetic), and the
// one-thread answer agrees with the double reference. Shapes wide enough that
// every split is real: 3 heads, QKV 144 columns, d_ff 160, vocabulary 200.
// Native builds only (the wasm test build has no -pthread; CMakeLists.txt leaves
// this file out of it; tests/js/pretrained-threads.test.mjs runs the threaded module).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "checks.hpp"
#include "headlab/pretrained.hpp"
#include "headlab/pretrained_pool.hpp"
#include "reference_pretrained.hpp"

using namespace headlab;
using namespace headlab::test;

namespace {

std::unique_ptr<PretrainedModel> load_model(const RefConfig& c, const RefWeights& w, const std::string& dtype) {
  PretrainedConfig p;
  p.architecture = c.neo ? PretrainedArch::gpt_neo : PretrainedArch::gpt2;
  p.num_layers = c.layers, p.num_heads = c.heads, p.d_model = c.d, p.d_ff = c.ff;
  p.vocab = c.vocab, p.context = c.context, p.ln_eps = float(c.eps), p.scale_scores = !c.neo;
  p.windows = c.windows.empty() ? std::vector<std::size_t>(c.layers, 0) : c.windows;
  auto m = std::make_unique<PretrainedModel>(p);
  std::vector<FileTensor> all;
  for (const auto& [name, t] : w) all.push_back(encode(name, t, dtype));
  const std::vector<std::uint8_t> bytes = write_safetensors(all);
  std::uint8_t* buffer = m->alloc_file(bytes.size());
  REQUIRE(buffer != nullptr);
  std::memcpy(buffer, bytes.data(), bytes.size());
  REQUIRE(m->add_safetensors("model.safetensors", buffer, bytes.size()) == "");
  REQUIRE(m->finish() == "");
  return m;
}

struct Answers {
  PretrainedRunResult all, last, lens;
  std::vector<float> scores;
  std::vector<std::int32_t> greedy, sampled;
};

Answers answers(PretrainedModel& m, const std::vector<std::int32_t>& ids, const std::vector<std::uint8_t>& ablate,
                Path path) {
  Answers a;
  PretrainedRunOptions o;
  o.attention = true;
  o.all_logits = true;
  o.ablate = ablate.data();
  REQUIRE(m.run(ids.data(), ids.size(), o, &a.all, path) == "");
  REQUIRE(m.run(ids.data(), ids.size(), PretrainedRunOptions{}, &a.last, path) == "");
  PretrainedRunOptions lens;
  lens.lens = true;
  lens.lens_top_k = 3;
  REQUIRE(m.run(ids.data(), ids.size(), lens, &a.lens, path) == "");
  const std::size_t n = (ids.size() - 1) / 2;
  REQUIRE(m.head_scores(ids.data(), 2 * n + 1, n, &a.scores, path) == "");
  REQUIRE(m.generate(ids.data(), 3, 6, 0.0f, 1, -1, &a.greedy, path) == "");
  REQUIRE(m.generate(ids.data(), 3, 6, 0.8f, 7, -1, &a.sampled, path) == "");
  return a;
}

}  // namespace

TEST_CASE("pretrained threads: 2 and 3 workers give one worker's answers exactly") {
  RefConfig gpt2;
  gpt2.layers = 2, gpt2.heads = 3, gpt2.d = 48, gpt2.ff = 160, gpt2.vocab = 200, gpt2.context = 24;
  RefConfig neo = gpt2;
  neo.neo = true;
  neo.windows = {0, 5};  // a local layer whose window is shorter than the text
  for (const RefConfig& c : {gpt2, neo})
    for (const char* dtype : {"F32", "F16", "BF16"})
      for (Path path : {Path::simd, Path::ref}) {
        CAPTURE(c.neo);
        CAPTURE(dtype);
        CAPTURE(int(path));
        const RefWeights w = random_weights(c, 3);
        auto m = load_model(c, w, dtype);
        std::mt19937 rng(5);
        std::vector<std::int32_t> ids(17);
        for (auto& x : ids) x = std::int32_t(rng() % c.vocab);
        std::vector<std::uint8_t> ablate(c.layers * c.heads, 0);
        ablate[1] = 1;
        const Answers one = answers(*m, ids, ablate, path);
        // The one-thread answer is right (so "the same" below means right too).
        const RefOutput want = reference_forward(c, w, ids, ablate);
        CHECK(worst(one.all.logits, want.logits, 1e-4, 1e-4) <= 1);
        CHECK(worst(one.all.attention, want.attention, 1e-4, 1e-4) <= 1);
        for (std::size_t threads : {2, 3}) {
          CAPTURE(threads);
          m->set_pool(make_pretrained_pool(threads));
          CHECK(m->threads() == threads);
          const Answers many = answers(*m, ids, ablate, path);
          CHECK(many.all.logits == one.all.logits);
          CHECK(many.all.attention == one.all.attention);
          CHECK(many.last.logits == one.last.logits);
          CHECK(many.lens.lens_ids == one.lens.lens_ids);
          CHECK(many.lens.lens_probs == one.lens.lens_probs);
          CHECK(many.scores == one.scores);
          CHECK(many.greedy == one.greedy);
          CHECK(many.sampled == one.sampled);
        }
        m->set_pool(nullptr);
        CHECK(m->threads() == 1);
        CHECK(answers(*m, ids, ablate, path).all.logits == one.all.logits);
      }
}

TEST_CASE("pretrained threads: the pool runs every chunk once, a worker on one thread, the caller as worker 0") {
  for (std::size_t threads : {1, 2, 4}) {
    CAPTURE(threads);
    auto pool = make_pretrained_pool(threads);
    REQUIRE(pool->workers() == threads);
    std::vector<std::thread::id> thread_of(threads);  // worker w's thread, as first seen
    std::vector<std::atomic<int>> busy(threads);
    int overlaps = 0, wrong_worker = 0;
    for (std::size_t chunks : {0, 1, 2, 3, 7, 100})
      for (int step = 0; step < 50; ++step) {
        CAPTURE(chunks);
        std::vector<int> hits(chunks, 0);
        std::vector<std::thread::id> seen(threads);
        pool->run(chunks, [&](std::size_t c, std::size_t w) {
          if (w >= threads) return;
          if (busy[w].fetch_add(1) != 0) ++overlaps;  // racy count, but only when the pool is wrong
          hits[c] += 1;
          seen[w] = std::this_thread::get_id();
          busy[w].fetch_sub(1);
        });
        CHECK(hits == std::vector<int>(chunks, 1));
        for (std::size_t w = 0; w < threads; ++w) {
          if (seen[w] == std::thread::id()) continue;
          if (thread_of[w] == std::thread::id()) thread_of[w] = seen[w];
          if (seen[w] != thread_of[w]) ++wrong_worker;
          if ((w == 0) != (seen[w] == std::this_thread::get_id())) ++wrong_worker;
        }
      }
    CHECK(overlaps == 0);
    CHECK(wrong_worker == 0);
  }
}

TEST_CASE("pretrained threads: every worker takes part (each chunk waits for all to start)") {
  // A worker runs one chunk at a time, so `threads` chunks that each wait for all of them
  // to start finish only if every worker took one (no wake-up lost, no worker missing).
  for (std::size_t threads : {2, 3, 4}) {
    auto pool = make_pretrained_pool(threads);
    for (int step = 0; step < 20; ++step) {
      std::atomic<std::size_t> started{0};
      std::vector<int> by_worker(threads, 0);
      pool->run(threads, [&](std::size_t, std::size_t w) {
        started.fetch_add(1);
        while (started.load() < threads) std::this_thread::yield();
        by_worker[w] += 1;
      });
      CHECK(by_worker == std::vector<int>(threads, 1));
    }
  }
}

namespace {

// Two workers in name, the chunks run in order on the calling thread: the chunks of each step.
class ChunkPool final : public PretrainedPool {
 public:
  std::vector<std::size_t> chunks_of;
  std::size_t workers() const override { return 2; }
  void run(std::size_t chunks, const Task& task) override {
    chunks_of.push_back(chunks);
    for (std::size_t c = 0; c < chunks; ++c) task(c, c % 2);
  }
};

}  // namespace

TEST_CASE("pretrained threads: a product of few columns still gives both workers work, same answers") {
  // Packed float32 weights: chunks of whole packed panels (16 columns in WebAssembly, 32 with
  // AVX2), about 8 per worker, where whole 64-column panels left d 48 (and SmolLM2's d 576, 9 of
  // them) split 1 : 0 (5 : 4). Every step of this pass has at least 2 chunks: c_attn (144
  // columns), the 3 heads, c_proj (48), c_fc with GELU (160), mlp.c_proj (48), the unembedding.
  RefConfig c;
  c.layers = 2, c.heads = 3, c.d = 48, c.ff = 160, c.vocab = 200, c.context = 24;
  const RefWeights w = random_weights(c, 3);
  auto m = load_model(c, w, "F32");
  std::vector<std::int32_t> ids(17);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = std::int32_t((i * 37) % c.vocab);
  PretrainedRunOptions o;
  o.all_logits = true;
  PretrainedRunResult one, two;
  REQUIRE(m->run(ids.data(), ids.size(), o, &one) == "");
  auto pool = std::make_unique<ChunkPool>();
  ChunkPool* chunks = pool.get();
  m->set_pool(std::move(pool));
  REQUIRE(m->run(ids.data(), ids.size(), o, &two) == "");
  CHECK(chunks->chunks_of.size() == 5 * c.layers + 1);
  CHECK(*std::min_element(chunks->chunks_of.begin(), chunks->chunks_of.end()) >= 2);
  CHECK(two.logits == one.logits);
}
