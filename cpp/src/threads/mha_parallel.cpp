// Kept out of cpp/src/*.cpp (headlab_core): only the threaded targets, built with
// threads (-pthread), compile this file. See headlab/mha_parallel.hpp.
#include "headlab/mha_parallel.hpp"

#include <algorithm>
#include <cmath>
#include <system_error>

#include "headlab/kernels.hpp"

namespace headlab {

namespace {

// Columns [from, from + count) of a row-major [rows, width] matrix, appended as [rows, count].
void append_columns(std::vector<float>& out, const float* m, std::size_t rows, std::size_t width,
                    std::size_t from, std::size_t count) {
  for (std::size_t r = 0; r < rows; ++r) out.insert(out.end(), m + r * width + from, m + r * width + from + count);
}

std::vector<float> copy_of(const float* p, std::size_t count) {
  return p ? std::vector<float>(p, p + count) : std::vector<float>();
}

const float* data_or_null(const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }

// Floats rounded up to a whole cache line (16 floats), so parts laid out one
// after another start on 64-byte boundaries (16 bytes is what the kernels need).
std::size_t line(std::size_t floats) { return (floats + 15) & ~std::size_t{15}; }

// A float buffer whose first 64-byte boundary has `floats` floats after it.
bool grow(std::vector<float>& v, std::size_t floats) {
  try {
    if (v.size() < floats + 16) v.resize(floats + 16);
  } catch (const std::bad_alloc&) {
    return false;
  }
  return true;
}

float* aligned(std::vector<float>& v) {
  auto p = reinterpret_cast<std::uintptr_t>(v.data());
  return reinterpret_cast<float*>((p + 63) & ~std::uintptr_t{63});
}

// One head's shape: what mha_forward sees for a single head.
MhaShape one_head(const MhaShape& s) {
  MhaShape h = s;
  h.num_heads = 1;
  return h;
}

AttentionArgs head_args(const MhaShape& s) {
  AttentionArgs a;
  a.t_q = s.t_q;
  a.t_k = s.t_k;
  a.d_k = s.d_k;
  a.d_v = s.d_v;
  a.causal = s.causal;
  a.scale = 1.0f / std::sqrt(static_cast<float>(s.d_k));
  return a;
}

GemmArgs gemm_dims(std::size_t m, std::size_t n, std::size_t k) {
  return {m, n, k, nullptr, 0, nullptr, 0, nullptr, 0, nullptr, false};
}

// Output-only workspace of one thread: q [t_q, d_k] | k [t_k, d_k] | v [t_k, d_v] | scratch,
// the scratch shared by the GEMM packing and the attention (never live together).
struct FusedLayout {
  std::size_t q, k, v, scratch, total;
};
FusedLayout fused_layout(const MhaShape& s) {
  FusedLayout l;
  l.q = 0;
  l.k = l.q + line(s.t_q * s.d_k);
  l.v = l.k + line(s.t_k * s.d_k);
  l.scratch = l.v + line(s.t_k * s.d_v);
  const GemmArgs qkv[3] = {gemm_dims(s.t_q, s.d_k, s.d_model), gemm_dims(s.t_q, s.d_k, s.d_model),
                           gemm_dims(s.t_q, s.d_v, s.d_model)};
  const GemmArgs out = gemm_dims(kParallelMhaRows, s.d_model, s.num_heads * s.d_v);
  const AttentionArgs a = head_args(s);
  l.total = l.scratch + std::max({gemm_shared_a_workspace_floats(qkv, 3), gemm_packed_workspace_floats(out),
                                  attention_fused_simd_workspace_floats(a), attention_fused_ref_workspace_floats(a)});
  return l;
}

}  // namespace

ParallelMhaItems parallel_mha_items(const MhaShape& call) {
  return {call.num_heads, (call.t_q + kParallelMhaRows - 1) / kParallelMhaRows};
}

ParallelMha::ParallelMha(const MhaShape& dims, const MhaWeights& w, std::size_t threads)
    : dims_(dims), threads_count_(threads), scratch_(threads) {
  const std::size_t d = dims.d_model, h = dims.num_heads, dk = dims.d_k, dv = dims.d_v;
  for (std::size_t i = 0; i < h; ++i) {
    append_columns(w_q_, w.w_q, d, h * dk, i * dk, dk);
    append_columns(w_k_, w.w_k, d, h * dk, i * dk, dk);
    append_columns(w_v_, w.w_v, d, h * dv, i * dv, dv);
  }
  b_q_ = copy_of(w.b_q, h * dk);
  b_k_ = copy_of(w.b_k, h * dk);
  b_v_ = copy_of(w.b_v, h * dv);
  w_o_ = copy_of(w.w_o, h * dv * d);
  b_o_ = copy_of(w.b_o, d);
  starts_.reserve(threads);
  threads_.reserve(threads);
  for (std::size_t t = 0; t < threads; ++t) {
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
  stop_.value.store(1);
  threads::wake_sleepers(idle_);
}

bool ParallelMha::reserve(const MhaShape& call, bool output_only, bool wants_concat) {
  (void)wants_concat;  // the concatenation is always made (shared, for phase 2)
  // Intermediates path: mha_forward on one head, then the phase-2 GEMM (its packing scratch
  // depends on k = h*d_v, more than one head's out-projection needs).
  const std::size_t floats = output_only ? fused_layout(call).total
      : std::max(mha_workspace_floats(one_head(call)),
                 gemm_packed_workspace_floats(gemm_dims(kParallelMhaRows, call.d_model, call.num_heads * call.d_v)));
  for (Scratch& s : scratch_) {
    if (!grow(s.workspace, floats)) return false;
    // Intermediates path: mha_forward's own output (one head, discarded) and its concat.
    if (!output_only && !grow(s.output, line(call.t_q * call.d_model) + call.t_q * call.d_v)) return false;
  }
  return grow(concat_, call.t_q * call.num_heads * call.d_v);
}

void ParallelMha::start(const MhaShape& call, const MhaInputs& in, const MhaOutputs& out) {
  call_ = call;
  in_ = in;
  out_ = out;
  const MhaIntermediates& im = out.intermediates;
  output_only_ = !(out.weights || im.q || im.k || im.v || im.scores || im.scaled_scores || im.head_outputs ||
                   im.concat);
  items_ = parallel_mha_items(call);
  heads_done_.value.store(0, std::memory_order_relaxed);
  items_done_.value.store(0, std::memory_order_relaxed);
  ++passes_;
  work_.begin(items_.heads + items_.row_blocks);
  threads::wake_sleepers(idle_);
}

void ParallelMha::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return finished_.load(std::memory_order_acquire) == passes_; });
}

