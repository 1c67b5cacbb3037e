// A data-parallel training step for the language model (LmTrainer) over
// threads of one process (std::thread; in WebAssembly, Emscripten's pthreads).
// Threaded builds only (cpp/src/threads/): the core knows no threads.
//
// Each step's batch of n sequences is cut into `threads` contiguous slices
// whose sizes differ by at most 1 (split_batch). Slice 0 runs on the calling
// thread through the trainer's own model; slice i >= 1 runs on persistent
// thread i through replica i, a LanguageModel of the same config with
// max_batch = ceil(batch / threads). Per step each thread first copies the
// master's parameters (and head switches) into its replica (LanguageModel owns
// its parameters; reading external ones would change every view in lm.cpp, so
// they are copied: num_params floats per thread per step), then runs
// forward + backward on its slice.
//
// The loss is a mean over the batch's target positions, so slice i (P_i of the
// P targets) weighs P_i / P: the master's grads become sum_i (P_i/P) g_i and
// the loss sum_i (P_i/P) loss_i, summed in slice order. That equals the
// one-thread step up to float rounding (the order of the sums differs), not
// bit for bit. The trainer then takes its usual optimizer step, warm-up and
// divergence check on these.
//
// The threads start once and wait between steps (two wake-ups per step). They
// never allocate: every buffer is made by the constructor on the calling
// thread (in WebAssembly a heap grown on another thread leaves the caller's
// views stale).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "headlab/lm.hpp"

namespace headlab {

struct LmSlice {
  std::size_t begin = 0, end = 0;  // sequences [begin, end) of the batch
};

// n sequences in `threads` contiguous slices, the first n % threads one longer
// (threads >= 1; slices are empty when threads > n).
std::vector<LmSlice> split_batch(std::size_t n, std::size_t threads);

// "" when `threads` threads can share batches of batch_size sequences, else a
// message naming `threads` (1 <= threads <= batch_size).
std::string lm_threads_error(std::size_t threads, std::size_t batch_size);

class ParallelLmRunner : public LmBatchRunner {
 public:
  // config: the master model's (its max_batch is the largest batch run() takes);
  // lm_threads_error(threads, config.max_batch) must be "" (else
  // std::invalid_argument). Builds threads - 1 replicas and starts their threads.
  ParallelLmRunner(const LmConfig& config, std::size_t threads, Path path = Path::simd);
  // Ends the threads (a step is never running when it can be called: run() waits).
  ~ParallelLmRunner() override;
  ParallelLmRunner(const ParallelLmRunner&) = delete;
  ParallelLmRunner& operator=(const ParallelLmRunner&) = delete;

  // Rows [0, n) of batch through `model` (the config given to the constructor),
  // forward and backward: model.grads() becomes d loss / d params, as after
  // model.forward(batch, n, true). n <= config.max_batch.
  LmResult run(LanguageModel& model, const LmBatch& batch, std::size_t n) override;

  std::size_t threads() const { return replicas_.size() + 1; }

 private:
  void loop(std::size_t i);
  void run_replica(std::size_t i);

  LmConfig config_;
  Path path_;
  std::vector<std::unique_ptr<LanguageModel>> replicas_;  // thread i + 1 runs replicas_[i]
  std::vector<LmResult> results_;                         // per replica, for the last step
  std::vector<std::thread> threads_;

  std::mutex mutex_;
  std::condition_variable go_, done_;
  std::uint64_t generation_ = 0;
  std::size_t pending_ = 0;
  bool stop_ = false;
  // The step being run, set under mutex_ before generation_ moves.
  const LanguageModel* master_ = nullptr;
  const std::int32_t* tokens_ = nullptr;
  const std::int32_t* targets_ = nullptr;
  std::vector<LmSlice> slices_;
};

// Makes `trainer` run its steps over `threads` threads (ParallelLmRunner);
// threads == 1 restores the single-thread code path (no runner). Returns
// lm_threads_error(threads, batch_size); on error the trainer is unchanged.
std::string set_lm_threads(LmTrainer& trainer, std::size_t threads);

}  // namespace headlab
