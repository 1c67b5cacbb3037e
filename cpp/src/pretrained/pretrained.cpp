#include "headlab/pretrained.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "headlab/attention_fused.hpp"
#include "headlab/lm_kernels.hpp"
#include "headlab/pretrained_safetensors.hpp"
#include "headlab/tasks.hpp"  // Rng
#include "pretrained_arch.hpp"
#include "pretrained_causal.hpp"

namespace headlab {

namespace {

std::string shape_text(const std::vector<std::uint64_t>& s) {
  std::string t = "[";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

bool dtype_of(const std::string& s, DType* t) {
  if (s == "F32")
    *t = DType::f32;
  else if (s == "F16")
    *t = DType::f16;
  else if (s == "BF16")
    *t = DType::bf16;
  else
    return false;
  return true;
}

std::size_t align16(std::size_t n) {
  return (n + 15) & ~std::size_t{15};
}

// std::aligned_alloc(16, bytes), also for a buffer of 2 GiB or more in a 32-bit address space
// (a TinyLlama or Llama 3.2 1B file). Emscripten's dlmalloc asks sbrk for less than half the
// address space at a time (HALF_MAX_SIZE_T) and, after one larger request fails, stops
// growing its heap contiguously. So the top of the heap is first grown by a freed block of
// half the size; the buffer then takes that and asks sbrk only for the rest.
void* aligned_alloc_large(std::size_t bytes) {
  constexpr std::size_t half_space = std::size_t{1} << (sizeof(void*) * 8 - 1);
  if (bytes >= half_space / 4 * 3) {
    void* half = std::malloc(bytes / 2);
    if (!half) return nullptr;
    // A volatile write: a malloc whose block is never used may be removed by the compiler.
    *static_cast<volatile char*>(half) = 0;
    std::free(half);  // back into the top chunk it was cut from
  }
  return std::aligned_alloc(16, bytes);
}

// Sizes (floats) of the activation buffers for one run.
struct Sizes {
  std::size_t x, qkv, fc, logits, kt, gws, aws, apack;
};

}  // namespace

std::string pretrained_config_error(const PretrainedConfig& c) {
  if (c.num_layers < 1) return "numLayers must be at least 1";
  if (c.num_heads < 1) return "numHeads must be at least 1";
  if (c.d_model < 1 || (c.head_dim == 0 && c.d_model % c.num_heads != 0))
    return "dModel must be a positive multiple of numHeads";
  if (c.num_kv_heads && c.num_heads % c.num_kv_heads != 0)
    return "numKeyValueHeads must divide numHeads (" + std::to_string(c.num_heads) + ")";
  if (!(c.rotary_fraction > 0 && c.rotary_fraction <= 1)) return "rotaryFraction must be in (0, 1]";
  if (!(c.rope_theta > 0) || !std::isfinite(c.rope_theta)) return "ropeTheta must be positive";
  if (!(c.rope_factor >= 0) || !(c.rope_high_freq_factor > c.rope_low_freq_factor) ||
      !(c.rope_low_freq_factor > 0) || !(c.rope_original_context > 0))
    return "ropeScaling must have factor >= 0 and 0 < lowFreqFactor < highFreqFactor";
  if (c.mlp && c.d_ff < 1) return "dFF must be positive";
  if (c.vocab < 1) return "vocabSize must be positive";
  if (c.context < 1) return "contextLength must be positive";
  if (!(c.ln_eps > 0) || !std::isfinite(c.ln_eps)) return "layerNormEps must be positive";
  if (c.windows.size() != c.num_layers)
    return "windows must have one entry per layer (" + std::to_string(c.num_layers) + "), not " +
           std::to_string(c.windows.size());
  if (!c.dtype.empty() && c.dtype != "F32" && c.dtype != "F16" && c.dtype != "BF16")
    return "dtype must be F32, F16, BF16 or empty, not '" + c.dtype + "'";
  return "";
}

// One tensor the model expects (or accepts and ignores), by its name without the
// architecture's prefix.
struct PretrainedModel::Slot {
  Tensor* target = nullptr;          // nullptr: accepted and dropped (buffers, a tied lm_head.weight)
  std::vector<std::uint64_t> shape;  // empty for ignored buffers: any shape
  bool check_shape = true;
  bool seen = false;
  std::string file, stored_name;  // where it came from, and its name there
  std::size_t elements = 0;
};

PretrainedModel::PretrainedModel(const PretrainedConfig& config)
    : config_(config),
      block_(arch::architecture(config.architecture).block(config)),
      layers_(config.num_layers) {
  build_slots();
}

PretrainedModel::~PretrainedModel() {
  for (File& f : files_) std::free(f.data);
}

void PretrainedModel::build_slots() {
  const PretrainedConfig& c = config_;
  const BlockSpec& b = block_;
  const arch::Architecture& a = arch::architecture(c.architecture);
  const std::uint64_t q = b.heads * b.head_dim, kv = b.kv_heads * b.head_dim;
  auto dim = [&](arch::Dim x) -> std::uint64_t {
    switch (x) {
      case arch::Dim::d:
        return c.d_model;
      case arch::Dim::f:
        return c.d_ff;
      case arch::Dim::f2:
        return 2 * c.d_ff;
      case arch::Dim::v:
        return c.vocab;
      case arch::Dim::n:
        return c.context + c.position_offset;
      case arch::Dim::types:
        return c.type_vocab;
      case arch::Dim::q:
        return q;
      case arch::Dim::kv:
        return kv;
      case arch::Dim::qkv:
        return q + 2 * kv;
      case arch::Dim::none:
        break;
    }
    return 0;
  };
  auto present = [&](arch::When w) {
    switch (w) {
      case arch::When::always:
        return true;
      case arch::When::attention_bias:
        return c.attention_bias;
      case arch::When::mlp_bias:
        return c.mlp_bias;
      case arch::When::untied:
        return !c.tie_embeddings;
      case arch::When::tied:
        return c.tie_embeddings;
      case arch::When::mlp:
        return c.mlp;
    }
    return false;
  };
  for (std::size_t i = 0; i < a.count; ++i) {
    const arch::TensorEntry& e = a.tensors[i];
    if (!present(e.when)) continue;
    for (std::size_t l = 0; l < (e.per_layer ? c.num_layers : 1); ++l) {
      std::string name = e.name;
      const std::size_t at = name.find("{}");
      if (at != std::string::npos) name.replace(at, 2, std::to_string(l));
      Slot s;
      if (e.layout == arch::Layout::ignored) {
        s.check_shape = false;
        slots_[name] = s;
        continue;
      }
      const std::uint64_t rows = dim(e.rows), cols = dim(e.cols);
      s.shape = e.layout == arch::Layout::vector ? std::vector<std::uint64_t>{rows}
                                                 : std::vector<std::uint64_t>{rows, cols};
      s.elements = 1;
      for (auto x : s.shape) s.elements *= x;
      if (e.slot >= 0 && e.layout != arch::Layout::checked) {
        Tensor* t = e.per_layer ? &layers_[l].t[e.slot] : &globals_[e.slot];
        s.target = t;
        // An embedding read as the unembedding is op(B) = embed^T: [out, in] with out = vocab.
        const bool in_out = e.layout == arch::Layout::in_out, vector = e.layout == arch::Layout::vector;
        t->transposed = !in_out && !vector;
        t->in = vector ? 0 : in_out ? rows : cols;
        t->out = in_out ? cols : rows;
      }
      slots_[name] = s;
    }
  }
}

std::uint8_t* PretrainedModel::alloc_file(std::size_t bytes) {
  void* p = aligned_alloc_large(align16(std::max<std::size_t>(bytes, 1)));
  if (!p) return nullptr;
  files_.push_back({static_cast<std::uint8_t*>(p), bytes, false});
  return static_cast<std::uint8_t*>(p);
}

std::string PretrainedModel::add_safetensors(const std::string& file, std::uint8_t* buffer,
                                             std::size_t bytes) {
  auto it =
      std::find_if(files_.begin(), files_.end(), [&](const File& f) { return f.data == buffer && !f.added; });
  if (it == files_.end())
    return file + ": the bytes are not in a buffer from allocFile (or it was used already)";
  if (ready_) return file + ": the model is finished; no more files";
  if (bytes > it->bytes)
    return file + ": " + std::to_string(bytes) + " bytes claimed in a buffer of " + std::to_string(it->bytes);
  auto fail = [&](std::string message) {
    std::free(it->data);
    files_.erase(it);
    return message;
  };
  SafetensorsHeader header;
  std::string error = parse_safetensors(file, buffer, bytes, &header);
  if (!error.empty()) return fail(error);

  const arch::Architecture& a = arch::architecture(config_.architecture);
  const std::string prefix = a.prefix;
  struct Kept {
    const SafetensorsEntry* e;
    Slot* slot;
    DType dtype;
    std::size_t dest;
  };
  std::vector<Kept> kept;
  std::vector<Slot*> seen_here;
  std::vector<std::string> seen_names;
  for (const SafetensorsEntry& e : header.tensors) {
    std::string name = e.name;
    const std::string where = file + ": " + e.name + ": ";
    if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
    for (std::size_t r = 0; r < a.rename_count; ++r) {
      const std::string other = a.renames[r][0];
      if (name.size() >= other.size() && name.compare(name.size() - other.size(), other.size(), other) == 0)
        name = name.substr(0, name.size() - other.size()) + a.renames[r][1];
    }
    auto s = slots_.find(name);
    if (s == slots_.end())
      return fail(where + "not a tensor of " + a.name + " with " + std::to_string(config_.num_layers) +
                  " layers");
    Slot& slot = s->second;
    if (slot.seen || std::find(seen_here.begin(), seen_here.end(), &slot) != seen_here.end())
      return fail(where + "appears twice (with and without the " + prefix + " prefix, or in two files)");
    seen_here.push_back(&slot);
    seen_names.push_back(e.name);
    if (!slot.check_shape) continue;  // a causal-mask buffer: dropped
    DType t;
    if (!dtype_of(e.dtype, &t))
      return fail(where + "dtype " + e.dtype + " is not supported (F32, F16, BF16)");
    if (!config_.dtype.empty() && e.dtype != config_.dtype)
      return fail(where + "dtype " + e.dtype + " disagrees with config.json's torch_dtype (" + config_.dtype +
                  ")");
    if (e.shape != slot.shape)
      return fail(where + "shape " + shape_text(e.shape) + " disagrees with config.json, which makes it " +
                  shape_text(slot.shape) + " (dModel " + std::to_string(config_.d_model) + ", dFF " +
                  std::to_string(config_.d_ff) + ", vocabSize " + std::to_string(config_.vocab) +
                  ", contextLength " + std::to_string(config_.context) + ")");
    if (!slot.target) continue;  // a tied lm_head.weight
    kept.push_back({&e, &slot, t, 0});
  }

  // Compact: kept tensors move to the front of the buffer, 16-byte aligned, in
  // file order; the header, buffers and lm_head go. A tensor never moves up
  // past bytes not yet moved (the header is longer than the padding), else the
  // tensors are copied into a new buffer.
  std::sort(kept.begin(), kept.end(), [](const Kept& a, const Kept& b) { return a.e->begin < b.e->begin; });
  std::size_t total = 0;
  bool in_place = true;
  for (Kept& k : kept) {
    k.dest = align16(total);
    total = k.dest + (k.e->end - k.e->begin);
    if (k.dest > header.data_start + k.e->begin) in_place = false;
  }
  std::uint8_t* base = buffer;
  if (in_place) {
    for (const Kept& k : kept)
      std::memmove(base + k.dest, buffer + header.data_start + k.e->begin, k.e->end - k.e->begin);
    if (total < bytes) {
      void* shrunk = std::realloc(base, std::max<std::size_t>(total, 1));
      if (shrunk) base = static_cast<std::uint8_t*>(shrunk);
    }
  } else {
    auto* fresh =
        static_cast<std::uint8_t*>(aligned_alloc_large(align16(std::max<std::size_t>(total, 1))));
    if (!fresh) return fail(file + ": out of memory compacting " + std::to_string(total) + " bytes");
    for (const Kept& k : kept)
      std::memcpy(fresh + k.dest, buffer + header.data_start + k.e->begin, k.e->end - k.e->begin);
    std::free(buffer);
    base = fresh;
  }
  it->data = base;
  it->bytes = total;
  it->added = true;
  for (Slot* s : seen_here) {
    s->seen = true;
    s->file = file;
  }
  for (std::size_t i = 0; i < seen_here.size(); ++i) seen_here[i]->stored_name = seen_names[i];
  for (const Kept& k : kept) {
    k.slot->target->data = base + k.dest;
    k.slot->target->dtype = k.dtype;
    k.slot->target->present = true;
  }
  return "";
}

std::string PretrainedModel::finish() {
  if (ready_) return "";
  std::vector<std::string> missing;
  for (const auto& [name, s] : slots_)
    if (s.target && !s.seen) missing.push_back(name);
  if (!missing.empty()) {
    std::string list;
    for (std::size_t i = 0; i < missing.size() && i < 4; ++i) list += (i ? ", " : "") + missing[i];
    if (missing.size() > 4) list += " and " + std::to_string(missing.size() - 4) + " more";
    return "missing tensor" + std::string(missing.size() > 1 ? "s " : " ") + list +
           " (looked for with and without the " +
           std::string(arch::architecture(config_.architecture).prefix) + " prefix)";
  }
  for (const auto& [name, s] : slots_) {
    if (!s.target) continue;
    const std::size_t i = first_nonfinite(s.target->data, s.target->dtype, s.elements);
    if (i < s.elements) {
      const float v = load_element(s.target->data, s.target->dtype, i);
      return s.file + ": " + s.stored_name + ": element " + std::to_string(i) + " is " +
             (std::isnan(v) ? "NaN" : "infinite") + " (the checkpoint is damaged)";
    }
  }
  // Buffers allocated but never added go now.
  for (std::size_t i = files_.size(); i-- > 0;)
    if (!files_[i].added) {
      std::free(files_[i].data);
      files_.erase(files_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  // float32 matrices into the packed GEMM's panels, in place: op(B) is [in, out] for the
  // products and embed^T for a tied unembedding (an untied embedding stays by rows).
  {
    std::vector<Tensor*> matrices;
    if (!globals_[unembed].present) matrices.push_back(&globals_[embed]);
    matrices.push_back(&globals_[unembed]);
    matrices.push_back(&globals_[head_w]);
    for (Layer& y : layers_)
      for (Tensor& t : y.t)
        if (t.present && t.in) matrices.push_back(&t);
    std::size_t bytes = 0;
    for (const Tensor* m : matrices)
      if (m->present && m->dtype == DType::f32)
        bytes = std::max(bytes, pack_b_panels_in_place_scratch_bytes(m->transposed, m->in, m->out));
    std::vector<float> scratch((bytes + 3) / 4);
    for (Tensor* m : matrices)
      if (m->present && m->dtype == DType::f32 && !m->packed) {
        // The tensor lies in a file buffer this model owns.
        pack_b_panels_in_place(static_cast<float*>(const_cast<void*>(m->data)), m->transposed, m->in, m->out,
                               scratch.data());
        m->packed = true;
      }
  }
  // Widen every vector into one float block.
  std::vector<Tensor*> vecs;
  for (Global g : {final_w, final_b, embed_norm_w, embed_norm_b, head_b, unembed_b})
    vecs.push_back(&globals_[g]);
  for (Layer& y : layers_)
    for (Tensor& t : y.t)
      if (!t.in) vecs.push_back(&t);
  std::size_t total = 0;
  for (const Tensor* v : vecs)
    if (v->present) total += align16(v->out * 4) / 4;
  vectors_.assign(total, 0.0f);
  std::size_t o = 0;
  for (Tensor* v : vecs) {
    if (!v->present) continue;
    widen_ref(v->data, v->dtype, vectors_.data() + o, v->out);
    v->values = vectors_.data() + o;
    o += align16(v->out * 4) / 4;
  }
  ready_ = true;
  return "";
}

std::size_t PretrainedModel::parameters() const {
  std::size_t n = 0;
  for (const auto& [name, s] : slots_)
    if (s.target) n += s.elements;
  return n;
}

std::size_t PretrainedModel::weight_bytes() const {
  std::size_t n = vectors_.size() * sizeof(float);
  for (const File& f : files_) n += f.bytes;
  return n;
}

std::string PretrainedModel::dtype() const {
  bool seen[3] = {false, false, false};
  for (const auto& [name, s] : slots_)
    if (s.target && s.target->present) seen[int(s.target->dtype)] = true;
  const int kinds = int(seen[0]) + int(seen[1]) + int(seen[2]);
  if (kinds != 1) return kinds ? "mixed" : "";
  return seen[0] ? "float32" : seen[1] ? "float16" : "bfloat16";
}

namespace {

// Rows of the logit lens's unembedding at a time.
constexpr std::size_t kLensRows = 32;

// kt, gws, aws: one worker's part.
Sizes sizes_for(const PretrainedConfig& c, const BlockSpec& b, std::size_t t, bool attention, bool all_logits,
                bool lens) {
  const std::size_t d = c.d_model, dk = b.head_dim, q = b.heads * dk;
  const bool gated = b.mlp == BlockSpec::Mlp::swiglu || b.mlp == BlockSpec::Mlp::geglu;
  Sizes s{};
  s.x = t * std::max(d, q);
  s.qkv = t * (q + 2 * b.kv_heads * dk);
  s.fc = t * c.d_ff * (gated ? 2 : 1);
  // The logits themselves are written straight into the result ([T, V] or [V]).
  s.logits = lens ? std::min(t, kLensRows) * c.vocab : 0;
  (void)all_logits;
  s.kt = attention ? dk * t : 0;
  // The largest workspace any product needs: 16-bit weights cost the most, [in, out] ones (a
  // widened panel of k rows) more than [out, in] ones once k passes a packed panel's rows.
  for (std::size_t k : {d, c.d_ff, q})
    for (bool transposed : {false, true}) {
      const WideGemmArgs probe{t, 1,          k,       nullptr, k,       nullptr, DType::f16,
                               k, transposed, nullptr, 1,       nullptr, false};
      s.gws = std::max(s.gws, gemm_wide_workspace_floats(probe));
    }
  AttentionArgs a;
  a.t_q = a.t_k = t;
  a.d_k = a.d_v = dk;
  s.aws = std::max(attention_fused_simd_workspace_floats(a), attention_fused_ref_workspace_floats(a));
  s.apack = gemm_packed_a_floats(t, std::max({d, c.d_ff, q}));  // used with more than one worker
  return s;
}

}  // namespace

std::size_t PretrainedModel::qkv_width() const {
  return (block_.heads + 2 * block_.kv_heads) * block_.head_dim;
}

std::size_t PretrainedModel::kv_width() const {
  return 2 * block_.kv_heads * block_.head_dim;
}

std::size_t PretrainedModel::fc_width() const {
  const bool gated = block_.mlp == BlockSpec::Mlp::swiglu || block_.mlp == BlockSpec::Mlp::geglu;
  return config_.d_ff * (gated ? 2 : 1);
}

const PretrainedModel::Tensor& PretrainedModel::unembedding() const {
  return globals_[unembed].present ? globals_[unembed] : globals_[embed];
}

std::size_t PretrainedModel::activation_bytes(std::size_t t, bool attention, bool all_logits,
                                              bool lens) const {
  const Sizes s = sizes_for(config_, block_, t, attention, all_logits, lens);
  const std::size_t out = (attention ? config_.num_layers * config_.num_heads * t * t : 0) +
                          (block_.hidden_output ? t * config_.d_model : (all_logits ? t : 1) * config_.vocab);
  const std::size_t rope = block_.positions == BlockSpec::Positions::rotary ? t * block_.rope.rot_dim : 0;
  return 4 * ((block_.parallel_residual ? 5 : 4) * s.x + 2 * t + s.qkv + s.fc + s.logits + rope +
              threads() * (s.kt + s.gws + s.aws) + (threads() > 1 ? s.apack : 0) + out);
}

std::size_t PretrainedModel::memory_bytes() const {
  const std::size_t floats = x_.capacity() + ln_.capacity() + stats_.capacity() + qkv_.capacity() +
                             heads_.capacity() + tmp_.capacity() + tmp2_.capacity() + fc_.capacity() +
                             logits_.capacity() + scores_.capacity() + kt_.capacity() + gws_.capacity() +
                             aws_.capacity() + apack_.capacity() + kv_.capacity() + rope_cos_.capacity() +
                             rope_sin_.capacity();
  return weight_bytes() + floats * sizeof(float);
}

void PretrainedModel::reserve(std::size_t t, bool attention, bool all_logits, bool lens) {
  const Sizes s = sizes_for(config_, block_, t, attention, all_logits, lens);
  auto grow = [](std::vector<float>& v, std::size_t n) {
    if (v.size() < n) v.resize(n);
  };
  grow(x_, s.x);
  grow(ln_, s.x);
  grow(heads_, s.x);
  grow(tmp_, s.x);
  if (block_.parallel_residual) grow(tmp2_, s.x);
  grow(stats_, 2 * t);
  grow(qkv_, s.qkv);
  grow(fc_, s.fc);
  grow(logits_, s.logits);
  if (block_.positions == BlockSpec::Positions::rotary) {
    grow(rope_cos_, t * block_.rope.rot_dim / 2);
    grow(rope_sin_, t * block_.rope.rot_dim / 2);
  }
  // One part per worker: grown parts are laid out afresh (nothing in them is kept between calls).
  const std::size_t workers = threads();
  kt_part_ = std::max(kt_part_, s.kt);
  gws_part_ = std::max(gws_part_, s.gws);
  aws_part_ = std::max(aws_part_, s.aws);
  grow(kt_, workers * kt_part_);
  grow(gws_, workers * gws_part_);
  grow(aws_, workers * aws_part_);
  if (workers > 1) grow(apack_, s.apack);
}

void PretrainedModel::set_pool(std::unique_ptr<PretrainedPool> pool) {
  pool_ = std::move(pool);
  // Parts are laid out for the new number of workers at the next call.
  kt_part_ = gws_part_ = aws_part_ = 0;
  std::vector<float>().swap(kt_);
  std::vector<float>().swap(gws_);
  std::vector<float>().swap(aws_);
  std::vector<float>().swap(apack_);
}

void PretrainedModel::parallel(std::size_t chunks, const PretrainedPool::Task& task) {
  if (!pool_) {
    for (std::size_t i = 0; i < chunks; ++i) task(i, 0);
    return;
  }
  // Chunks are claimed as workers get to them, so a thread the system holds back (a busy
  // machine, a browser's main thread) delays a step by one chunk, not by a fixed share.
  pool_->run(chunks, task);
}

// g split by columns into chunks (one chunk on one thread; about 4 per worker of whole
// kWidePanel-column panels, each packing A for itself, or with packed weights about 8 per worker
// of whole packed panels after A is packed once); act applied to each chunk's columns row by
// row. Chunks start at multiples of the packed panel's width (16 columns in WebAssembly), so each column's
// arithmetic and the activation's SIMD groups are the same whatever the split.
void PretrainedModel::product(Path path, const WideGemmArgs& g, Act act) {
  run_products(path, &g, 1, act, Gate::none);
}

// The products one after the other in one parallel step: product i's chunks (split as
// product() splits it alone) numbered after those of products 0..i-1. A is packed once for
// all of them (they share it) when any shares it.
void PretrainedModel::products(Path path, const WideGemmArgs* g, std::size_t count) {
  run_products(path, g, count, Act::none, Gate::none);
}

// With a gate: g[0] the gate, g[1] up (same n, same splits), each chunk the same columns of both,
// then out = gate(g[0]) * g[1] on them, row by row, written over g[0]'s columns.
void PretrainedModel::run_products(Path path, const WideGemmArgs* g, std::size_t count, Act act, Gate gate) {
  const std::size_t workers = threads();
  constexpr std::size_t kMaxProducts = 3;
  std::size_t cols[kMaxProducts], first[kMaxProducts + 1] = {0};
  bool share[kMaxProducts], packed_a = false;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t panels = (g[i].n + kWidePanel - 1) / kWidePanel;
    share[i] = workers > 1 && g[i].b_packed && path == Path::simd;
    if (share[i] && !packed_a) {
      gemm_pack_a({g[i].m, 0, g[i].k, g[i].a, g[i].lda, nullptr, 0, nullptr, 0, nullptr, false},
                  apack_.data());
      packed_a = true;
    }
    // Shared A: chunks of whole packed panels (gemm_packed_panel_cols() columns), about 8 per worker:
    // a product of few panels (576 columns are 9 of kWidePanel) split 9 : 9 over 2 workers, not 5 : 4.
    const std::size_t nr = gemm_packed_panel_cols(), narrow = (g[i].n + nr - 1) / nr;
    cols[i] = workers == 1 ? std::max<std::size_t>(panels, 1) * kWidePanel
              : share[i]   ? nr * std::max<std::size_t>(1, narrow / (8 * workers))
                         : kWidePanel * std::max<std::size_t>(1, (panels + 4 * workers - 1) / (4 * workers));
    first[i + 1] = first[i] + (g[i].n + cols[i] - 1) / cols[i];
  }
  if (gate != Gate::none) cols[1] = cols[0];  // g[1] in g[0]'s chunks
  // Columns [begin, end) of product i.
  auto part = [&](std::size_t i, std::size_t begin, std::size_t end, std::size_t w) {
    const WideGemmArgs& gi = g[i];
    const std::size_t es = dtype_bytes(gi.b_dtype);
    WideGemmArgs p = gi;
    p.n = end - begin;
    // A packed B's columns from `begin` (a multiple of its panel width) are the packed B at begin * k.
    p.b = static_cast<const std::uint8_t*>(gi.b) + (gi.b_packed       ? begin * gi.k
                                                    : gi.b_transposed ? begin * gi.ldb
                                                                      : begin) *
                                                       es;
    p.c = gi.c + begin;
    p.bias = gi.bias ? gi.bias + begin : nullptr;
    p.a_packed = share[i] ? apack_.data() : nullptr;
    gemm_wide(path, p, gws_.data() + w * gws_part_);
    for (std::size_t r = 0; act != Act::none && r < gi.m; ++r) {
      float* row = p.c + r * gi.ldc;
      act == Act::gelu_tanh ? gelu_forward(path, row, row, p.n) : gelu_erf_forward(path, row, row, p.n);
    }
  };
  parallel(gate == Gate::none ? first[count] : first[1], [&](std::size_t chunk, std::size_t w) {
    std::size_t i = 0;
    while (chunk >= first[i + 1]) ++i;
    const std::size_t begin = (chunk - first[i]) * cols[i], end = std::min(g[i].n, begin + cols[i]);
    part(i, begin, end, w);
    if (gate == Gate::none) return;
    part(1, begin, end, w);
    for (std::size_t r = 0; r < g[0].m; ++r) {
      float *x = g[0].c + r * g[0].ldc + begin, *u = g[1].c + r * g[1].ldc + begin;
      gate == Gate::swiglu ? swiglu(path, x, u, x, end - begin) : geglu(path, x, u, x, end - begin);
    }
  });
}

void PretrainedModel::linear(Path path, const float* a, std::size_t lda, std::size_t rows, const Tensor& w,
                             const Tensor& bias, float* c, std::size_t ldc, Act act) {
  const WideGemmArgs g{
      rows,         w.out, w.in, a,           lda,   w.data,  w.dtype, w.transposed ? w.in : w.out,
      w.transposed, c,     ldc,  bias.values, false, w.packed};
  product(path, g, act);
}

void PretrainedModel::linears(Path path, const float* a, std::size_t lda, std::size_t rows, std::size_t count,
                              const Tensor* const* w, const Tensor* const* bias, float* const* c,
                              std::size_t ldc, Gate gate) {
  WideGemmArgs g[3];
  for (std::size_t i = 0; i < count; ++i)
    g[i] = {rows,
            w[i]->out,
            w[i]->in,
            a,
            lda,
            w[i]->data,
            w[i]->dtype,
            w[i]->transposed ? w[i]->in : w[i]->out,
            w[i]->transposed,
            c[i],
            ldc,
            bias[i]->values,
            false,
            w[i]->packed};
  run_products(path, g, count, Act::none, gate);
}

void PretrainedModel::norm(Path path, const Tensor& w, const Tensor& b, const float* x, float* y,
                           std::size_t rows) {
  const std::size_t d = config_.d_model;
  switch (block_.norm) {
    case BlockSpec::Norm::layer:
      layernorm_forward(path,
                        {rows, d, x, w.values, b.values, y, stats_.data(), stats_.data() + rows, block_.eps});
      break;
    case BlockSpec::Norm::rms:
    case BlockSpec::Norm::rms_one_plus:
      rmsnorm_forward(path,
                      {rows, d, x, w.values, y, block_.eps, block_.norm == BlockSpec::Norm::rms_one_plus});
      break;
  }
}

// out[rows, d] = MLP(a[rows, d]).
void PretrainedModel::mlp(Path path, const Layer& y, const float* a, std::size_t rows, float* out) {
  const std::size_t f = config_.d_ff, d = config_.d_model;
  float* fc = fc_.data();
  switch (block_.mlp) {
    case BlockSpec::Mlp::gelu_tanh:
    case BlockSpec::Mlp::gelu_erf:
      linear(path, a, d, rows, y.t[up_w], y.t[up_b], fc, f,
             block_.mlp == BlockSpec::Mlp::gelu_tanh ? Act::gelu_tanh : Act::gelu_erf);
      linear(path, fc, f, rows, y.t[down_w], y.t[down_b], out, d);
      return;
    case BlockSpec::Mlp::swiglu:
    case BlockSpec::Mlp::geglu:
      // Rows [gate | up] of 2f; the gated product written over the gate half.
      if (block_.fused_gate_up) {
        linear(path, a, d, rows, y.t[gate_up_w], y.t[gate_b], fc, 2 * f);
      } else {
        // Gate, up and the gated product of the same rows: one parallel step, each chunk the
        // same columns of gate and up, gated where they lie.
        const Tensor* w[] = {&y.t[gate_w], &y.t[up_w]};
        const Tensor* bias[] = {&y.t[gate_b], &y.t[up_b]};
        float* c[] = {fc, fc + f};
        linears(path, a, d, rows, 2, w, bias, c, 2 * f,
                block_.mlp == BlockSpec::Mlp::swiglu ? Gate::swiglu : Gate::geglu);
      }
      if (block_.fused_gate_up)
        for (std::size_t i = 0; i < rows; ++i) {
          float* r = fc + i * 2 * f;
          block_.mlp == BlockSpec::Mlp::swiglu ? swiglu(path, r, r + f, r, f) : geglu(path, r, r + f, r, f);
        }
      linear(path, fc, 2 * f, rows, y.t[down_w], y.t[down_b], out, d);
      return;
    case BlockSpec::Mlp::none:
      std::fill(out, out + rows * d, 0.0f);
      return;
  }
}

// Heads split over the workers, each with its own workspace.
void PretrainedModel::attend(Path path, std::size_t l, std::size_t t0, std::size_t t, const float* qkv,
                             const float* cache, const std::uint8_t* ablate, float* attention_out,
                             float* heads_out) {
  parallel(config_.num_heads, [&](std::size_t h, std::size_t worker) {
    attend_head(path, l, h, t0, t, qkv, cache, ablate, attention_out, heads_out, worker);
  });
}

void PretrainedModel::attend_head(Path path, std::size_t l, std::size_t h, std::size_t t0, std::size_t t,
                                  const float* qkv, const float* cache, const std::uint8_t* ablate,
                                  float* attention_out, float* heads_out, std::size_t worker) {
  const BlockSpec& b = block_;
  const std::size_t nh = b.heads, dk = b.head_dim, ld = qkv_width(), ldo = nh * dk, w = b.windows[l];
  const std::size_t j = h / (nh / b.kv_heads);  // the key-value head this query head reads
  const float scale = b.score_scale;
  float* aws = aws_.data() + worker * aws_part_;
  float* kt = kt_.data() + worker * kt_part_;
  const float *q = qkv + b.q_base + h * b.q_stride, *k = qkv + b.k_base + j * b.kv_stride,
              *v = qkv + b.v_base + j * b.kv_stride;
  float* o = heads_out + h * dk;
  const bool off = ablate && ablate[l * nh + h];
  AttentionArgs a;
  a.d_k = a.d_v = dk;
  a.ldq = a.ldk = a.ldv = ld;
  a.ldo = ldo;
  a.scale = scale;
  if (t0 > 0) {
    // Rows t0..t-1 after earlier keys (generation, causal): each query alone over the
    // keys it sees, 0..i or, in a local layer, its last w; from the cache when there is one.
    const std::size_t kvw = kv_width();
    const float *ck = cache ? cache + j * dk : nullptr, *cv = cache ? cache + (b.kv_heads + j) * dk : nullptr;
    if (!off)
      for (std::size_t i = t0; i < t; ++i) {
        const std::size_t lo = (w && i + 1 > w) ? i + 1 - w : 0;
        a.t_q = 1;
        a.t_k = i + 1 - lo;
        a.o = o + (i - t0) * ldo;
        if (cache) {
          a.q = q + (i - t0) * ld, a.k = ck + lo * kvw, a.v = cv + lo * kvw;
          a.ldk = a.ldv = kvw;
        } else {
          a.q = q + i * ld, a.k = k + lo * ld, a.v = v + lo * ld;
        }
        attention_fused(path, a, aws);
      }
  } else {
    // The output always comes from the fused kernel, so the logits are the same numbers whether
    // or not the attention is also returned; asked for, the scores are materialised beside it:
    // S = softmax(mask(Q K^T * s)).
    if (attention_out) {
      float* s = attention_out + h * t * t;
      transpose(t, dk, k, ld, kt, t);
      gemm(path, {t, t, dk, q, ld, kt, t, s, t, nullptr, false});
      const float neg = -std::numeric_limits<float>::infinity();
      for (std::size_t i = 0; i < t; ++i)
        for (std::size_t jj = 0; jj < t; ++jj) {
          float& x = s[i * t + jj];
          x = ((b.causal && jj > i) || (w && jj + w <= i)) ? neg : x * scale;
        }
      softmax_rows(path, s, t, t, t);
    }
    // The fused kernel knows causal masks, not windows: a local layer runs the
    // first w queries as one causal block, then each later query alone over its w keys.
    if (!off) {
      a.causal = b.causal;
      a.t_q = a.t_k = (w && t > w) ? w : t;
      a.q = q, a.k = k, a.v = v, a.o = o;
      attention_fused(path, a, aws);
      if (w && t > w) {
        a.causal = false;
        a.t_q = 1;
        a.t_k = w;
        for (std::size_t i = w; i < t; ++i) {
          a.q = q + i * ld;
          a.k = k + (i + 1 - w) * ld;
          a.v = v + (i + 1 - w) * ld;
          a.o = o + i * ldo;
          attention_fused(path, a, aws);
        }
      }
    }
  }
  if (off)
    for (std::size_t i = 0; i < t - t0; ++i) std::fill(o + i * ldo, o + i * ldo + dk, 0.0f);
}

namespace {

// The k most probable entries of softmax(row[0..v)), most probable first.
void top_k(const float* row, std::size_t v, std::size_t k, std::int32_t* ids, float* probs) {
  float m = -std::numeric_limits<float>::infinity();
  for (std::size_t j = 0; j < v; ++j) m = std::max(m, row[j]);
  double sum = 0;
  for (std::size_t j = 0; j < v; ++j) sum += std::exp(double(row[j]) - m);
  std::size_t n = 0;
  for (std::size_t j = 0; j < v; ++j) {
    if (n == k && row[j] <= row[ids[k - 1]]) continue;
    std::size_t p = n < k ? n++ : k - 1;
    while (p > 0 && row[ids[p - 1]] < row[j]) {
      ids[p] = ids[p - 1];
      --p;
    }
    ids[p] = std::int32_t(j);
  }
  for (std::size_t i = 0; i < n; ++i) probs[i] = float(std::exp(double(row[ids[i]]) - m) / sum);
}

}  // namespace

void PretrainedModel::lens_layer(Path path, std::size_t l, std::size_t t, std::size_t k,
                                 PretrainedRunResult* r) {
  const PretrainedConfig& c = config_;
  const std::size_t d = c.d_model, v = c.vocab, chunk = std::min(t, kLensRows);
  for (std::size_t r0 = 0; r0 < t; r0 += chunk) {
    const std::size_t rows = std::min(chunk, t - r0);
    head(path, x_.data() + r0 * d, rows, ln_.data());
    linear(path, ln_.data(), d, rows, unembedding(), globals_[unembed_b], logits_.data(), v);
    parallel(rows, [&](std::size_t i, std::size_t) {
      const std::size_t at = (l * t + r0 + i) * k;
      top_k(logits_.data() + i * v, v, k, r->lens_ids.data() + at, r->lens_probs.data() + at);
    });
  }
}

void PretrainedModel::head(Path path, const float* x, std::size_t rows, float* out) {
  if (block_.mlm_head) {
    linear(path, x, config_.d_model, rows, globals_[head_w], globals_[head_b], out, config_.d_model,
           Act::gelu_erf);
    x = out;
  }
  norm(path, globals_[final_w], globals_[final_b], x, out, rows);
}

std::string PretrainedModel::check(const std::int32_t* tokens, std::size_t t) const {
  const PretrainedConfig& c = config_;
  if (!ready_) return "the model has no weights yet (finish() not called or failed)";
  if (t < 1 || t > c.context)
    return "length " + std::to_string(t) + " is outside 1.." + std::to_string(c.context) + " (the context)";
  for (std::size_t i = 0; i < t; ++i)
    if (tokens[i] < 0 || std::size_t(tokens[i]) >= c.vocab)
      return "token " + std::to_string(tokens[i]) + " at position " + std::to_string(i) + " is outside 0.." +
             std::to_string(c.vocab - 1);
  return "";
}

std::string PretrainedModel::check_types(const std::int32_t* token_types, std::size_t t) const {
  if (!token_types) return "";
  const std::size_t types = globals_[type_embed].present ? config_.type_vocab : 1;
  for (std::size_t i = 0; i < t; ++i)
    if (token_types[i] < 0 || std::size_t(token_types[i]) >= types)
      return "token type " + std::to_string(token_types[i]) + " at position " + std::to_string(i) +
             " is outside 0.." + std::to_string(types - 1) +
             (globals_[type_embed].present ? "" : " (the model has no token type embeddings)");
  return "";
}

std::string PretrainedModel::run(const std::int32_t* tokens, std::size_t t,
                                 const PretrainedRunOptions& options, PretrainedRunResult* result,
                                 Path path) {
  std::string error = check(tokens, t);
  if (error.empty()) error = check_types(options.token_types, t);
  if (!error.empty()) return error;
  if (options.lens && block_.hidden_output)
    return "the logit lens reads each layer through the unembedding, and this model has no head (" +
           std::string(arch::architecture(config_.architecture).name) + "): it gives the last hidden state";
  if (options.patch_heads) return run_patched(tokens, t, options, result, path);
  forward(tokens, 0, t, options, result, path, false);
  return "";
}

void PretrainedModel::layer_qkv(Path path, std::size_t l, float* x, std::size_t seqs, std::size_t n,
                                float* qkv) {
  const BlockSpec& b = block_;
  const Layer& y = layers_[l];
  const std::size_t d = config_.d_model, qw = qkv_width(), rows = seqs * n;
  const float* a = x;
  if (!b.post_norm) {
    norm(path, y.t[norm1_w], y.t[norm1_b], x, ln_.data(), rows);
    a = ln_.data();
  }
  if (b.fused_qkv) {
    linear(path, a, d, rows, y.t[qkv_w], y.t[qkv_b], qkv, qw);
  } else {
    // Q, K and V of the same rows: one parallel step.
    const Tensor* w[] = {&y.t[q_w], &y.t[k_w], &y.t[v_w]};
    const Tensor* bias[] = {&y.t[q_b], &y.t[k_b], &y.t[v_b]};
    float* c[] = {qkv + b.q_base, qkv + b.k_base, qkv + b.v_base};
    linears(path, a, d, rows, 3, w, bias, c, qw);
  }
  if (b.positions != BlockSpec::Positions::rotary) return;
  const std::size_t dk = b.head_dim;
  for (std::size_t s = 0; s < seqs; ++s) {
    float* rows_qkv = qkv + s * n * qw;
    for (std::size_t h = 0; h < b.heads; ++h)
      rotary_apply(path, {n, 1, dk, b.rope.rot_dim, rows_qkv + b.q_base + h * b.q_stride, qw, rope_cos_.data(),
                          rope_sin_.data()});
    for (std::size_t h = 0; h < b.kv_heads; ++h)
      rotary_apply(path, {n, 1, dk, b.rope.rot_dim, rows_qkv + b.k_base + h * b.kv_stride, qw, rope_cos_.data(),
                          rope_sin_.data()});
  }
}

void PretrainedModel::layer_rest(Path path, std::size_t l, float* x, const float* heads, std::size_t rows,
                                 Trace* trace) {
  const BlockSpec& b = block_;
  const Layer& y = layers_[l];
  const std::size_t d = config_.d_model;
  float *ln = ln_.data(), *att = tmp_.data(), *mlp_out = b.parallel_residual ? tmp2_.data() : att;
  linear(path, heads, b.heads * b.head_dim, rows, y.t[o_w], y.t[o_b], att, d);
  if (b.parallel_residual) {
    // X' = X + Att + MLP(norm2(X))
    norm(path, y.t[norm2_w], y.t[norm2_b], x, ln, rows);
    mlp(path, y, ln, rows, mlp_out);
    add(path, x, att, x, rows * d);
    add(path, x, mlp_out, x, rows * d);
  } else if (b.post_norm) {
    add(path, x, att, x, rows * d);
    norm(path, y.t[norm1_w], y.t[norm1_b], x, x, rows);
    mlp(path, y, x, rows, mlp_out);
    add(path, x, mlp_out, x, rows * d);
    norm(path, y.t[norm2_w], y.t[norm2_b], x, x, rows);
  } else if (b.mlp == BlockSpec::Mlp::none) {
    // X' = X + Att: no second norm, nothing added after it.
    add(path, x, att, x, rows * d);
    mlp(path, y, nullptr, rows, mlp_out);
  } else {
    add(path, x, att, x, rows * d);
    norm(path, y.t[norm2_w], y.t[norm2_b], x, ln, rows);
    mlp(path, y, ln, rows, mlp_out);
    add(path, x, mlp_out, x, rows * d);
  }
  if (trace && !trace->mlp.empty())
    std::copy(mlp_out + trace->at * d, mlp_out + (trace->at + 1) * d, trace->mlp.data() + l * d);
}

// Rows t0..t-1 of tokens[0..t) (checked). cache: the keys (rotated) and values of rows
// t0..t-1 of every layer stored in kv_ at their positions, and those of rows before t0 read
// from there (t0 > 0 only with cache; options other than ablate only with t0 = 0). trace (t0 = 0):
// what the causal tools keep, sized by the caller; patch_z [L, t, H * d_k]: the outputs of
// the heads options.patch_heads marks.
void PretrainedModel::forward(const std::int32_t* tokens, std::size_t t0, std::size_t t,
                              const PretrainedRunOptions& options, PretrainedRunResult* result, Path path,
                              bool cache, Trace* trace, const float* patch_z) {
  const PretrainedConfig& c = config_;
  const BlockSpec& b = block_;
  const std::size_t lens_k =
      options.lens ? std::min(std::max<std::size_t>(options.lens_top_k, 1), c.vocab) : 0;
  reserve(t, options.attention, options.all_logits, options.lens);
  const std::size_t d = c.d_model, v = c.vocab, nh = b.heads, big_l = c.num_layers, n = t - t0,
                    qw = qkv_width(), kvw = kv_width();
  PretrainedRunResult& r = *result;
  r.attention.assign(options.attention ? big_l * nh * t * t : 0, 0.0f);
  r.lens_ids.assign(big_l * t * lens_k, 0);
  r.lens_probs.assign(big_l * t * lens_k, 0.0f);
  float *x = x_.data(), *ln = ln_.data();

  const Tensor &emb = globals_[embed], &pos = globals_[pos_embed];
  const void* pos_rows = pos.present ? static_cast<const std::uint8_t*>(pos.data) +
                                           (t0 + b.position_offset) * d * dtype_bytes(pos.dtype)
                                     : nullptr;
  embed_wide(path, tokens + t0, n, d, emb.data, emb.dtype, pos_rows, pos.dtype, x, emb.packed ? v : 0);
  if (globals_[type_embed].present) {
    const Tensor& te = globals_[type_embed];
    std::vector<std::int32_t> zeros;
    const std::int32_t* types = options.token_types ? options.token_types + t0 : nullptr;
    if (!types) zeros.assign(n, 0), types = zeros.data();
    embed_wide(path, types, n, d, te.data, te.dtype, nullptr, te.dtype, tmp_.data());
    add(path, x, tmp_.data(), x, n * d);
  }
  if (b.embed_scale != 1.0f) scale(path, x, n * d, b.embed_scale);
  if (b.embed_norm) norm(path, globals_[embed_norm_w], globals_[embed_norm_b], x, x, n);
  if (b.positions == BlockSpec::Positions::rotary) rope_table(b.rope, t0, n, rope_cos_.data(), rope_sin_.data());
  const std::size_t hw = nh * b.head_dim;
  for (std::size_t l = 0; l < big_l; ++l) {
    float* qkv = qkv_.data();
    if (trace && trace->keep_x) std::copy(x, x + n * d, trace->x.data() + l * t * d);
    layer_qkv(path, l, x, 1, n, qkv);
    if (trace && trace->keep_qkv) std::copy(qkv, qkv + n * qw, trace->qkv.data() + l * t * qw);
    float* layer_cache = cache ? kv_.data() + l * kv_rows_ * kvw : nullptr;
    if (cache)
      for (std::size_t i = 0; i < n; ++i) {
        const float* row = qkv + i * qw;
        float* to = layer_cache + (t0 + i) * kvw;
        for (std::size_t j = 0; j < b.kv_heads; ++j) {
          const float *kj = row + b.k_base + j * b.kv_stride, *vj = row + b.v_base + j * b.kv_stride;
          std::copy(kj, kj + b.head_dim, to + j * b.head_dim);
          std::copy(vj, vj + b.head_dim, to + (b.kv_heads + j) * b.head_dim);
        }
      }
    // The prompt's rows attend as a run's do (qkv holds them all); a step's against the cache.
    attend(path, l, t0, t, qkv, t0 > 0 ? layer_cache : nullptr, options.ablate,
           options.attention ? r.attention.data() + l * nh * t * t : nullptr, heads_.data());
    if (trace) std::copy(heads_.data(), heads_.data() + n * hw, trace->z.data() + l * t * hw);
    if (patch_z && options.patch_heads)
      for (std::size_t h = 0; h < nh; ++h)
        if (options.patch_heads[l * nh + h])
          for (std::size_t i = 0; i < n; ++i) {
            const float* from = patch_z + (l * t + i) * hw + h * b.head_dim;
            std::copy(from, from + b.head_dim, heads_.data() + i * hw + h * b.head_dim);
          }
    layer_rest(path, l, x, heads_.data(), n, trace);
    if (lens_k) lens_layer(path, l, t, lens_k, &r);
  }
  if (trace) std::copy(x + trace->at * d, x + (trace->at + 1) * d, trace->x_final.data());
  if (b.hidden_output) {
    r.logits.clear();
    r.hidden.assign(x, x + n * d);
    return;
  }
  r.hidden.clear();
  const std::size_t rows = options.all_logits ? n : 1;
  const float* last = x + (n - rows) * d;
  head(path, last, rows, ln);
  r.logits.resize(rows * v);
  linear(path, ln, d, rows, unembedding(), globals_[unembed_b], r.logits.data(), v);
}

std::string PretrainedModel::head_scores(const std::int32_t* tokens, std::size_t t, std::size_t n,
                                         std::vector<float>* out, Path path) {
  if (n < 1 || t != 2 * n + 1)
    return "headScores needs 2n + 1 tokens (BOS, n tokens, the same n again): got " + std::to_string(t) +
           " tokens for n = " + std::to_string(n);
  PretrainedRunOptions o;
  o.attention = true;
  PretrainedRunResult r;
  std::string error = run(tokens, t, o, &r, path);
  if (!error.empty()) return error;
  const std::size_t lh = config_.num_layers * block_.heads;
  out->assign(lh * 4, 0.0f);
  for (std::size_t i = 0; i < lh; ++i) {
    const float* a = r.attention.data() + i * t * t;
    double prev = 0, dup = 0, ind = 0, first = 0;
    for (std::size_t q = 2; q <= 2 * n; ++q) prev += a[q * t + q - 1];
    for (std::size_t q = n + 1; q <= 2 * n; ++q) {
      dup += a[q * t + q - n];
      ind += a[q * t + q - n + 1];
    }
    for (std::size_t q = 1; q <= 2 * n; ++q) first += a[q * t];
    float* s = out->data() + i * 4;
    s[0] = n > 1 ? float(prev / double(2 * n - 1)) : 0.0f;
    s[1] = float(dup / double(n));
    s[2] = float(ind / double(n));
    s[3] = float(first / double(2 * n));
  }
  return "";
}

std::string PretrainedModel::generate(const std::int32_t* tokens, std::size_t t, std::size_t max_tokens,
                                      float temperature, std::uint64_t seed, std::int32_t stop_id,
                                      std::vector<std::int32_t>* out, Path path,
                                      const PretrainedGenerateOptions& options) {
  out->clear();
  if (!block_.causal)
    return "generate needs a decoder: this model is an encoder (bidirectional attention), which predicts "
           "masked tokens rather than the next one";
  if (!(temperature >= 0) || !std::isfinite(temperature)) return "temperature must be a finite number >= 0";
  PretrainedRunResult r;
  PretrainedRunOptions o;
  o.ablate = options.ablate;
  const std::string error = check(tokens, t);
  if (!error.empty()) return error;
  if (max_tokens == 0 || t == config_.context) return "";
  std::vector<std::int32_t> seq(tokens, tokens + t);
  const bool cached = options.cached;
  // Keys and values of every layer for every position the sequence will reach: each new
  // token then costs one row through the model.
  if (cached) {
    kv_rows_ = std::min(config_.context, t + max_tokens);
    kv_.assign(config_.num_layers * kv_rows_ * kv_width(), 0.0f);
  }
  Rng rng(seed);
  const std::size_t v = config_.vocab;
  std::vector<double> p(v);
  forward(seq.data(), 0, t, o, &r, path, cached);
  for (;;) {
    const float* logits = r.logits.data();
    if (options.step_logits) options.step_logits->insert(options.step_logits->end(), logits, logits + v);
    std::size_t next = std::size_t(std::max_element(logits, logits + v) - logits);
    if (temperature > 0) {
      double sum = 0;
      for (std::size_t j = 0; j < v; ++j)
        sum += p[j] = std::exp((double(logits[j]) - logits[next]) / temperature);
      double u = rng.uniform() * sum;
      for (std::size_t j = 0; j < v; ++j) {
        u -= p[j];
        if (u < 0) {
          next = j;
          break;
        }
      }
    }
    if (std::int32_t(next) == stop_id) break;
    out->push_back(std::int32_t(next));
    seq.push_back(std::int32_t(next));
    if (out->size() >= max_tokens || seq.size() >= config_.context) break;
    forward(seq.data(), cached ? seq.size() - 1 : 0, seq.size(), o, &r, path, cached);
  }
  std::vector<float>().swap(kv_);
  kv_rows_ = 0;
  return "";
}

}  // namespace headlab
