// Inference for pretrained decoder checkpoints read from safetensors files: one
// transformer block described by data (BlockSpec), run over the kernel dispatches,
// and per architecture a table from its checkpoint's tensor names to the block's
// canonical slots (pretrained_arch.cpp). GPT2LMHeadModel, GPTNeoForCausalLM,
// LlamaForCausalLM, Qwen2ForCausalLM, MistralForCausalLM, GPTNeoXForCausalLM,
// Phi3ForCausalLM, GemmaForCausalLM and the encoders BertForMaskedLM,
// RobertaForMaskedLM, DistilBertForMaskedLM, BertModel (no head), and HeadLab's own language
// models (lm.hpp) as HeadlabLanguageModel; docs/architecture-cpp.md has the tables.
//
//   X_0 = embed[token] (+ pos[position + offset]) (+ type[token type]) (* embed_scale)   [T, d]
//         (encoders: X_0 = LN(X_0))
//   per block l:  A = norm1(X) (X itself post-norm)
//                 Q, K, V = A W_q (+ b), A W_k (+ b), A W_v (+ b)      h query, g key-value heads of size d_k
//                 rotary: Q, K rotated on their first rot_dim dims at their positions
//                 head i: O_i = softmax(mask(Q_i K_j^T * s)) V_j        j = i / (h / g) (grouped-query)
//                 mask: causal or none; a window w > 0 lets query i see keys i - w < j
//                 an ablated head's O_i is zero; Att = concat(O) W_o (+ b_o)
//                 sequential: M = X + Att; X' = M + MLP(norm2(M))     (post-norm: M = norm1(X + Att),
//                                                                     X' = norm2(M + MLP(M)))
//                 parallel:   X' = X + Att + MLP(norm2(X))            (GPT-NeoX)
//                 MLP: act(A W_up + b) W_down + b (GELU tanh / erf) or (act(A W_gate) * A W_up) W_down
//                      (SwiGLU: SiLU; GeGLU: GELU tanh)
//   logits = norm_f(X_L) W_unembed^T                                    [T, V] (tied: W_unembed = embed)
//   masked-LM head: logits = norm_f(gelu_erf(X_L W_head + b)) W_unembed^T + b_unembed
//   no head (BertModel): the result is X_L itself                      [T, d]
//
// Weights: matrices are used where they lie in the file buffers ([in, out] as
// GPT-2's Conv1D stores them, or [out, in] as nn.Linear does; no copy); vectors
// (norm parameters, biases) are widened to float32 at finish(), and float32
// matrices (the unembedding included) are rearranged in place, once, into the
// panels the packed GEMM reads (gemm.hpp's packed_b_index), which every reader of
// them then reads: the products, the embedding lookup, the unembedding (16-bit
// matrices stay as stored and are widened as they are packed, on every call).
// Activations are sized for the T of the call (grown, never for the whole
// context); there are no backward buffers.
//
// Threads (set_pool): each GEMM is split by columns (chunks of whole 64-column
// panels; the unembedding's vocabulary too), attention by heads, the logit
// lens's top-k by rows, the chunks claimed by whichever worker is free; each
// worker has its own workspace. A product on packed weights packs its A once,
// before the split, so its chunks can be single 64-column panels (a step then
// waits at most one such panel for its last worker). Every output element is computed by the same
// arithmetic in the same order whatever the split, so results do not depend on
// the number of threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "headlab/kernels.hpp"
#include "headlab/pretrained_kernels.hpp"
#include "headlab/pretrained_pool.hpp"

