// Multi-head attention with its heads split across threads of one process
// (POSIX threads; in WebAssembly, Emscripten's pthreads over shared memory).
//
// Thread t holds a contiguous run of heads [h0, h1): its columns of W^Q, W^K,
// W^V (and b^Q, b^K, b^V), its rows of W^O, b^O only in run 0. Each thread runs
// mha_forward on its run, writing its heads' weights and head-major
// intermediates straight into their place in the caller's arrays, and a
// partial output [t_q, d_model]; the last thread to finish sums the partials.
//
// Why heads and not query rows: split by heads, each thread does 1/threads of
// every step (projections, attention, its slice of W^O) and the reduction is
// t_q·d_model additions per extra thread. Split by rows, every thread would
// project all of K and V (2·t_k·d_model² each, repeated per thread).
//
// The threads are started once and wait between calls, so a call costs two
// wake-ups, not thread creations. A caller that must not block (a browser's
// main thread, where Emscripten warns at every pthread_join) ends them in
// steps: request_stop(), wait on exited() (on_exited wakes it), then
// try_join() until it says all are joined; the destructor then joins nothing.
// Every buffer is allocated by reserve() on the calling thread: the threads
// never allocate (in WebAssembly, a heap that grows on another thread leaves
// the calling thread's views of it stale).
#pragma once

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "headlab/mha.hpp"

namespace headlab {

struct HeadRun {
  std::size_t begin = 0, end = 0;  // heads [begin, end)
};

// num_heads split into `threads` contiguous runs whose sizes differ by at most 1
// (threads <= num_heads).
std::vector<HeadRun> split_heads(std::size_t num_heads, std::size_t threads);

class ParallelMha {
 public:
  // dims: d_model, num_heads, d_k, d_v as resolved by mha_resolve_shape (t_q,
  // t_k, causal are ignored). The weights are copied; bias pointers may be null.
  // 1 <= threads <= num_heads. Starts the threads.
  ParallelMha(const MhaShape& dims, const MhaWeights& w, std::size_t threads);
  // Ends the threads (waiting for a pass that is running) and joins them.
  ~ParallelMha();
  ParallelMha(const ParallelMha&) = delete;
  ParallelMha& operator=(const ParallelMha&) = delete;

  std::size_t threads() const { return runs_.size(); }
  const std::vector<HeadRun>& runs() const { return runs_; }

  // Allocates what a call with this shape needs (shape already resolved, same
  // dims as the layer); wants_concat: the concat intermediate is asked for.
  // Returns false when memory runs out.
  bool reserve(const MhaShape& call, bool output_only, bool wants_concat);

  // Starts a forward pass and returns at once. `call` as given to reserve();
  // in/out as for mha_forward with the full layer (head_mask [num_heads]).
  // Nothing else may touch `out` or the inputs until the pass is done.
  void start(const MhaShape& call, const MhaInputs& in, const MhaOutputs& out);

  // Blocks until the pass started last is done.
  void wait();

  // Counts finished passes; changes (and `on_done` runs) when a pass is done.
  // A waiter that cannot block (a browser's main thread) polls or waits on it.
  const std::atomic<std::uint32_t>& finished() const { return finished_; }

  // Called on the thread that finished a pass, after `finished` changed, with
  // its address (WebAssembly: wakes a JavaScript Atomics.waitAsync on it).
  void (*on_done)(const std::atomic<std::uint32_t>* word) = nullptr;

  // Asks every thread to leave its loop and returns at once. Only between
  // passes (a pass started and not done would never finish); start() must not
  // be called afterwards. Twice is fine.
  void request_stop();

  // Counts threads that have left their loop (after request_stop() or in the
  // destructor); equals threads() once all have, when the destructor's joins
  // no longer wait for anything but the threads' own exit.
  const std::atomic<std::uint32_t>& exited() const { return exited_; }

  // Called on the last thread to leave its loop, after `exited` reached
  // threads(), with its address (WebAssembly: wakes an Atomics.waitAsync).
  void (*on_exited)(const std::atomic<std::uint32_t>* word) = nullptr;

  // Joins the threads that have ended, without blocking (pthread_tryjoin_np;
  // no Emscripten warning); true once every thread has been joined. After
  // request_stop(): a thread that has left its loop ends moments later.
  bool try_join();

 private:
  struct Slice {
    std::vector<float> w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o;
    std::vector<float> workspace, partial, concat;
  };

  struct Start {
    ParallelMha* self;
    std::size_t t;
  };
  static void* thread_main(void* start);
  void loop(std::size_t t);
  void run_slice(std::size_t t);
  void finish();

  MhaShape dims_;
  std::vector<HeadRun> runs_;
  std::vector<Slice> slices_;
  // pthread_t, not std::thread: try_join() reaps them with pthread_tryjoin_np,
  // after which a std::thread would still count as joinable.
  std::vector<Start> starts_;
  std::vector<pthread_t> threads_;
  std::size_t joined_ = 0;  // threads_[0, joined_) have been joined

  // The pass being run, read by the threads after they see a new generation.
  MhaShape call_;
  MhaInputs in_;
  MhaOutputs out_;

  std::mutex mutex_;
  std::condition_variable go_, done_;
  std::uint32_t generation_ = 0;  // guarded by mutex_
  bool stop_ = false;             // guarded by mutex_
  std::atomic<std::size_t> remaining_{0};
  std::atomic<std::uint32_t> finished_{0};
  std::atomic<std::uint32_t> exited_{0};
};

}  // namespace headlab
