// A data-parallel training step for the language model (LmTrainer) over
// threads of one process (std::thread; in WebAssembly, Emscripten's pthreads).
// Threaded builds only (cpp/src/threads/): the core knows no threads.
//
// Each step's batch of n sequences is cut into chunks (split_batch(n, k), k =
// min(n, kLmChunksPerThread * threads) contiguous chunks whose sizes differ by
// at most 1) that the threads take one at a time from a shared counter, so a
// thread the system preempts (a busy machine) holds back one chunk, not a
// fixed share of the step. The calling thread takes chunks too, running them
// through the trainer's own model; thread i >= 1 runs its through replica i, a
// LanguageModel of the same config whose max_batch is the largest chunk.
// Before its first chunk of a step a thread copies the master's parameters
// (and head switches) into its replica (LanguageModel owns its parameters;
// reading external ones would change every view in lm.cpp, so they are
// copied: num_params floats per thread per step).
//
// The loss is a mean over the batch's target positions, so chunk c (P_c of the
// P targets) weighs P_c / P. Each chunk's gradients go to a buffer of its own
// (k buffers of num_params floats), and the master's grads become
// sum_c (P_c/P) g_c, the loss sum_c (P_c/P) loss_c, summed in chunk order:
// which thread ran which chunk changes no bit of the result, which equals the
// one-thread step up to float rounding (the order of the sums differs), not
// bit for bit. The trainer then takes its usual optimizer step, warm-up and
// divergence check on these.
//
// The threads start once and wait between steps, spinning briefly before they
// sleep (work_share.hpp), as the calling thread does for the last chunk. They
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
#include "headlab/work_share.hpp"

namespace headlab {

// Chunks per thread in a step: enough that a preempted thread's chunk is a
// small part of the step, few enough that each chunk's GEMMs keep their rows.
constexpr std::size_t kLmChunksPerThread = 3;

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
  // Runs chunks of step `generation` on `model` (worker w: 0 the caller, i the replica i - 1)
  // while there are any left.
  void run_chunks(std::uint32_t generation, std::size_t w, LanguageModel& model);

  LmConfig config_;
  Path path_;
  std::vector<std::unique_ptr<LanguageModel>> replicas_;  // thread i + 1 runs replicas_[i]
  std::vector<std::thread> threads_;
  std::vector<std::vector<float>> chunk_grads_;  // per chunk of the largest batch: its gradients
  std::vector<LmResult> chunk_results_;

  // The step being run, set before work_ moves to its generation.
  const LanguageModel* master_ = nullptr;
  const std::int32_t* tokens_ = nullptr;
  const std::int32_t* targets_ = nullptr;
  std::vector<LmSlice> chunks_;

  threads::WorkCounter work_;
  threads::Line<std::uint32_t> chunks_done_;
  threads::Line<std::uint32_t> stop_;
  threads::Sleepers idle_;  // threads waiting for a step
  threads::Sleepers caller_;  // the calling thread waiting for the last chunk
};

// Makes `trainer` run its steps over `threads` threads (ParallelLmRunner);
// threads == 1 restores the single-thread code path (no runner). Returns
// lm_threads_error(threads, batch_size); on error the trainer is unchanged.
std::string set_lm_threads(LmTrainer& trainer, std::size_t threads);

}  // namespace headlab