namespace headlab {

// The architectures (config.json's `architectures`): each is a tensor table and a
// block description made from the config (pretrained_arch.cpp).
enum class PretrainedArch {
  gpt2, gpt_neo, llama, qwen2, mistral, gpt_neox, phi3, gemma,  // decoders
  bert, roberta, distilbert,                                    // masked-LM encoders
  bert_model,                                                   // BertModel: an encoder without a head
  headlab                                                       // HeadLab's own language models (lm.hpp)
};

struct PretrainedConfig {
  PretrainedArch architecture = PretrainedArch::gpt2;
  std::size_t num_layers = 0, num_heads = 0, d_model = 0, d_ff = 0, vocab = 0, context = 0;
  float ln_eps = 1e-5f;              // the norms' eps (layer_norm_epsilon, rms_norm_eps, ...)
  bool scale_scores = true;          // 1/sqrt(d_k) (GPT-2); GPT-Neo does not scale
  std::vector<std::size_t> windows;  // per layer; 0 = global, w > 0 = local / sliding with window w
  std::string dtype;                 // "" (any) or the dtype every tensor must have: F32, F16, BF16
  // The rotary families:
  std::size_t num_kv_heads = 0;  // 0: num_heads (no grouped-query attention)
  std::size_t head_dim = 0;      // 0: d_model / num_heads
  double rope_theta = 10000;
  double rotary_fraction = 1;  // share of each head rotated (GPT-NeoX's rotary_pct)
  double rope_factor = 0;      // rope_scaling llama3: factor (0 = none), and its other keys
  double rope_low_freq_factor = 1, rope_high_freq_factor = 4, rope_original_context = 8192;
  bool attention_bias = false;   // Llama's attention_bias: q, k, v and o biases
  bool mlp_bias = false;         // Llama's mlp_bias
  bool tie_embeddings = false;   // Llama, Qwen2, Mistral, Phi-3: no lm_head.weight, embed reused
  bool mlp = true;               // false: attention-only blocks (HeadLab's language models with mlp off)
  // The encoders:
  std::size_t type_vocab = 0;       // token type embedding rows (BERT 2, RoBERTa 1, DistilBERT none)
  std::size_t position_offset = 0;  // RoBERTa: position i reads row i + padding_idx + 1
};

// "" when valid, else a message naming the field.
std::string pretrained_config_error(const PretrainedConfig& c);

// config.json's class name (GPT2LMHeadModel, LlamaForCausalLM, ...) to the architecture;
// false for one HeadLab does not run. pretrained_arch_names(): the names, comma-separated.
bool pretrained_arch_from_name(const std::string& name, PretrainedArch* out);
std::string pretrained_arch_names();

// One transformer block, as data: what the forward pass composes (no architecture
// names in it). Made from a config by its architecture (block_spec()).
struct BlockSpec {
  enum class Norm { layer, rms, rms_one_plus };     // LayerNorm; RMSNorm with w; with 1 + w (Gemma)
  enum class Positions { learned, rotary, none };  // wpe added; Q, K rotated; nothing
  enum class Mlp { gelu_tanh, gelu_erf, swiglu, geglu, none };  // none: attention-only blocks
  Norm norm = Norm::layer;
  float eps = 1e-5f;
  Positions positions = Positions::learned;
  RopeArgs rope{0, 10000.0};  // rot_dim: dims rotated per head (even, <= head_dim)
  std::size_t heads = 0, kv_heads = 0, head_dim = 0;
  bool causal = true;
  std::vector<std::size_t> windows;  // per layer, 0 = everything the mask allows
  float score_scale = 1;
  // Q, K, V: one [in, q + 2 kv] product (fused) or three; their columns in the qkv rows:
  // head i of Q at q_base + i * q_stride, key-value head j of K at k_base + j * kv_stride, V at
  // v_base + j * kv_stride (GPT-NeoX interleaves heads: [head][q, k, v][d_k]).
  bool fused_qkv = false;
  std::size_t q_base = 0, k_base = 0, v_base = 0, q_stride = 0, kv_stride = 0;
  bool parallel_residual = false, post_norm = false;
  Mlp mlp = Mlp::gelu_tanh;
  bool fused_gate_up = false;  // [gate | up] in one product (Phi-3)
  float embed_scale = 1;       // Gemma: sqrt(d_model) rounded to the weights' dtype
  // Encoders: a norm after the embeddings; positions read from row i + position_offset; the
  // masked-LM head norm_f(gelu_erf(X W_head + b)) W_unembed^T + b_unembed instead of norm_f(X) W^T.
  bool embed_norm = false, mlm_head = false;
  std::size_t position_offset = 0;
  // No head at all (BertModel): a run gives the last hidden state X_L [T, d] (PretrainedRunResult::
  // hidden), no logits; what needs logits (the lens, patching's metric) is refused.
  bool hidden_output = false;
};

struct PretrainedRunOptions {
  bool attention = false;                // materialise [L, H, T, T]
  bool all_logits = false;               // [T, V] rather than the last position's [V]
  const std::uint8_t* ablate = nullptr;  // [L * H], 1 = head switched off; or nullptr
  bool lens = false;                     // logit lens: top lens_top_k per layer and position
  std::size_t lens_top_k = 5;
  const std::int32_t* token_types = nullptr;  // [T] (encoders with token type embeddings); nullptr: all 0
  // Activation patching: the heads marked in patch_heads [L * H] take their outputs (before the
  // output projection, every position) from an unpatched run on patch_source [T] (same length).
  const std::int32_t* patch_source = nullptr;
  std::size_t patch_source_length = 0;
  const std::uint8_t* patch_heads = nullptr;
};

// patch_heads(): for each head (l, h), metric(corrupted run with head (l, h)'s outputs from the
// clean run) - metric(corrupted run), metric = logits[at][answer] - logits[at][wrong].
struct PatchHeadsArgs {
  const std::int32_t* clean = nullptr;
  const std::int32_t* corrupted = nullptr;
  std::size_t t = 0;
  std::int32_t answer = 0, wrong = 0;
  std::size_t at = 0;  // the position of the metric (a decoder's last, an encoder's mask)
  const std::int32_t* token_types = nullptr;  // [t], both runs' (encoders, e.g. a pair); nullptr: all 0
};
// generate()'s further options.
struct PretrainedGenerateOptions {
  const std::uint8_t* ablate = nullptr;  // [L * H], 1 = head switched off (every step); or nullptr
  // true: the prompt runs once and stores each layer's keys (rotated) and values; each new token
  // is then one row through the model against them. false: every new token by a whole run over
  // the sequence so far (the comparison path for tests and the benchmark).
  bool cached = true;
  std::vector<float>* step_logits = nullptr;  // when set: each step's [V] logits appended, in order
};

struct PatchHeadsResult {
  std::vector<float> effects;  // [L * H], layer-major
  float metric_clean = 0, metric_corrupted = 0;
};
// direct_logit_attribution(): each component's share of logits[at][answer] - logits[at][wrong]
// through the final norm with its scale frozen (TransformerLens's apply_ln_to_stack).
struct LogitAttribution {
  std::vector<float> heads;  // [L * H]: head h's output at `at` through its rows of W_o, no bias
  std::vector<float> mlps;   // [L]: each MLP's output at `at`, its bias included
  float scale = 0;           // the final norm's divisor at `at`: sqrt(var + eps) or sqrt(mean x^2 + eps)
  float logit_diff = 0;      // the run's own logits[at][answer] - logits[at][wrong]
};
struct PretrainedRunResult {
  std::vector<float> logits;           // [T, V] or [V]; empty for a model without a head
  std::vector<float> hidden;           // [T, d]: the last hidden state (a model without a head only)
  std::vector<float> attention;        // [L, H, T, T] when asked
  std::vector<std::int32_t> lens_ids;  // [L, T, k]: most probable first
  std::vector<float> lens_probs;       // [L, T, k]
};

class PretrainedModel {
 public:
  // The config must pass pretrained_config_error().
  explicit PretrainedModel(const PretrainedConfig& config);
  ~PretrainedModel();
  PretrainedModel(const PretrainedModel&) = delete;
  PretrainedModel& operator=(const PretrainedModel&) = delete;

