// Kept out of cpp/src/*.cpp (headlab_core): only the threaded targets, built with
// threads (-pthread), compile this file. See headlab/mha_parallel.hpp.
#include "headlab/mha_parallel.hpp"

#include <algorithm>
#include <system_error>

namespace headlab {

namespace {

// Columns [from, from + count) of a row-major [rows, width] matrix, as [rows, count].
std::vector<float> columns(const float* m, std::size_t rows, std::size_t width, std::size_t from,
                           std::size_t count) {
  std::vector<float> out(rows * count);
  for (std::size_t r = 0; r < rows; ++r)
    std::copy(m + r * width + from, m + r * width + from + count, out.begin() + r * count);
  return out;
}

std::vector<float> range(const float* p, std::size_t from, std::size_t count) {
  return p ? std::vector<float>(p + from, p + from + count) : std::vector<float>();
}

const float* data_or_null(const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }

// A float buffer on a 16-byte (SIMD) boundary, as mha_forward's workspace must be.
bool grow(std::vector<float>& v, std::size_t floats) {
  try {
    if (v.size() < floats + 4) v.resize(floats + 4);
  } catch (const std::bad_alloc&) {
    return false;
  }
  return true;
}

float* aligned(std::vector<float>& v) {
  auto p = reinterpret_cast<std::uintptr_t>(v.data());
  return reinterpret_cast<float*>((p + 15) & ~std::uintptr_t{15});
}

}  // namespace

std::vector<HeadRun> split_heads(std::size_t num_heads, std::size_t threads) {
  std::vector<HeadRun> runs;
  for (std::size_t i = 0, start = 0; i < threads; ++i) {
    const std::size_t n = num_heads / threads + (i < num_heads % threads ? 1 : 0);
    runs.push_back({start, start + n});
    start += n;
  }
  return runs;
}

ParallelMha::ParallelMha(const MhaShape& dims, const MhaWeights& w, std::size_t threads)
    : dims_(dims), runs_(split_heads(dims.num_heads, threads)), slices_(runs_.size()) {
  const std::size_t d = dims.d_model, hk = dims.num_heads * dims.d_k, hv = dims.num_heads * dims.d_v;
  for (std::size_t t = 0; t < runs_.size(); ++t) {
    const HeadRun r = runs_[t];
    const std::size_t n = r.end - r.begin;
    Slice& s = slices_[t];
    s.w_q = columns(w.w_q, d, hk, r.begin * dims.d_k, n * dims.d_k);
    s.w_k = columns(w.w_k, d, hk, r.begin * dims.d_k, n * dims.d_k);
    s.w_v = columns(w.w_v, d, hv, r.begin * dims.d_v, n * dims.d_v);
    s.w_o = range(w.w_o, r.begin * dims.d_v * d, n * dims.d_v * d);
    s.b_q = range(w.b_q, r.begin * dims.d_k, n * dims.d_k);
    s.b_k = range(w.b_k, r.begin * dims.d_k, n * dims.d_k);
    s.b_v = range(w.b_v, r.begin * dims.d_v, n * dims.d_v);
    if (t == 0) s.b_o = range(w.b_o, 0, d);
  }
  starts_.reserve(runs_.size());
  threads_.reserve(runs_.size());
  for (std::size_t t = 0; t < runs_.size(); ++t) {
    starts_.push_back({this, t});
    pthread_t thread;
    if (const int err = pthread_create(&thread, nullptr, &ParallelMha::thread_main, &starts_[t])) {
      request_stop();
      for (pthread_t started : threads_) pthread_join(started, nullptr);
      throw std::system_error(err, std::generic_category(), "ParallelMha: pthread_create");
    }
    threads_.push_back(thread);
  }
}

ParallelMha::~ParallelMha() {
  request_stop();
  for (; joined_ < threads_.size(); ++joined_) pthread_join(threads_[joined_], nullptr);
}

void* ParallelMha::thread_main(void* start) {
  const Start* s = static_cast<const Start*>(start);
  s->self->loop(s->t);
  return nullptr;
}

bool ParallelMha::try_join() {
  for (; joined_ < threads_.size(); ++joined_)
    if (pthread_tryjoin_np(threads_[joined_], nullptr) != 0) return false;
  return true;
}

void ParallelMha::request_stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  go_.notify_all();
}

