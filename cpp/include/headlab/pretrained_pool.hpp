// The threads one pretrained forward pass is split over (PretrainedModel::set_pool).
// Each parallel step of the pass is one call of run(task): task(w) runs once for
// every worker w in [0, workers()), worker 0 on the calling thread, and run returns
// when all are done. A task takes a fixed share of the step by w (a range of GEMM
// columns, of heads, of rows), so the split and every result depend only on the
// number of workers, never on timing. Tasks never allocate (in WebAssembly a heap
// grown on another thread leaves the calling thread's views of it stale) and never throw.
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

// [begin, end) of worker w's share of n items cut into `workers` contiguous runs of
// whole blocks of `block` items (the last block may be short); runs differ by at most one block.
struct PretrainedShare {
  std::size_t begin, end;
};
inline PretrainedShare pretrained_share(std::size_t n, std::size_t block, std::size_t w, std::size_t workers) {
  const std::size_t blocks = (n + block - 1) / block;
  const std::size_t b0 = blocks * w / workers, b1 = blocks * (w + 1) / workers;
  const std::size_t begin = b0 * block, end = b1 * block;
  return {begin < n ? begin : n, end < n ? end : n};
}

}  // namespace headlab
