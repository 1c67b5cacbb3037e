// ParallelMha (headlab/mha_parallel.hpp): the heads split across threads give
// what mha_forward gives, and the two-step shutdown (request_stop, then the
// exited() word) that lets a caller which must not block wait for every thread
// before the destructor joins. Native builds only (the wasm test build has no
// -pthread; CMakeLists.txt leaves this file out of it).
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include "checks.hpp"
#include "headlab/mha.hpp"
#include "headlab/mha_parallel.hpp"

using namespace headlab;

namespace {

std::vector<float> filled(std::size_t n, std::uint32_t& seed) {
  std::vector<float> v(n);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
  }
  return v;
}

struct Problem {
  MhaShape shape;
  std::vector<float> w_q, w_k, w_v, w_o, b_o, query;
  MhaWeights weights() const {
    MhaWeights w;
    w.w_q = w_q.data();
    w.w_k = w_k.data();
    w.w_v = w_v.data();
    w.w_o = w_o.data();
    w.b_o = b_o.data();
    return w;
  }
};

Problem problem(std::size_t t, std::size_t d_model, std::size_t heads, std::uint32_t seed) {
  Problem p;
  p.shape.t_q = p.shape.t_k = t;
  p.shape.d_model = d_model;
  p.shape.num_heads = heads;
  REQUIRE(mha_resolve_shape(p.shape) == "");
  const std::size_t hk = heads * p.shape.d_k, hv = heads * p.shape.d_v;
  p.w_q = filled(d_model * hk, seed);
  p.w_k = filled(d_model * hk, seed);
  p.w_v = filled(d_model * hv, seed);
  p.w_o = filled(hv * d_model, seed);
  p.b_o = filled(d_model, seed);
  p.query = filled(t * d_model, seed);
  return p;
}

std::vector<float> reference_output(const Problem& p) {
  std::vector<float> out(p.shape.t_q * p.shape.d_model);
  std::vector<float> workspace(mha_workspace_floats(p.shape) + 4);
  auto at = reinterpret_cast<std::uintptr_t>(workspace.data());
  MhaInputs in;
  in.query = in.key = in.value = p.query.data();
  MhaOutputs o;
  o.output = out.data();
  mha_forward(p.shape, in, p.weights(), o, reinterpret_cast<float*>((at + 15) & ~std::uintptr_t{15}));
  return out;
}

std::vector<float> parallel_output(ParallelMha& mha, const Problem& p) {
  std::vector<float> out(p.shape.t_q * p.shape.d_model);
  REQUIRE(mha.reserve(p.shape, true, false));
  MhaInputs in;
  in.query = in.key = in.value = p.query.data();
  MhaOutputs o;
  o.output = out.data();
  mha.start(p.shape, in, o);
  mha.wait();
  return out;
}

// Where on_exited was called from, and how often, for the test below.
std::atomic<int> exited_calls{0};
std::atomic<const std::atomic<std::uint32_t>*> exited_word{nullptr};
std::atomic<bool> exited_on_caller{false};
std::thread::id caller;

void record_exit(const std::atomic<std::uint32_t>* word) {
  exited_calls.fetch_add(1);
  exited_word.store(word);
  if (std::this_thread::get_id() == caller) exited_on_caller.store(true);
}

}  // namespace

TEST_CASE("split_heads: contiguous runs whose sizes differ by at most one") {
  const auto runs = split_heads(8, 3);
  REQUIRE(runs.size() == 3);
  CHECK(runs[0].begin == 0);
  CHECK(runs[0].end == 3);
  CHECK(runs[1].end == 6);
  CHECK(runs[2].end == 8);
}

TEST_CASE("ParallelMha: the output equals mha_forward's for 1, 2 and 3 threads") {
  for (std::size_t threads : {1, 2, 3}) {
    const Problem p = problem(13, 24, 3, 7u + static_cast<std::uint32_t>(threads));
    ParallelMha mha(p.shape, p.weights(), threads);
    CHECK(mha.threads() == threads);
    const std::vector<float> want = reference_output(p);
    for (int call = 0; call < 3; ++call) {
      std::size_t where = 0;
      const double w = test::worst(parallel_output(mha, p), want, 1e-5, 1e-5, &where);
      INFO("threads " << threads << ", call " << call << ", worst at " << where << ": " << w);
      CHECK(w <= 1);
    }
    CHECK(mha.finished().load() == 3);
    CHECK(mha.exited().load() == 0);
  }
}

TEST_CASE("ParallelMha: request_stop() lets every thread leave; on_exited runs once, on a thread") {
  for (std::size_t threads : {1, 2, 3}) {
    exited_calls = 0;
    exited_word = nullptr;
    exited_on_caller = false;
    caller = std::this_thread::get_id();
    const Problem p = problem(5, 12, 3, 11u);
    {
      ParallelMha mha(p.shape, p.weights(), threads);
      mha.on_exited = record_exit;
      parallel_output(mha, p);  // a pass first: threads that have worked stop too
      mha.request_stop();
      mha.request_stop();  // twice is fine
      // What a caller that cannot block does (here by yielding): wait for the word, then reap the threads.
      while (mha.exited().load(std::memory_order_acquire) != threads) std::this_thread::yield();
      while (!mha.try_join()) std::this_thread::yield();
      CHECK(mha.try_join());  // all joined: stays true
      // The word changes before on_exited runs, so these are read once the threads have ended.
      CHECK(exited_calls.load() == 1);
      CHECK(exited_word.load() == &mha.exited());
      CHECK_FALSE(exited_on_caller.load());
    }  // the destructor has nothing left to join
    CHECK(exited_calls.load() == 1);
  }
}

TEST_CASE("ParallelMha: try_join() joins nothing while the threads run") {
  const Problem p = problem(4, 8, 2, 5u);
  ParallelMha mha(p.shape, p.weights(), 2);
  CHECK_FALSE(mha.try_join());
  const std::vector<float> want = reference_output(p);
  CHECK(test::worst(parallel_output(mha, p), want, 1e-5, 1e-5) <= 1);  // the threads still serve calls
  CHECK_FALSE(mha.try_join());
}

TEST_CASE("ParallelMha: destroyed without request_stop(), the threads still leave (on_exited once)") {
  exited_calls = 0;
  const Problem p = problem(4, 8, 2, 3u);
  {
    ParallelMha mha(p.shape, p.weights(), 2);
    mha.on_exited = record_exit;
  }
  CHECK(exited_calls.load() == 1);
}