  const PretrainedConfig& config() const { return config_; }

  // The threads later calls split their work over (nullptr: the calling thread alone).
  void set_pool(std::unique_ptr<PretrainedPool> pool);
  std::size_t threads() const { return pool_ ? pool_->workers() : 1; }

  // A buffer of `bytes` the model owns (16-byte aligned), for one safetensors
  // file; nullptr when memory runs out.
  std::uint8_t* alloc_file(std::size_t bytes);
  // Parses and validates the file in a buffer from alloc_file and takes its
  // tensors; the buffer is compacted (ignored tensors and the header dropped)
  // and shrunk. On error the buffer is freed. Errors start with `file`.
  std::string add_safetensors(const std::string& file, std::uint8_t* buffer, std::size_t bytes);
  // Every tensor present and finite; vectors widened. "" or an error naming the tensor.
  std::string finish();
  bool ready() const { return ready_; }

  std::size_t parameters() const;    // elements of the model's tensors (wte counted once)
  std::size_t weight_bytes() const;  // bytes held by file buffers and widened vectors
  std::string dtype() const;         // "float32", "float16", "bfloat16" or "mixed"
  std::size_t memory_bytes() const;  // weights + activation buffers held now

  // Forward pass over tokens[0..t) (1 <= t <= context, ids < vocab: checked,
  // returning an error). result is overwritten.
  std::string run(const std::int32_t* tokens, std::size_t t, const PretrainedRunOptions& options,
                  PretrainedRunResult* result, Path path = Path::simd);

