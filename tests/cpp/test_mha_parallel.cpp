// ParallelMha (headlab/mha_parallel.hpp): the work items the threads share give
// what mha_forward gives, and the two-step shutdown (request_stop, then the
// exited() word) that lets a caller which must not block wait for every thread
// before the destructor joins. Native builds only (the wasm test build has no
// -pthread; CMakeLists.txt leaves this file out of it).
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <utility>
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

TEST_CASE("parallel_mha_items: one item per head, one per block of 64 query rows") {
  MhaShape s;
  s.num_heads = 8;
  for (auto [t, blocks] : {std::pair<std::size_t, std::size_t>{1, 1}, {63, 1}, {64, 1}, {65, 2}, {256, 4}, {1024, 16}}) {
    s.t_q = t;
    const ParallelMhaItems items = parallel_mha_items(s);
    INFO("t_q " << t);
    CHECK(items.heads == 8);
    CHECK(items.row_blocks == blocks);
  }
}

// Masks, causal attention, cross-attention, row blocks with a tail: mha_forward's answer for each,
// with every output the caller can ask for (intermediates switch to mha_forward per head).
TEST_CASE("ParallelMha: masks, causal, cross-attention and intermediates as mha_forward gives them") {
  const std::size_t d = 24, heads = 3;
  for (std::size_t t : {1u, 13u, 130u}) {
    for (int variant = 0; variant < 4; ++variant) {  // plain, causal + head mask, key mask, cross-attention
      for (bool intermediates : {false, true}) {
        Problem p = problem(t, d, heads, 40u + static_cast<std::uint32_t>(t) + static_cast<std::uint32_t>(variant));
        std::uint32_t seed = 99u + static_cast<std::uint32_t>(t);
        MhaShape s = p.shape;
        std::vector<float> memory;  // cross-attention: keys and values from another sequence
        std::vector<std::uint8_t> key_mask, head_mask;
        MhaInputs in;
        in.query = in.key = in.value = p.query.data();
        if (variant == 1) {
          s.causal = true;
          head_mask = {1, 0, 1};
          in.head_mask = head_mask.data();
        } else if (variant == 2) {
          key_mask.assign(t, 1);
          for (std::size_t j = 0; j < t; j += 3) key_mask[j] = 0;
          in.key_mask = key_mask.data();
        } else if (variant == 3) {
          s.t_k = t + 5;
          memory = filled(s.t_k * d, seed);
          in.key = in.value = memory.data();
        }
        auto outputs = [&](std::vector<float>& out, std::vector<float>& weights, std::vector<float>& concat) {
          out.assign(s.t_q * d, 0.0f);
          weights.assign(intermediates ? heads * s.t_q * s.t_k : 0, 0.0f);
          concat.assign(intermediates ? s.t_q * heads * s.d_v : 0, 0.0f);
          MhaOutputs o;
          o.output = out.data();
          if (intermediates) {
            o.weights = weights.data();
            o.intermediates.concat = concat.data();
          }
          return o;
        };
        std::vector<float> want, want_w, want_c, got, got_w, got_c;
        std::vector<float> ws(mha_workspace_floats(s) + 4);
        auto at = reinterpret_cast<std::uintptr_t>(ws.data());
        mha_forward(s, in, p.weights(), outputs(want, want_w, want_c), reinterpret_cast<float*>((at + 15) & ~std::uintptr_t{15}));

        ParallelMha mha(p.shape, p.weights(), 2);
        REQUIRE(mha.reserve(s, !intermediates, intermediates));
        mha.start(s, in, outputs(got, got_w, got_c));
        mha.wait();
        INFO("t " << t << ", variant " << variant << ", intermediates " << intermediates);
        CHECK(test::worst(got, want, 1e-5, 1e-5) <= 1);
        CHECK(test::worst(got_w, want_w, 1e-5, 1e-5) <= 1);
        CHECK(test::worst(got_c, want_c, 1e-5, 1e-5) <= 1);
      }
    }
  }
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

// Each output element is computed once, by whichever thread takes its item, in a fixed order:
// the threads' timing changes no bit.
TEST_CASE("ParallelMha: calls give the same bits every time, whichever thread ran which item") {
  const Problem p = problem(150, 32, 4, 21u);
  ParallelMha mha(p.shape, p.weights(), 3);
  const std::vector<float> first = parallel_output(mha, p);
  for (int call = 0; call < 20; ++call) {
    INFO("call " << call);
    CHECK(parallel_output(mha, p) == first);
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