bool ParallelMha::reserve(const MhaShape& call, bool output_only, bool wants_concat) {
  const MhaWorkspaceFor use = output_only ? MhaWorkspaceFor::output_only : MhaWorkspaceFor::any;
  for (std::size_t t = 0; t < runs_.size(); ++t) {
    MhaShape s = call;
    s.num_heads = runs_[t].end - runs_[t].begin;
    Slice& slice = slices_[t];
    if (!grow(slice.workspace, mha_workspace_floats(s, use))) return false;
    if (t > 0 && !grow(slice.partial, s.t_q * s.d_model)) return false;
    if (wants_concat && !grow(slice.concat, s.t_q * s.num_heads * s.d_v)) return false;
  }
  return true;
}

void ParallelMha::start(const MhaShape& call, const MhaInputs& in, const MhaOutputs& out) {
  call_ = call;
  in_ = in;
  out_ = out;
  remaining_.store(runs_.size(), std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++generation_;
  }
  go_.notify_all();
}

void ParallelMha::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  const std::uint32_t target = generation_;
  done_.wait(lock, [&] { return finished_.load(std::memory_order_acquire) == target; });
}

void ParallelMha::loop(std::size_t t) {
  std::uint32_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      go_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) break;
      seen = generation_;
    }
    run_slice(t);
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) finish();
  }
  if (exited_.fetch_add(1, std::memory_order_acq_rel) + 1 == runs_.size() && on_exited) on_exited(&exited_);
}

// noinline: in WebAssembly a kernel inlined into this thread's endless loop was
// measured staying in V8's unoptimised tier (3-4x slower).
__attribute__((noinline)) void ParallelMha::run_slice(std::size_t t) {
  const HeadRun r = runs_[t];
  Slice& slice = slices_[t];
  MhaShape s = call_;
  s.num_heads = r.end - r.begin;
  const std::size_t tq = s.t_q, tk = s.t_k, dk = s.d_k, dv = s.d_v;

  MhaWeights w;
  w.w_q = slice.w_q.data();
  w.w_k = slice.w_k.data();
  w.w_v = slice.w_v.data();
  w.w_o = slice.w_o.data();
  w.b_q = data_or_null(slice.b_q);
  w.b_k = data_or_null(slice.b_k);
  w.b_v = data_or_null(slice.b_v);
  w.b_o = data_or_null(slice.b_o);

  MhaInputs in = in_;
  if (in.head_mask) in.head_mask += r.begin;

  // Head-major arrays ([num_heads, ...]): this run's heads are one contiguous block.
  auto heads = [&](float* p, std::size_t per_head) { return p ? p + r.begin * per_head : nullptr; };
  const MhaIntermediates& all = out_.intermediates;
  MhaOutputs o;
  o.output = t == 0 ? out_.output : aligned(slice.partial);
  o.weights = heads(out_.weights, tq * tk);
  o.intermediates.q = heads(all.q, tq * dk);
  o.intermediates.k = heads(all.k, tk * dk);
  o.intermediates.v = heads(all.v, tk * dv);
  o.intermediates.scores = heads(all.scores, tq * tk);
  o.intermediates.scaled_scores = heads(all.scaled_scores, tq * tk);
  o.intermediates.head_outputs = heads(all.head_outputs, tq * dv);
  o.intermediates.concat = all.concat ? aligned(slice.concat) : nullptr;

  mha_forward(s, in, w, o, aligned(slice.workspace));

  // concat is [t_q, num_heads*d_v]: this run's heads are a band of columns.
  if (all.concat) {
    const std::size_t width = s.num_heads * dv, hv = dims_.num_heads * dv;
    const float* src = o.intermediates.concat;
    for (std::size_t row = 0; row < tq; ++row)
      std::copy(src + row * width, src + (row + 1) * width, all.concat + row * hv + r.begin * dv);
  }
}

void ParallelMha::finish() {
  const std::size_t n = call_.t_q * call_.d_model;
  float* out = out_.output;
  for (std::size_t t = 1; t < slices_.size(); ++t) {
    const float* p = aligned(slices_[t].partial);
    for (std::size_t i = 0; i < n; ++i) out[i] += p[i];
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_.fetch_add(1, std::memory_order_release);
  }
  done_.notify_all();
  if (on_done) on_done(&finished_);
}

}  // namespace headlab
