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

ParallelLmRunner::ParallelLmRunner(const LmConfig& config, std::size_t threads, Path path)
    : config_(config), path_(path) {
  const std::string error = lm_threads_error(threads, config.max_batch);
  if (!error.empty()) throw std::invalid_argument(error);
  LmConfig replica = config;
  replica.max_batch = (config.max_batch + threads - 1) / threads;
  for (std::size_t i = 1; i < threads; ++i) replicas_.push_back(std::make_unique<LanguageModel>(replica));
  results_.resize(replicas_.size());
  slices_.reserve(threads);
  threads_.reserve(replicas_.size());
  try {
    for (std::size_t i = 0; i < replicas_.size(); ++i) threads_.emplace_back(&ParallelLmRunner::loop, this, i);
  } catch (...) {  // end the threads already started, then report
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    go_.notify_all();
    for (std::thread& t : threads_) t.join();
    throw;
  }
}

ParallelLmRunner::~ParallelLmRunner() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  go_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ParallelLmRunner::loop(std::size_t i) {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      go_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    run_replica(i);
    std::lock_guard<std::mutex> lock(mutex_);
    if (--pending_ == 0) done_.notify_one();
  }
}

// noinline: in WebAssembly a kernel inlined into a thread's endless loop was
// measured staying in V8's unoptimised tier (3-4x slower; mha_parallel.cpp).
__attribute__((noinline)) void ParallelLmRunner::run_replica(std::size_t i) {
  const LmSlice s = slices_[i + 1];
  LanguageModel& m = *replicas_[i];
  if (s.end == s.begin) {
    results_[i] = LmResult{};
    return;
  }
  // The master's parameters are only read while a step runs (by every thread).
  std::copy(master_->params(), master_->params() + master_->num_params(), m.params());
  for (std::size_t l = 0; l < config_.num_layers; ++l)
    for (std::size_t h = 0; h < config_.num_heads; ++h) m.set_head_enabled(l, h, master_->head_enabled(l, h));
  const std::size_t off = s.begin * config_.seq_len;
  results_[i] = m.run(tokens_ + off, targets_ + off, s.end - s.begin, true, path_);
}

LmResult ParallelLmRunner::run(LanguageModel& model, const LmBatch& batch, std::size_t n) {
  if (model.num_params() != lm_layout(config_).total || n > config_.max_batch || n < 1)
    throw std::invalid_argument("ParallelLmRunner::run: model or n does not match the runner's config");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    master_ = &model;
    tokens_ = batch.tokens.data();
    targets_ = batch.targets.data();
    slices_ = split_batch(n, threads());  // allocates on the calling thread only
    pending_ = replicas_.size();
    ++generation_;
  }
  go_.notify_all();
  const LmSlice s0 = slices_[0];  // n >= 1: never empty
  const LmResult r0 = model.run(tokens_, targets_, s0.end - s0.begin, true, path_);
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
  }

  // Weight each slice by its share of the batch's target positions.
  std::size_t total = r0.predictions;
  for (const LmResult& r : results_) total += r.predictions;
  LmResult out;
  out.predictions = total;
  out.correct = r0.correct;
  const double inv = total ? 1.0 / double(total) : 0.0;
  double loss = double(r0.loss) * double(r0.predictions) * inv;
  float* g = model.grads();
  const std::size_t count = model.num_params();
  const float w0 = float(double(r0.predictions) * inv);
  for (std::size_t j = 0; j < count; ++j) g[j] *= w0;
  for (std::size_t i = 0; i < replicas_.size(); ++i) {
    const LmResult& r = results_[i];
    if (slices_[i + 1].end == slices_[i + 1].begin) continue;
    out.correct += r.correct;
    loss += double(r.loss) * double(r.predictions) * inv;
    const float w = float(double(r.predictions) * inv);
    const float* gi = replicas_[i]->grads();
    for (std::size_t j = 0; j < count; ++j) g[j] += w * gi[j];
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
