// The threads one pretrained forward pass is split over (PretrainedModel::set_pool).
// Each parallel step of the pass is one call of run(task): task(w) runs once for
// every worker w in [0, workers()), worker 0 on the calling thread, and run returns
// when all are done. The model's tasks claim chunks of the step (GEMM column runs,
// heads, rows) from a shared counter; which worker computes a chunk changes only
// where its result is written from, never the arithmetic. Tasks never allocate (in
// WebAssembly a heap grown on another thread leaves the calling thread's views of
// it stale) and never throw.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

namespace headlab {

class PretrainedPool {
 public:
  virtual ~PretrainedPool() = default;
  virtual std::size_t workers() const = 0;
  virtual void run(const std::function<void(std::size_t worker)>& task) = 0;
};

// A pool of `threads` workers: threads - 1 POSIX threads started now, waiting
// between steps, joined by the destructor (threads >= 1). Only the threaded
// targets (built with -pthread) define it: cpp/src/threads/pretrained_pool.cpp.
std::unique_ptr<PretrainedPool> make_pretrained_pool(std::size_t threads);

}  // namespace headlab
