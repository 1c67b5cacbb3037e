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

void layernorm(Path path, const LayerNormArgs& a) {
  path == Path::simd ? layernorm_forward_simd(a) : layernorm_forward_ref(a);
}

// Sizes (floats) of the activation buffers for one run.
struct Sizes {
  std::size_t x, qkv, fc, logits, kt, gws, aws, apack;
};

}  // namespace

std::string pretrained_config_error(const PretrainedConfig& c) {
  if (c.num_layers < 1) return "numLayers must be at least 1";
  if (c.num_heads < 1) return "numHeads must be at least 1";
  if (c.d_model < 1 || c.d_model % c.num_heads != 0) return "dModel must be a positive multiple of numHeads";
  if (c.d_ff < 1) return "dFF must be positive";
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
// "transformer." prefix.
struct PretrainedModel::Slot {
  Tensor* target = nullptr;          // nullptr: accepted and dropped (buffers, lm_head.weight)
  std::vector<std::uint64_t> shape;  // empty for ignored buffers: any shape
  bool check_shape = true;
  bool seen = false;
  std::string file, stored_name;  // where it came from, and its name there
  std::size_t elements = 0;
};

PretrainedModel::PretrainedModel(const PretrainedConfig& config)
    : config_(config), layers_(config.num_layers) {
  build_slots();
}

PretrainedModel::~PretrainedModel() {
  for (File& f : files_) std::free(f.data);
}

void PretrainedModel::build_slots() {
  const PretrainedConfig& c = config_;
  const std::uint64_t d = c.d_model, f = c.d_ff, v = c.vocab, n = c.context;
  auto add = [&](const std::string& name, Tensor* t, std::vector<std::uint64_t> shape) {
    Slot s;
    s.target = t;
    s.shape = std::move(shape);
    s.elements = 1;
    for (auto e : s.shape) s.elements *= e;
    slots_[name] = s;
  };
  auto ignore = [&](const std::string& name) {
    Slot s;
    s.check_shape = false;
    slots_[name] = s;
  };
  add("wte.weight", &wte_, {v, d});
  add("wpe.weight", &wpe_, {n, d});
  add("ln_f.weight", &lnf_g_, {d});
  add("ln_f.bias", &lnf_b_, {d});
  add("lm_head.weight", nullptr, {v, d});  // tied to wte: checked and dropped
  const bool neo = c.architecture == PretrainedArch::gpt_neo;
  for (std::size_t l = 0; l < c.num_layers; ++l) {
    Layer& y = layers_[l];
    const std::string h = "h." + std::to_string(l) + ".";
    add(h + "ln_1.weight", &y.ln1_g, {d});
    add(h + "ln_1.bias", &y.ln1_b, {d});
    add(h + "ln_2.weight", &y.ln2_g, {d});
    add(h + "ln_2.bias", &y.ln2_b, {d});
    add(h + "mlp.c_fc.bias", &y.fc_b, {f});
    add(h + "mlp.c_proj.bias", &y.proj_b, {d});
    if (!neo) {
      add(h + "attn.c_attn.weight", &y.qkv_w, {d, 3 * d});
      add(h + "attn.c_attn.bias", &y.qkv_b, {3 * d});
      add(h + "attn.c_proj.weight", &y.o_w, {d, d});
      add(h + "attn.c_proj.bias", &y.o_b, {d});
      add(h + "mlp.c_fc.weight", &y.fc_w, {d, f});
      add(h + "mlp.c_proj.weight", &y.proj_w, {f, d});
      ignore(h + "attn.bias");
      ignore(h + "attn.masked_bias");
    } else {
      const std::string a = h + "attn.attention.";
      add(a + "q_proj.weight", &y.q_w, {d, d});
      add(a + "k_proj.weight", &y.k_w, {d, d});
      add(a + "v_proj.weight", &y.v_w, {d, d});
      add(a + "out_proj.weight", &y.o_w, {d, d});
      add(a + "out_proj.bias", &y.o_b, {d});
      add(h + "mlp.c_fc.weight", &y.fc_w, {f, d});
      add(h + "mlp.c_proj.weight", &y.proj_w, {d, f});
      ignore(a + "bias");
      ignore(a + "masked_bias");
    }
  }
}

std::uint8_t* PretrainedModel::alloc_file(std::size_t bytes) {
  void* p = std::aligned_alloc(16, align16(std::max<std::size_t>(bytes, 1)));
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

  const bool neo = config_.architecture == PretrainedArch::gpt_neo;
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
    if (name.rfind("transformer.", 0) == 0) name = name.substr(12);
    auto s = slots_.find(name);
    if (s == slots_.end())
      return fail(where + "not a tensor of " + (neo ? "GPTNeoForCausalLM" : "GPT2LMHeadModel") + " with " +
                  std::to_string(config_.num_layers) + " layers");
    Slot& slot = s->second;
    if (slot.seen || std::find(seen_here.begin(), seen_here.end(), &slot) != seen_here.end())
      return fail(where + "appears twice (with and without the transformer. prefix, or in two files)");
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
    if (!slot.target) continue;  // lm_head.weight: tied to wte
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
        static_cast<std::uint8_t*>(std::aligned_alloc(16, align16(std::max<std::size_t>(total, 1))));
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
           " (looked for with and without the transformer. prefix)";
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
  // float32 matrices into the packed GEMM's panels, in place: op(B) is [in, out] for the products
  // (GPT-2's Conv1D stores it so; nn.Linear stores [out, in]) and wte^T for the unembedding.
  const bool neo = config_.architecture == PretrainedArch::gpt_neo;
  {
    struct Matrix {
      Tensor* t;
      std::size_t k, n;
      bool trans;
    };
    const std::size_t d = config_.d_model, f = config_.d_ff;
    std::vector<Matrix> matrices = {{&wte_, d, config_.vocab, true}};
    for (Layer& y : layers_) {
      matrices.insert(matrices.end(), {{&y.o_w, d, d, neo}, {&y.fc_w, d, f, neo}, {&y.proj_w, f, d, neo}});
      if (neo)
        matrices.insert(matrices.end(), {{&y.q_w, d, d, true}, {&y.k_w, d, d, true}, {&y.v_w, d, d, true}});
      else
        matrices.push_back({&y.qkv_w, d, 3 * d, false});
    }
    std::size_t bytes = 0;
    for (const Matrix& m : matrices)
      if (m.t->dtype == DType::f32)
        bytes = std::max(bytes, pack_b_panels_in_place_scratch_bytes(m.trans, m.k, m.n));
    std::vector<float> scratch((bytes + 3) / 4);
    for (const Matrix& m : matrices)
      if (m.t->dtype == DType::f32 && !m.t->packed) {
        // The tensor lies in a file buffer this model owns.
        pack_b_panels_in_place(static_cast<float*>(const_cast<void*>(m.t->data)), m.trans, m.k, m.n,
                               scratch.data());
        m.t->packed = true;
      }
  }
  // Widen every vector into one float block.
  std::vector<std::pair<const Tensor*, const float**>> vecs = {{&lnf_g_, &lnfg_}, {&lnf_b_, &lnfb_}};
  for (Layer& y : layers_) {
    vecs.insert(vecs.end(), {{&y.ln1_g, &y.ln1g},
                             {&y.ln1_b, &y.ln1b},
                             {&y.ln2_g, &y.ln2g},
                             {&y.ln2_b, &y.ln2b},
                             {&y.o_b, &y.ob},
                             {&y.fc_b, &y.fcb},
                             {&y.proj_b, &y.projb}});
    if (!neo)
      vecs.push_back({&y.qkv_b, &y.qkvb});
    else
      y.qkvb = nullptr;
  }
  const std::size_t d = config_.d_model;
  auto length = [&](const Tensor* t) -> std::size_t {
    for (const Layer& y : layers_) {
      if (t == &y.fc_b) return config_.d_ff;
      if (t == &y.qkv_b) return 3 * d;
    }
    return d;
  };
  std::size_t total = 0;
  for (const auto& v : vecs) total += align16(length(v.first) * 4) / 4;
  vectors_.assign(total, 0.0f);
  std::size_t o = 0;
  for (const auto& v : vecs) {
    const std::size_t n = length(v.first);
    widen_ref(v.first->data, v.first->dtype, vectors_.data() + o, n);
    *v.second = vectors_.data() + o;
    o += align16(n * 4) / 4;
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
Sizes sizes_for(const PretrainedConfig& c, std::size_t t, bool attention, bool all_logits, bool lens) {
  const std::size_t d = c.d_model, dk = d / c.num_heads;
  Sizes s{};
  s.x = t * d;
  s.qkv = 3 * t * d;
  s.fc = t * c.d_ff;
  // The logits themselves are written straight into the result ([T, V] or [V]).
  s.logits = lens ? std::min(t, kLensRows) * c.vocab : 0;
  (void)all_logits;
  s.kt = attention ? dk * t : 0;
  // The largest workspace any product needs: 16-bit weights cost the most, [in, out] ones (a
  // widened panel of k rows) more than [out, in] ones once k passes a packed panel's rows.
  for (std::size_t k : {d, c.d_ff})
    for (bool transposed : {false, true}) {
      const WideGemmArgs probe{t, 1,          k,       nullptr, k,       nullptr, DType::f16,
                               k, transposed, nullptr, 1,       nullptr, false};
      s.gws = std::max(s.gws, gemm_wide_workspace_floats(probe));
    }
  AttentionArgs a;
  a.t_q = a.t_k = t;
  a.d_k = a.d_v = dk;
  s.aws = std::max(attention_fused_simd_workspace_floats(a), attention_fused_ref_workspace_floats(a));
  s.apack = gemm_packed_a_floats(t, std::max(d, c.d_ff));  // used with more than one worker
  return s;
}

}  // namespace

std::size_t PretrainedModel::activation_bytes(std::size_t t, bool attention, bool all_logits,
                                              bool lens) const {
  const Sizes s = sizes_for(config_, t, attention, all_logits, lens);
  const std::size_t out = (attention ? config_.num_layers * config_.num_heads * t * t : 0) +
                          (all_logits ? t : 1) * config_.vocab;
  return 4 * (4 * s.x + 2 * t + s.qkv + s.fc + s.logits + threads() * (s.kt + s.gws + s.aws) +
              (threads() > 1 ? s.apack : 0) + out);
}

std::size_t PretrainedModel::memory_bytes() const {
  const std::size_t floats = x_.capacity() + ln_.capacity() + stats_.capacity() + qkv_.capacity() +
                             heads_.capacity() + tmp_.capacity() + fc_.capacity() + logits_.capacity() +
                             scores_.capacity() + kt_.capacity() + gws_.capacity() + aws_.capacity() +
                             apack_.capacity() + kv_.capacity();
  return weight_bytes() + floats * sizeof(float);
}

void PretrainedModel::reserve(std::size_t t, bool attention, bool all_logits, bool lens) {
  const Sizes s = sizes_for(config_, t, attention, all_logits, lens);
  auto grow = [](std::vector<float>& v, std::size_t n) {
    if (v.size() < n) v.resize(n);
  };
  grow(x_, s.x);
  grow(ln_, s.x);
  grow(heads_, s.x);
  grow(tmp_, s.x);
  grow(stats_, 2 * t);
  grow(qkv_, s.qkv);
  grow(fc_, s.fc);
  grow(logits_, s.logits);
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

// g split by columns into chunks of whole kWidePanel-column panels (one chunk on one thread;
// about 4 per worker, each packing A for itself, or with packed weights one panel each after
// A is packed once); with gelu, GELU applied to each chunk's columns row by row. Chunks start
// at multiples of kWidePanel, so GELU's SIMD groups are the same whatever the split.
void PretrainedModel::product(Path path, const WideGemmArgs& g, bool gelu) {
  const std::size_t workers = threads();
  const std::size_t panels = (g.n + kWidePanel - 1) / kWidePanel;
  const bool share_a = workers > 1 && g.b_packed && path == Path::simd;
  if (share_a) gemm_pack_a({g.m, 0, g.k, g.a, g.lda, nullptr, 0, nullptr, 0, nullptr, false}, apack_.data());
  const std::size_t per = workers == 1 ? std::max<std::size_t>(panels, 1)
                          : share_a    ? 1
                                       : std::max<std::size_t>(1, (panels + 4 * workers - 1) / (4 * workers));
  const std::size_t cols = per * kWidePanel, chunks = (g.n + cols - 1) / cols;
  const std::size_t es = dtype_bytes(g.b_dtype);
  const auto* b = static_cast<const std::uint8_t*>(g.b);
  const auto gelu_row = path == Path::simd ? gelu_forward_simd : gelu_forward_ref;
  parallel(chunks, [&](std::size_t chunk, std::size_t w) {
    const std::size_t begin = chunk * cols, end = std::min(g.n, begin + cols);
    WideGemmArgs part = g;
    part.n = end - begin;
    // A packed B's columns from `begin` (a multiple of its panel width) are the packed B at begin * k.
    part.b = b + (g.b_packed ? begin * g.k : g.b_transposed ? begin * g.ldb : begin) * es;
    part.c = g.c + begin;
    part.bias = g.bias ? g.bias + begin : nullptr;
    part.a_packed = share_a ? apack_.data() : nullptr;
    gemm_wide(path, part, gws_.data() + w * gws_part_);
    if (gelu)
      for (std::size_t i = 0; i < g.m; ++i) gelu_row(part.c + i * g.ldc, part.c + i * g.ldc, part.n);
  });
}

// c[rows, out] = a[rows, in] W + bias, W stored [in, out] (GPT-2) or [out, in] (GPT-Neo).
void PretrainedModel::linear(Path path, const float* a, std::size_t rows, const Tensor& w, std::size_t in,
                             std::size_t out, const float* bias, float* c, std::size_t ldc, bool gelu) {
  const bool transposed = config_.architecture == PretrainedArch::gpt_neo;
  const WideGemmArgs g{rows,       out, in,  a,    in,    w.data,  w.dtype, transposed ? in : out,
                       transposed, c,   ldc, bias, false, w.packed};
  product(path, g, gelu);
}

// Heads split over the workers, each with its own workspace.
void PretrainedModel::attend(Path path, std::size_t l, std::size_t t0, std::size_t t, const float* qkv,
                             const std::uint8_t* ablate, float* attention_out) {
  parallel(config_.num_heads, [&](std::size_t h, std::size_t worker) {
    attend_head(path, l, h, t0, t, qkv, ablate, attention_out, worker);
  });
}

void PretrainedModel::attend_head(Path path, std::size_t l, std::size_t h, std::size_t t0, std::size_t t,
                                  const float* qkv, const std::uint8_t* ablate, float* attention_out,
                                  std::size_t worker) {
  const PretrainedConfig& c = config_;
  const std::size_t d = c.d_model, nh = c.num_heads, dk = d / nh, ld = 3 * d, w = c.windows[l];
  const float scale = c.scale_scores ? 1.0f / std::sqrt(float(dk)) : 1.0f;
  const auto fused = path == Path::simd ? attention_fused_simd : attention_fused_ref;
  float* aws = aws_.data() + worker * aws_part_;
  float* kt = kt_.data() + worker * kt_part_;
  {
    const float *q = qkv + h * dk, *k = qkv + d + h * dk, *v = qkv + 2 * d + h * dk;
    float* o = heads_.data() + h * dk;
    const bool off = ablate && ablate[l * nh + h];
    if (t0 > 0) {
      // Rows t0..t-1 after cached keys (generation): each query alone over the
      // keys it sees, 0..i or, in a local layer, its last w.
      if (!off)
        for (std::size_t i = t0; i < t; ++i) {
          const std::size_t lo = (w && i + 1 > w) ? i + 1 - w : 0;
          AttentionArgs a;
          a.d_k = a.d_v = dk;
          a.ldq = a.ldk = a.ldv = ld;
          a.ldo = d;
          a.scale = scale;
          a.t_q = 1;
          a.t_k = i + 1 - lo;
          a.q = q + i * ld, a.k = k + lo * ld, a.v = v + lo * ld, a.o = o + (i - t0) * d;
          fused(a, aws);
        }
    } else if (attention_out) {
      // Scores materialised: S = Q K^T * s, masked, softmax, then O = S V.
      float* s = attention_out + h * t * t;
      transpose(t, dk, k, ld, kt, t);
      gemm(path, {t, t, dk, q, ld, kt, t, s, t, nullptr, false});
      const float neg = -std::numeric_limits<float>::infinity();
      for (std::size_t i = 0; i < t; ++i)
        for (std::size_t j = 0; j < t; ++j) {
          float& x = s[i * t + j];
          x = (j > i || (w && j + w <= i)) ? neg : x * scale;
        }
      softmax_rows(path, s, t, t, t);
      if (!off) gemm(path, {t, dk, t, s, t, v, ld, o, d, nullptr, false});
    } else if (!off) {
      // The fused kernel knows causal masks, not windows: a local layer runs the
      // first w queries as one causal block, then each later query alone over its w keys.
      AttentionArgs a;
      a.d_k = a.d_v = dk;
      a.ldq = a.ldk = a.ldv = ld;
      a.ldo = d;
      a.scale = scale;
      a.causal = true;
      a.t_q = a.t_k = (w && t > w) ? w : t;
      a.q = q, a.k = k, a.v = v, a.o = o;
      fused(a, aws);
      if (w && t > w) {
        a.causal = false;
        a.t_q = 1;
        a.t_k = w;
        for (std::size_t i = w; i < t; ++i) {
          a.q = q + i * ld;
          a.k = k + (i + 1 - w) * ld;
          a.v = v + (i + 1 - w) * ld;
          a.o = o + i * d;
          fused(a, aws);
        }
      }
    }
    if (off)
      for (std::size_t i = 0; i < t - t0; ++i) std::fill(o + i * d, o + i * d + dk, 0.0f);
  }
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
    layernorm(path, {rows, d, x_.data() + r0 * d, lnfg_, lnfb_, ln_.data(), stats_.data(), stats_.data() + t,
                     c.ln_eps});
    const WideGemmArgs g{rows,           v, d,       ln_.data(), d,          wte_.data, wte_.dtype, d, true,
                         logits_.data(), v, nullptr, false,      wte_.packed};
    product(path, g, false);
    parallel(rows, [&](std::size_t i, std::size_t) {
      const std::size_t at = (l * t + r0 + i) * k;
      top_k(logits_.data() + i * v, v, k, r->lens_ids.data() + at, r->lens_probs.data() + at);
    });
  }
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

std::string PretrainedModel::run(const std::int32_t* tokens, std::size_t t,
                                 const PretrainedRunOptions& options, PretrainedRunResult* result,
                                 Path path) {
  const std::string error = check(tokens, t);
  if (!error.empty()) return error;
  forward(tokens, 0, t, options, result, path, false);
  return "";
}

// Rows t0..t-1 of tokens[0..t) (checked). cache: q, k, v of every layer kept in
// kv_ at their positions, and rows before t0 taken from there (t0 > 0 only with
// cache; options other than ablate only with t0 = 0).
void PretrainedModel::forward(const std::int32_t* tokens, std::size_t t0, std::size_t t,
                              const PretrainedRunOptions& options, PretrainedRunResult* result, Path path,
                              bool cache) {
  const PretrainedConfig& c = config_;
  const std::size_t lens_k =
      options.lens ? std::min(std::max<std::size_t>(options.lens_top_k, 1), c.vocab) : 0;
  reserve(t, options.attention, options.all_logits, options.lens);
  const std::size_t d = c.d_model, f = c.d_ff, v = c.vocab, nh = c.num_heads, big_l = c.num_layers,
                    n = t - t0;
  const bool simd = path == Path::simd, neo = c.architecture == PretrainedArch::gpt_neo;
  const auto add = simd ? add_simd : add_ref;
  PretrainedRunResult& r = *result;
  r.attention.assign(options.attention ? big_l * nh * t * t : 0, 0.0f);
  r.lens_ids.assign(big_l * t * lens_k, 0);
  r.lens_probs.assign(big_l * t * lens_k, 0.0f);
  float *x = x_.data(), *ln = ln_.data(), *mean = stats_.data(), *rstd = stats_.data() + t;

  const auto* wpe = static_cast<const std::uint8_t*>(wpe_.data) + t0 * d * dtype_bytes(wpe_.dtype);
  (simd ? embed_wide_simd : embed_wide_ref)(tokens + t0, n, d, wte_.data, wte_.dtype, wpe, wpe_.dtype, x,
                                            wte_.packed ? v : 0);
  for (std::size_t l = 0; l < big_l; ++l) {
    const Layer& y = layers_[l];
    float* qkv = cache ? kv_.data() + l * kv_rows_ * 3 * d : qkv_.data();
    float* rows_qkv = qkv + t0 * 3 * d;
    layernorm(path, {n, d, x, y.ln1g, y.ln1b, ln, mean, rstd, c.ln_eps});
    if (!neo) {
      linear(path, ln, n, y.qkv_w, d, 3 * d, y.qkvb, rows_qkv, 3 * d);
    } else {
      linear(path, ln, n, y.q_w, d, d, nullptr, rows_qkv, 3 * d);
      linear(path, ln, n, y.k_w, d, d, nullptr, rows_qkv + d, 3 * d);
      linear(path, ln, n, y.v_w, d, d, nullptr, rows_qkv + 2 * d, 3 * d);
    }
    attend(path, l, t0, t, qkv, options.ablate,
           options.attention ? r.attention.data() + l * nh * t * t : nullptr);
    linear(path, heads_.data(), n, y.o_w, d, d, y.ob, tmp_.data(), d);
    add(x, tmp_.data(), x, n * d);
    layernorm(path, {n, d, x, y.ln2g, y.ln2b, ln, mean, rstd, c.ln_eps});
    linear(path, ln, n, y.fc_w, d, f, y.fcb, fc_.data(), f, true);
    linear(path, fc_.data(), n, y.proj_w, f, d, y.projb, tmp_.data(), d);
    add(x, tmp_.data(), x, n * d);
    if (lens_k) lens_layer(path, l, t, lens_k, &r);
  }
  const std::size_t rows = options.all_logits ? n : 1;
  const float* last = x + (n - rows) * d;
  layernorm(path, {rows, d, last, lnfg_, lnfb_, ln, mean, rstd, c.ln_eps});
  r.logits.resize(rows * v);
  const WideGemmArgs g{rows, v,       d,     ln,         d, wte_.data, wte_.dtype, d, true, r.logits.data(),
                       v,    nullptr, false, wte_.packed};
  product(path, g, false);
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
  const std::size_t lh = config_.num_layers * config_.num_heads;
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
                                      std::vector<std::int32_t>* out, Path path) {
  if (!(temperature >= 0) || !std::isfinite(temperature)) return "temperature must be a finite number >= 0";
  out->clear();
  PretrainedRunResult r;
  const PretrainedRunOptions o;
  const std::string error = check(tokens, t);
  if (!error.empty()) return error;
  if (max_tokens == 0 || t == config_.context) return "";
  std::vector<std::int32_t> seq(tokens, tokens + t);
  // q, k, v of every layer for every position the sequence will reach: each new
  // token then costs one row through the model.
  kv_rows_ = std::min(config_.context, t + max_tokens);
  kv_.assign(config_.num_layers * kv_rows_ * 3 * config_.d_model, 0.0f);
  Rng rng(seed);
  const std::size_t v = config_.vocab;
  std::vector<double> p(v);
  forward(seq.data(), 0, t, o, &r, path, true);
  for (;;) {
    const float* logits = r.logits.data();
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
    forward(seq.data(), seq.size() - 1, seq.size(), o, &r, path, true);
  }
  std::vector<float>().swap(kv_);
  kv_rows_ = 0;
  return "";
}

}  // namespace headlab
