// Multi-head attention with its work shared by threads of one process (POSIX
// threads; in WebAssembly, Emscripten's pthreads over shared memory).
//
// A pass is two phases of small work items that the threads take one at a
// time from a shared counter, so a thread that the system preempts (a busy
// machine) holds back only the item it has, not a fixed half of the pass:
//   1. one item per head: its Q, K, V projections (its columns of W^Q, W^K,
//      W^V, copied per head at construction) and its attention, into its
//      columns of a shared concatenation [t_q, h*d_v];
//   2. one item per block of query rows: those rows of concat W^O + b^O.
// A thread that takes a phase-2 item before every head is done waits for them
// (a short spin, then it sleeps). Each output element is computed once, in
// mha_forward's order: no partial outputs to sum, and the output is that of
// mha_forward bit for bit wherever the GEMMs are not contracted to FMA
// (WebAssembly). Threads write disjoint column bands or row blocks; the shared
// counters sit on cache lines of their own.
//
// Why heads first and not query rows: K and V of a head serve every query row,
// so a row split would project them again in every item.
//
// The threads are started once and wait between calls: after a pass a thread
// spins briefly for the next one (back-to-back calls then cost no wake-up),
// then sleeps. A caller that must not block (a browser's main thread, where
// Emscripten warns at every pthread_join) ends them in steps: request_stop(),
// wait on exited() (on_exited wakes it), then try_join() until it says all
// are joined; the destructor then joins nothing. Every buffer is allocated by
// reserve() on the calling thread: the threads never allocate (in WebAssembly,
// a heap that grows on another thread leaves the calling thread's views of it
// stale).
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
#include "headlab/work_share.hpp"

namespace headlab {

// Query rows per phase-2 item: a multiple of the GEMM's 2-row register tile, so
// each element is summed in the same order as by one GEMM over all rows; 64
// rows keep W^O's repacking per item small against the item's work.
constexpr std::size_t kParallelMhaRows = 64;

// Work items of one pass: num_heads in phase 1, ceil(t_q / kParallelMhaRows) in phase 2.
struct ParallelMhaItems {
  std::size_t heads = 0, row_blocks = 0;
};
ParallelMhaItems parallel_mha_items(const MhaShape& call);

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

  std::size_t threads() const { return threads_count_; }

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
  // One thread's buffers (each its own allocation, so no two threads write one cache line).
  struct Scratch {
    std::vector<float> workspace;  // phase 1: projections, attention, GEMM packing; phase 2: packing
    std::vector<float> output;     // intermediates path: mha_forward's single-head output, unused
  };

  struct Start {
    ParallelMha* self;
    std::size_t t;
  };
  static void* thread_main(void* start);
  void loop(std::size_t t);
  void run_head(std::size_t t, std::size_t head);
  void run_rows(std::size_t t, std::size_t block);
  void finish();

  MhaShape dims_;
  std::size_t threads_count_;
  // Per head, contiguous: W^Q, W^K columns [d_model, d_k], W^V columns [d_model, d_v], biases.
  std::vector<float> w_q_, w_k_, w_v_, b_q_, b_k_, b_v_;
  std::vector<float> w_o_, b_o_;  // as given: [h*d_v, d_model], [d_model]
  std::vector<Scratch> scratch_;
  std::vector<float> concat_;  // [t_q, h*d_v], heads masked off zeroed
  bool output_only_ = true;    // the pass reserved for: fused attention, no intermediates
  // pthread_t, not std::thread: try_join() reaps them with pthread_tryjoin_np,
  // after which a std::thread would still count as joinable.
  std::vector<Start> starts_;
  std::vector<pthread_t> threads_;
  std::size_t joined_ = 0;  // threads_[0, joined_) have been joined

  // The pass being run, read by the threads after they see a new generation.
  MhaShape call_;
  MhaInputs in_;
  MhaOutputs out_;
  ParallelMhaItems items_;

  threads::WorkCounter work_;
  std::uint32_t passes_ = 0;                 // started (calling thread only)
  threads::Line<std::uint32_t> heads_done_;  // phase-1 items finished in this pass
  threads::Line<std::uint32_t> items_done_;  // items finished in this pass
  threads::Line<std::uint32_t> stop_;
  threads::Sleepers idle_;                   // threads waiting for a pass, or for the heads
  std::mutex mutex_;                         // wait()'s
  std::condition_variable done_;
  std::atomic<std::uint32_t> finished_{0};
  std::atomic<std::uint32_t> exited_{0};
};

}  // namespace headlab