void ParallelMha::loop(std::size_t t) {
  std::uint32_t seen = 0;
  for (;;) {
    threads::spin_then_wait(idle_, [&] {
      return stop_.value.load() != 0 || work_.generation() != seen;
    });
    if (stop_.value.load() != 0) break;
    seen = work_.generation();

    std::size_t item;
    while (work_.claim(seen, item)) {
      // Read while this item is unfinished: the pass cannot end, so start() cannot be rewriting it.
      const ParallelMhaItems items = items_;
      if (item < items.heads) {
        run_head(t, item);
        if (heads_done_.value.fetch_add(1) + 1 == items.heads) threads::wake_sleepers(idle_);
      } else {
        // Phase 2 reads every head's columns of the concatenation.
        threads::spin_then_wait(idle_, [&] { return heads_done_.value.load() == items.heads; });
        run_rows(t, item - items.heads);
      }
      if (items_done_.value.fetch_add(1) + 1 == items.heads + items.row_blocks) finish();
    }
  }
  if (exited_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_count_ && on_exited) on_exited(&exited_);
}

// noinline: in WebAssembly a kernel inlined into this thread's endless loop was
// measured staying in V8's unoptimised tier (3-4x slower).
__attribute__((noinline)) void ParallelMha::run_head(std::size_t t, std::size_t i) {
  const MhaShape& s = call_;
  const std::size_t d = s.d_model, dk = s.d_k, dv = s.d_v, tq = s.t_q, tk = s.t_k, hv = s.num_heads * dv;
  float* concat = aligned(concat_) + i * dv;  // [t_q, d_v], leading dimension hv
  const bool masked = in_.head_mask && in_.head_mask[i] == 0;
  float* ws = aligned(scratch_[t].workspace);
  const float* wq = w_q_.data() + i * d * dk;
  const float* wk = w_k_.data() + i * d * dk;
  const float* wv = w_v_.data() + i * d * dv;
  const float* bq = b_q_.empty() ? nullptr : b_q_.data() + i * dk;
  const float* bk = b_k_.empty() ? nullptr : b_k_.data() + i * dk;
  const float* bv = b_v_.empty() ? nullptr : b_v_.data() + i * dv;

  if (output_only_) {
    // A head switched off adds nothing to the output: its columns are zero, its work skipped.
    if (masked) {
      for (std::size_t r = 0; r < tq; ++r) std::fill_n(concat + r * hv, dv, 0.0f);
      return;
    }
    const FusedLayout l = fused_layout(s);
    float *q = ws + l.q, *k = ws + l.k, *v = ws + l.v, *scratch = ws + l.scratch;
    // mha_forward's projections, restricted to this head's columns (same sums, same order).
    const GemmArgs gq{tq, dk, d, in_.query, d, wq, dk, q, dk, bq, false};
    const GemmArgs gk{tk, dk, d, in_.key, d, wk, dk, k, dk, bk, false};
    const GemmArgs gv{tk, dv, d, in_.value, d, wv, dv, v, dv, bv, false};
    if (in_.query == in_.key && in_.key == in_.value && tq == tk) {
      const GemmArgs all[3] = {gq, gk, gv};
      gemm_shared_a(Path::simd, all, 3, scratch);
    } else if (in_.key == in_.value) {
      gemm_packed(Path::simd, gq, scratch);
      const GemmArgs kv[2] = {gk, gv};
      gemm_shared_a(Path::simd, kv, 2, scratch);
    } else {
      for (const GemmArgs& g : {gq, gk, gv}) gemm_packed(Path::simd, g, scratch);
    }
    AttentionArgs a = head_args(s);
    a.q = q;
    a.ldq = dk;
    a.k = k;
    a.ldk = dk;
    a.v = v;
    a.ldv = dv;
    a.o = concat;
    a.ldo = hv;
    a.key_mask = in_.key_mask;
    attention_fused(Path::simd, a, scratch);
    return;
  }

  // Intermediates asked for: mha_forward on this head alone writes them (head-major arrays:
  // this head's block), and its concatenation [t_q, d_v] before masking; its output is unused.
  const MhaShape h = one_head(s);
  MhaWeights w;
  w.w_q = wq;
  w.w_k = wk;
  w.w_v = wv;
  w.w_o = w_o_.data() + i * dv * d;
  w.b_q = bq;
  w.b_k = bk;
  w.b_v = bv;
  MhaInputs in = in_;
  in.head_mask = nullptr;
  auto at = [&](float* p, std::size_t per_head) { return p ? p + i * per_head : nullptr; };
  const MhaIntermediates& all = out_.intermediates;
  float* own = aligned(scratch_[t].output);
  float* head_concat = own + line(tq * d);
  MhaOutputs o;
  o.output = own;
  o.weights = at(out_.weights, tq * tk);
  o.intermediates.q = at(all.q, tq * dk);
  o.intermediates.k = at(all.k, tk * dk);
  o.intermediates.v = at(all.v, tk * dv);
  o.intermediates.scores = at(all.scores, tq * tk);
  o.intermediates.scaled_scores = at(all.scaled_scores, tq * tk);
  o.intermediates.head_outputs = at(all.head_outputs, tq * dv);
  o.intermediates.concat = head_concat;
  mha_forward(h, in, w, o, ws);
  for (std::size_t r = 0; r < tq; ++r) {
    const float* src = head_concat + r * dv;
    if (all.concat) std::copy(src, src + dv, all.concat + r * hv + i * dv);
    if (masked)
      std::fill_n(concat + r * hv, dv, 0.0f);
    else
      std::copy(src, src + dv, concat + r * hv);
  }
}

// Rows [64 b, 64 b + 64) of output = concat W^O + b^O.
__attribute__((noinline)) void ParallelMha::run_rows(std::size_t t, std::size_t b) {
  const MhaShape& s = call_;
  const std::size_t hv = s.num_heads * s.d_v, r0 = b * kParallelMhaRows;
  const std::size_t rows = std::min(kParallelMhaRows, s.t_q - r0);
  const GemmArgs g{rows, s.d_model, hv, aligned(concat_) + r0 * hv, hv, w_o_.data(), s.d_model,
                   out_.output + r0 * s.d_model, s.d_model, data_or_null(b_o_), false};
  gemm_packed(Path::simd, g, aligned(scratch_[t].workspace));
}

void ParallelMha::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_.fetch_add(1, std::memory_order_release);
  }
  done_.notify_all();
  if (on_done) on_done(&finished_);
}

}  // namespace headlab
