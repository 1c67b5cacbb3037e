// Kept out of cpp/src/pretrained/ (headlab_pretrained): only threaded targets, built with
// threads (-pthread), compile this file. See headlab/pretrained_pool.hpp.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "headlab/pretrained_pool.hpp"
#include "headlab/work_share.hpp"

namespace headlab {

namespace {

class ThreadPool final : public PretrainedPool {
 public:
  explicit ThreadPool(std::size_t threads) : workers_(threads) {
    if (threads < 1) throw std::invalid_argument("a pool needs at least one worker");
    threads_.reserve(threads - 1);
    try {
      for (std::size_t w = 1; w < threads; ++w) threads_.emplace_back(&ThreadPool::loop, this, w);
    } catch (...) {  // end the threads already started, then report
      stop();
      throw;
    }
  }
  ~ThreadPool() override { stop(); }

  std::size_t workers() const override { return workers_; }

  void run(std::size_t chunks, const Task& task) override {
    if (workers_ == 1 || chunks < 2) {
      for (std::size_t c = 0; c < chunks; ++c) task(c, 0);
      return;
    }
    // A step of more chunks than the counter holds runs as several passes.
    for (std::size_t first = 0; first < chunks; first += threads::WorkCounter::kMaxItems) {
      task_ = &task;
      first_ = first;
      count_ = std::min(chunks - first, threads::WorkCounter::kMaxItems);
      done_.value.store(0, std::memory_order_relaxed);
      const std::uint32_t generation = work_.begin(count_);
      threads::wake_sleepers(idle_);
      run_chunks(generation, 0);
      threads::spin_then_wait(caller_, [&] { return done_.value.load() == count_; });
    }
    task_ = nullptr;
  }

 private:
  void stop() {
    stop_.value.store(1);
    threads::wake_sleepers(idle_);
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  void loop(std::size_t w) {
    std::uint32_t seen = 0;
    for (;;) {
      threads::spin_then_wait(idle_, [&] { return stop_.value.load() != 0 || work_.generation() != seen; });
      if (stop_.value.load() != 0) return;
      seen = work_.generation();
      run_chunks(seen, w);
    }
  }

  // noinline: in WebAssembly a kernel inlined into a thread's endless loop was
  // measured staying in V8's unoptimised tier (mha_parallel.cpp).
  __attribute__((noinline)) void run_chunks(std::uint32_t generation, std::size_t w) {
    std::size_t c;
    while (work_.claim(generation, c)) {
      // Read while this chunk is unfinished: the pass cannot end, so run() cannot be rewriting them.
      const Task& task = *task_;
      const std::size_t first = first_, count = count_;
      task(first + c, w);
      if (done_.value.fetch_add(1) + 1 == count) threads::wake_sleepers(caller_);
    }
  }

  const std::size_t workers_;
  std::vector<std::thread> threads_;
  const Task* task_ = nullptr;
  std::size_t first_ = 0, count_ = 0;
  threads::WorkCounter work_;
  threads::Line<std::size_t> done_;
  threads::Line<std::uint32_t> stop_;
  threads::Sleepers idle_;    // workers waiting for a step
  threads::Sleepers caller_;  // the calling thread waiting for the last chunk
};

}  // namespace

std::unique_ptr<PretrainedPool> make_pretrained_pool(std::size_t threads) {
  return std::make_unique<ThreadPool>(threads);
}

}  // namespace headlab