  // TransformerLens's detectors on tokens[0..2n] (t = 2n + 1): [L * H * 4] floats,
  // previousToken, duplicateToken, induction, firstToken per head.
  std::string head_scores(const std::int32_t* tokens, std::size_t t, std::size_t n, std::vector<float>* out,
                          Path path = Path::simd);

  // New ids after tokens[0..t), at most max_tokens and never past the context;
  // temperature 0 = arg-max, else sampling from softmax(logits / temperature)
  // with a generator seeded by `seed`. Stops before stop_id (< 0: never). Decoders only.
  // The cached and the uncached path draw the same tokens from the same seed (their logits
  // agree to rounding: the step's products take one row, the whole run's many).
  std::string generate(const std::int32_t* tokens, std::size_t t, std::size_t max_tokens, float temperature,
                       std::uint64_t seed, std::int32_t stop_id, std::vector<std::int32_t>* out,
                       Path path = Path::simd, const PretrainedGenerateOptions& options = {});

  // Activation patching over every head (PatchHeadsArgs). The work is shared where the maths
  // allows: layers before a head's layer are the corrupted run's, and so are the rows before
  // the first position where clean and corrupted differ (decoders); the heads of one layer
  // then run as one batch through the rest of the model. patch_heads_begin() runs the clean
  // and corrupted sequences; patch_heads_layer(l) fills effects[l * H .. (l + 1) * H) (a
  // caller can show progress between layers); patch_heads() does both. naive: every head
  // by a whole patched run (for the benchmark's comparison).
  std::string patch_heads(const PatchHeadsArgs& args, PatchHeadsResult* out, Path path = Path::simd,
                          bool naive = false);
  std::string patch_heads_begin(const PatchHeadsArgs& args, PatchHeadsResult* out, Path path = Path::simd);
  std::string patch_heads_layer(std::size_t layer, PatchHeadsResult* out, Path path = Path::simd,
                                bool naive = false);
  void patch_heads_end();
  // Direct logit attribution at position at of tokens[0..t); pre-norm decoders only (an error
  // in words for post-norm encoders and masked-LM heads, where the logits are no sum of parts).
  std::string direct_logit_attribution(const std::int32_t* tokens, std::size_t t, std::int32_t answer,
                                       std::int32_t wrong, std::size_t at, LogitAttribution* out,
                                       Path path = Path::simd);
  // Bytes of activations and workspace one run over t tokens uses (with lens and attention as asked).
  std::size_t activation_bytes(std::size_t t, bool attention, bool all_logits, bool lens) const;

