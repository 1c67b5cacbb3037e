// Kept out of cpp/src/pretrained/ (headlab_pretrained): only threaded targets, built with
// threads (-pthread), compile this file. See headlab/pretrained_pool.hpp.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "headlab/pretrained_pool.hpp"

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

  void run(const std::function<void(std::size_t)>& task) override {
    if (workers_ == 1) {
      task(0);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      task_ = &task;
      pending_ = workers_ - 1;
      ++generation_;
    }
    go_.notify_all();
    call(task, 0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    task_ = nullptr;
  }

 private:
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    go_.notify_all();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  void loop(std::size_t w) {
    std::uint64_t seen = 0;
    for (;;) {
      const std::function<void(std::size_t)>* task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        go_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        task = task_;
      }
      call(*task, w);
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  // noinline: in WebAssembly a kernel inlined into a thread's endless loop was
  // measured staying in V8's unoptimised tier (mha_parallel.cpp).
  __attribute__((noinline)) static void call(const std::function<void(std::size_t)>& task, std::size_t w) {
    task(w);
  }

  const std::size_t workers_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable go_, done_;
  const std::function<void(std::size_t)>* task_ = nullptr;
  std::uint64_t generation_ = 0;
  std::size_t pending_ = 0;
  bool stop_ = false;
};

}  // namespace

std::unique_ptr<PretrainedPool> make_pretrained_pool(std::size_t threads) {
  return std::make_unique<ThreadPool>(threads);
}

}  // namespace headlab
