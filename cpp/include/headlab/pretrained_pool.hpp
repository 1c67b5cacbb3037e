// The threads one pretrained forward pass is split over (PretrainedModel::set_pool).
// Each parallel step of the pass is one call of run(chunks, task): task(chunk, worker)
// runs once for every chunk in [0, chunks), on whichever worker takes it first
// (workers take chunks one at a time from a counter and wait between steps as
// headlab/work_share.hpp describes); worker 0 is the calling thread, which takes
// chunks too, and run returns when every chunk is done. A worker runs one chunk at
// a time, so a task may use per-worker scratch. Which worker computes a chunk changes
// only where its result is written from, never the arithmetic. Tasks never allocate
// (in WebAssembly a heap grown on another thread leaves the calling thread's views
// of it stale) and never throw.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

namespace headlab {

class PretrainedPool {
 public:
  using Task = std::function<void(std::size_t chunk, std::size_t worker)>;
  virtual ~PretrainedPool() = default;
  virtual std::size_t workers() const = 0;
  virtual void run(std::size_t chunks, const Task& task) = 0;
};

// A pool of `threads` workers: threads - 1 POSIX threads started now, waiting
// between steps, joined by the destructor (threads >= 1). Only the threaded
// targets (built with -pthread) define it: cpp/src/threads/pretrained_pool.cpp.
std::unique_ptr<PretrainedPool> make_pretrained_pool(std::size_t threads);

}  // namespace headlab