  struct Tensor {
    const void* data = nullptr;
    DType dtype = DType::f32;
    bool present = false;
    bool packed = false;        // float32 matrix in the packed GEMM's panels (finish())
    bool transposed = false;    // matrix stored [out, in] (nn.Linear) rather than [in, out]
    std::size_t in = 0, out = 0;  // a matrix's op(B) is [in, out]; a vector has `out` elements
    const float* values = nullptr;  // a vector widened to float32 at finish()
  };

  // The block's canonical tensors, which every architecture's table fills.
  enum Global {
    embed, pos_embed, final_w, final_b, unembed,
    type_embed, embed_norm_w, embed_norm_b, head_w, head_b, unembed_b,  // the encoders
    kGlobals
  };
  enum LayerSlot {
    norm1_w, norm1_b, norm2_w, norm2_b,
    qkv_w, qkv_b, q_w, q_b, k_w, k_b, v_w, v_b, o_w, o_b,
    up_w, up_b, gate_w, gate_b, gate_up_w, down_w, down_b, kLayerSlots
  };

  const BlockSpec& block() const { return block_; }

 private:
  struct Slot;
  struct PatchSession;
  // What forward() keeps of a run for the causal tools (each part only when asked).
  struct Trace {
    bool keep_x = false, keep_qkv = false;
    std::size_t at = 0;                 // the row of mlp and x_final
    std::vector<float> z;               // [L, T, H * d_k]: the heads' outputs before W_o
    std::vector<float> x;               // [L, T, d]: the residual entering each layer
    std::vector<float> qkv;             // [L, T, qkv_width()]: keys rotated
    std::vector<float> mlp;             // [L, d]: each MLP's output at row `at`
    std::vector<float> x_final;         // [d]: the residual after the last layer at row `at`
  };
  struct Layer {
    Tensor t[kLayerSlots];
  };
  struct File {
    std::uint8_t* data = nullptr;
    std::size_t bytes = 0;
    bool added = false;
  };
  enum class Act { none, gelu_tanh, gelu_erf };

