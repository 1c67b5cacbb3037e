// Kept out of cpp/src/*.cpp (headlab_core): only threaded targets, built with
// threads (-pthread), compile this file. See headlab/lm_parallel.hpp.
#include "headlab/lm_parallel.hpp"

#include <algorithm>
#include <stdexcept>

namespace headlab {

std::vector<LmSlice> split_batch(std::size_t n, std::size_t threads) {
  std::vector<LmSlice> slices;
  for (std::size_t i = 0, start = 0; i < threads; ++i) {
    const std::size_t count = n / threads + (i < n % threads ? 1 : 0);
    slices.push_back({start, start + count});
    start += count;
  }
  return slices;
}

std::string lm_threads_error(std::size_t threads, std::size_t batch_size) {
  if (threads >= 1 && threads <= batch_size) return "";
  return "threads must be 1.." + std::to_string(batch_size) + " (the batch size: every thread runs at least one "
         "sequence), got " + std::to_string(threads);
}

namespace {

std::size_t chunk_count(std::size_t n, std::size_t threads) { return std::min(n, kLmChunksPerThread * threads); }

}  // namespace

ParallelLmRunner::ParallelLmRunner(const LmConfig& config, std::size_t threads, Path path)
    : config_(config), path_(path) {
  const std::string error = lm_threads_error(threads, config.max_batch);
  if (!error.empty()) throw std::invalid_argument(error);
  // The largest chunk of any batch up to max_batch: batches below the chunk count have chunks of
  // one sequence; above it, ceil(n / chunks) grows with n.
  const std::size_t chunks = chunk_count(config.max_batch, threads);
  LmConfig replica = config;
  replica.max_batch = (config.max_batch + chunks - 1) / chunks;
  for (std::size_t i = 1; i < threads; ++i) replicas_.push_back(std::make_unique<LanguageModel>(replica));
  chunk_grads_.resize(chunks);
  for (auto& g : chunk_grads_) g.resize(lm_layout(config).total);
  chunk_results_.resize(chunks);
  chunks_.reserve(chunks);
  threads_.reserve(replicas_.size());
  try {
    for (std::size_t i = 0; i < replicas_.size(); ++i) threads_.emplace_back(&ParallelLmRunner::loop, this, i);
  } catch (...) {  // end the threads already started, then report
    stop_.value.store(1);
    threads::wake_sleepers(idle_);
    for (std::thread& t : threads_) t.join();
    throw;
  }
}

ParallelLmRunner::~ParallelLmRunner() {
  stop_.value.store(1);
  threads::wake_sleepers(idle_);
  for (std::thread& t : threads_) t.join();
}

void ParallelLmRunner::loop(std::size_t i) {
  std::uint32_t seen = 0;
  for (;;) {
    threads::spin_then_wait(idle_, [&] {
      return stop_.value.load() != 0 || work_.generation() != seen;
    });
    if (stop_.value.load() != 0) return;
    seen = work_.generation();
    run_chunks(seen, i + 1, *replicas_[i]);
  }
}

// noinline: in WebAssembly a kernel inlined into a thread's endless loop was
// measured staying in V8's unoptimised tier (3-4x slower; mha_parallel.cpp).
__attribute__((noinline)) void ParallelLmRunner::run_chunks(std::uint32_t generation, std::size_t w,
                                                            LanguageModel& model) {
  bool copied = w == 0;  // the caller runs the master itself
  std::size_t c;
  while (work_.claim(generation, c)) {
    // A chunk taken means the step is running: the master's parameters are only read until it ends.
    if (!copied) {
      std::copy(master_->params(), master_->params() + master_->num_params(), model.params());
      for (std::size_t l = 0; l < config_.num_layers; ++l)
        for (std::size_t h = 0; h < config_.num_heads; ++h) model.set_head_enabled(l, h, master_->head_enabled(l, h));
      copied = true;
    }
    // Read while this chunk is unfinished: the step cannot end, so run() cannot be rewriting them.
    const LmSlice s = chunks_[c];
    const std::size_t total = chunks_.size();
    const std::size_t off = s.begin * config_.seq_len;
    chunk_results_[c] = model.run(tokens_ + off, targets_ + off, s.end - s.begin, true, path_);
    std::copy(model.grads(), model.grads() + model.num_params(), chunk_grads_[c].begin());
    if (chunks_done_.value.fetch_add(1) + 1 == total) threads::wake_sleepers(caller_);
  }
}

LmResult ParallelLmRunner::run(LanguageModel& model, const LmBatch& batch, std::size_t n) {
  if (model.num_params() != lm_layout(config_).total || n > config_.max_batch || n < 1)
    throw std::invalid_argument("ParallelLmRunner::run: model or n does not match the runner's config");
  master_ = &model;
  tokens_ = batch.tokens.data();
  targets_ = batch.targets.data();
  chunks_ = split_batch(n, chunk_count(n, threads()));  // on the calling thread, which may allocate
  chunks_done_.value.store(0, std::memory_order_relaxed);
  const std::uint32_t generation = work_.begin(chunks_.size());
  threads::wake_sleepers(idle_);
  run_chunks(generation, 0, model);
  threads::spin_then_wait(caller_, [&] { return chunks_done_.value.load() == chunks_.size(); });

  // Weight each chunk by its share of the batch's target positions, summed in chunk order.
  std::size_t total = 0;
  for (std::size_t c = 0; c < chunks_.size(); ++c) total += chunk_results_[c].predictions;
  LmResult out;
  out.predictions = total;
  const double inv = total ? 1.0 / double(total) : 0.0;
  double loss = 0;
  float* g = model.grads();
  const std::size_t count = model.num_params();
  for (std::size_t c = 0; c < chunks_.size(); ++c) {
    const LmResult& r = chunk_results_[c];
    out.correct += r.correct;
    loss += double(r.loss) * double(r.predictions) * inv;
    const float wc = float(double(r.predictions) * inv);
    const float* gc = chunk_grads_[c].data();
    if (c == 0)
      for (std::size_t j = 0; j < count; ++j) g[j] = wc * gc[j];
    else
      for (std::size_t j = 0; j < count; ++j) g[j] += wc * gc[j];
  }
  out.loss = float(loss);
  return out;
}

std::string set_lm_threads(LmTrainer& trainer, std::size_t threads) {
  const std::size_t batch = trainer.config().batch_size;
  std::string error = lm_threads_error(threads, batch);
  if (!error.empty()) return error;
  if (threads == 1)
    trainer.set_batch_runner(nullptr);
  else
    trainer.set_batch_runner(std::make_unique<ParallelLmRunner>(trainer.model().config(), threads));
  return "";
}

}  // namespace headlab