  void build_slots();
  void reserve(std::size_t t, bool attention, bool all_logits, bool lens);
  // task(chunk, worker) for every chunk in [0, chunks), spread over the workers (the pool's,
  // or worker 0 alone); each worker uses its own workspace part.
  void parallel(std::size_t chunks, const PretrainedPool::Task& task);
  // c[rows, w.out] = act(a[rows, w.in] (lda) W + bias), each worker applying act on its columns.
  void linear(Path path, const float* a, std::size_t lda, std::size_t rows, const Tensor& w, const Tensor& bias,
              float* c, std::size_t ldc, Act act = Act::none);
  void product(Path path, const WideGemmArgs& g, Act act);
  // Products of the same A (same a, lda, m, k: Q, K and V apart, gate and up) as one parallel
  // step: every column of each computed as product() computes it, one wait for the lot.
  void products(Path path, const WideGemmArgs* g, std::size_t count);
  enum class Gate { none, swiglu, geglu };
  void run_products(Path path, const WideGemmArgs* g, std::size_t count, Act act, Gate gate);
  // linear() for each of weights w[i], biases bias[i] into c[i] (same a and ldc): one step. With
  // a gate, w = {gate, up} and c[0] = gate(c[0]) * c[1] in the same step.
  void linears(Path path, const float* a, std::size_t lda, std::size_t rows, std::size_t count,
               const Tensor* const* w, const Tensor* const* bias, float* const* c, std::size_t ldc,
               Gate gate = Gate::none);
  // y[rows, d] = the block's norm of x with weight w (and bias b for LayerNorm).
  void norm(Path path, const Tensor& w, const Tensor& b, const float* x, float* y, std::size_t rows);
  void mlp(Path path, const Layer& y, const float* a, std::size_t rows, float* out);
  // heads_out: rows t0..t-1 of every head's output, [t - t0, H * d_k]. cache nullptr: q, k, v of
  // every position 0..t-1 in qkv's rows. cache (t0 > 0): qkv holds rows t0..t-1 only (their q), and
  // the keys and values of positions 0..t-1 are one layer's part of kv_ ([rows][kv_width()]).
  void attend(Path path, std::size_t l, std::size_t t0, std::size_t t, const float* qkv, const float* cache,
              const std::uint8_t* ablate, float* attention_out, float* heads_out);
  void attend_head(Path path, std::size_t l, std::size_t h, std::size_t t0, std::size_t t, const float* qkv,
                   const float* cache, const std::uint8_t* ablate, float* attention_out, float* heads_out,
                   std::size_t worker);
  // One layer's q, k, v for `seqs` sequences of n rows each (rows at positions p0..p0+n-1; the
  // rotary tables in rope_cos_ / rope_sin_ are those rows'): x [seqs * n, d] -> qkv [seqs * n, qkv_width()].
  void layer_qkv(Path path, std::size_t l, float* x, std::size_t seqs, std::size_t n, float* qkv);
  // The rest of a layer after attention: x [rows, d] += heads [rows, H * d_k] W_o (+ b) and the MLP
  // (sequential, parallel or post-norm). mlp_at: where the MLP's output row `trace->at` is kept.
  void layer_rest(Path path, std::size_t l, float* x, const float* heads, std::size_t rows, Trace* trace);
  // The causal tools' parts (pretrained_causal.cpp).
  void trace_run(Path path, const std::int32_t* tokens, std::size_t t, const PretrainedRunOptions& options,
                 PretrainedRunResult* result, Trace* trace);
  std::string run_patched(const std::int32_t* tokens, std::size_t t, const PretrainedRunOptions& options,
                          PretrainedRunResult* result, Path path);
  void unembed_difference(std::int32_t answer, std::int32_t wrong, std::vector<float>* u, float* bias) const;
  std::string patch_continue(Path path, std::size_t l, std::size_t seqs, float* metrics);
  std::string check(const std::int32_t* tokens, std::size_t t) const;
  std::string check_types(const std::int32_t* types, std::size_t t) const;  // "" for nullptr
  void forward(const std::int32_t* tokens, std::size_t t0, std::size_t t, const PretrainedRunOptions& options,
               PretrainedRunResult* result, Path path, bool cache, Trace* trace = nullptr,
               const float* patch_z = nullptr);
  void lens_layer(Path path, std::size_t l, std::size_t t, std::size_t k, PretrainedRunResult* r);
  // out[rows, d] = what the unembedding reads: norm_f(x), or the masked-LM head's transform.
  void head(Path path, const float* x, std::size_t rows, float* out);
  const Tensor& unembedding() const;
  std::size_t qkv_width() const;
  // A cached row: key-value head j's key at j * d_k, its value at (kv_heads + j) * d_k.
  std::size_t kv_width() const;
  std::size_t fc_width() const;

  PretrainedConfig config_;
  BlockSpec block_;
  std::vector<Layer> layers_;
  Tensor globals_[kGlobals];
  std::map<std::string, Slot> slots_;
  std::vector<File> files_;
  std::vector<float> vectors_;  // widened LayerNorm parameters and biases
  bool ready_ = false;

  std::unique_ptr<PretrainedPool> pool_;

  // Activations, grown to the largest t asked. kt_, gws_, aws_: one part per
  // worker, of kt_part_, gws_part_, aws_part_ floats.
  std::vector<float> x_, ln_, stats_, qkv_, heads_, tmp_, tmp2_, fc_, logits_, scores_, kt_, gws_, aws_;
  std::vector<float> rope_cos_, rope_sin_;  // [T, rot_dim / 2] for the rows of a call
  // With more than one worker: A of a product on packed weights, packed once for every chunk.
  std::vector<float> apack_;
  std::size_t kt_part_ = 0, gws_part_ = 0, aws_part_ = 0;
  // generate(): each layer's keys (rotated) and values [layers][kv_rows_][kv_width()], freed when
  // it returns.
  std::vector<float> kv_;
  std::size_t kv_rows_ = 0;
  std::unique_ptr<PatchSession> patch_;  // between patch_heads_begin and patch_heads_end
};

}  // namespace headlab
