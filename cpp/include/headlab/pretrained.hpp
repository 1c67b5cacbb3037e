// Inference for pretrained GPT-2 (GPT2LMHeadModel) and GPT-Neo (GPTNeoForCausalLM)
// checkpoints read from safetensors files, on the kernels the language models use
// (LayerNorm, GELU, the fused attention, GEMM) plus pretrained_kernels.hpp for
// weights kept as stored (float32/float16/bfloat16, [in, out] or [out, in]).
//
//   X_0 = wte[token] + wpe[position]                                   [T, d]
//   per block l:  A = LN1(X);  Q, K, V = A W_q (+ b), A W_k (+ b), A W_v (+ b)
//                 head h: O_h = softmax(mask(Q_h K_h^T * s)) V_h        s = 1/sqrt(d_k) (GPT-2) or 1
//                 (GPT-Neo) mask: causal; a local layer (window w > 0) lets query i see keys i - w < j <= i
//                 an ablated head's O_h is zero; M = X + concat(O) W_o + b_o
//                 X' = M + GELU_tanh(LN2(M) W_fc + b_fc) W_proj + b_proj
//   logits = LN_f(X_L) wte^T                                            [T, V] (tied unembedding)
//
// Weights: GPT-2's Conv1D stores [in, out] with q, k, v fused in c_attn ([d, 3d]);
// GPT-Neo's nn.Linear stores [out, in] with separate q/k/v projections and no
// q/k/v bias. Matrices are used where they lie in the file buffers (no copy);
// vectors (LayerNorm parameters, biases) are widened to float32 at finish(), and
// float32 matrices (wte included) are rearranged in place, once, into the panels
// the packed GEMM reads (gemm.hpp's packed_b_index), which every reader of them
// then reads: the products, the embedding lookup, the unembedding (16-bit
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

#include "headlab/pretrained_kernels.hpp"
#include "headlab/pretrained_pool.hpp"

namespace headlab {

enum class PretrainedArch { gpt2, gpt_neo };

struct PretrainedConfig {
  PretrainedArch architecture = PretrainedArch::gpt2;
  std::size_t num_layers = 0, num_heads = 0, d_model = 0, d_ff = 0, vocab = 0, context = 0;
  float ln_eps = 1e-5f;
  bool scale_scores = true;          // 1/sqrt(d_k) (GPT-2); GPT-Neo does not scale
  std::vector<std::size_t> windows;  // per layer; 0 = global, w > 0 = local with window w
  std::string dtype;                 // "" (any) or the dtype every tensor must have: F32, F16, BF16
};

// "" when valid, else a message naming the field.
std::string pretrained_config_error(const PretrainedConfig& c);

struct PretrainedRunOptions {
  bool attention = false;                // materialise [L, H, T, T]
  bool all_logits = false;               // [T, V] rather than the last position's [V]
  const std::uint8_t* ablate = nullptr;  // [L * H], 1 = head switched off; or nullptr
  bool lens = false;                     // logit lens: top lens_top_k per layer and position
  std::size_t lens_top_k = 5;
};

struct PretrainedRunResult {
  std::vector<float> logits;           // [T, V] or [V]
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
  // with a generator seeded by `seed`. Stops before stop_id (< 0: never).
  std::string generate(const std::int32_t* tokens, std::size_t t, std::size_t max_tokens, float temperature,
                       std::uint64_t seed, std::int32_t stop_id, std::vector<std::int32_t>* out,
                       Path path = Path::simd);

  // Bytes of activations and workspace one run over t tokens uses (with lens and attention as asked).
  std::size_t activation_bytes(std::size_t t, bool attention, bool all_logits, bool lens) const;

  struct Tensor {
    const void* data = nullptr;
    DType dtype = DType::f32;
    bool present = false;
    bool packed = false;  // float32 matrix in the packed GEMM's panels (finish())
  };

 private:
  struct Slot;
  struct Layer {
    Tensor ln1_g, ln1_b, ln2_g, ln2_b;
    Tensor qkv_w, qkv_b;   // GPT-2: c_attn [d, 3d] and its bias
    Tensor q_w, k_w, v_w;  // GPT-Neo: [d, d] each, [out, in]
    Tensor o_w, o_b, fc_w, fc_b, proj_w, proj_b;
    // Widened at finish():
    const float *ln1g, *ln1b, *ln2g, *ln2b, *qkvb, *ob, *fcb, *projb;
  };
  struct File {
    std::uint8_t* data = nullptr;
    std::size_t bytes = 0;
    bool added = false;
  };

  void build_slots();
  void reserve(std::size_t t, bool attention, bool all_logits, bool lens);
  // task(chunk, worker) for every chunk in [0, chunks), spread over the workers (the pool's,
  // or worker 0 alone); each worker uses its own workspace part.
  void parallel(std::size_t chunks, const PretrainedPool::Task& task);
  // gelu: GELU applied to c after the bias (each worker on its columns).
  void linear(Path path, const float* a, std::size_t rows, const Tensor& w, std::size_t in, std::size_t out,
              const float* bias, float* c, std::size_t ldc, bool gelu = false);
  void product(Path path, const WideGemmArgs& g, bool gelu);
  void attend(Path path, std::size_t l, std::size_t t0, std::size_t t, const float* qkv,
              const std::uint8_t* ablate, float* attention_out);
  void attend_head(Path path, std::size_t l, std::size_t h, std::size_t t0, std::size_t t, const float* qkv,
                   const std::uint8_t* ablate, float* attention_out, std::size_t worker);
  std::string check(const std::int32_t* tokens, std::size_t t) const;
  void forward(const std::int32_t* tokens, std::size_t t0, std::size_t t, const PretrainedRunOptions& options,
               PretrainedRunResult* result, Path path, bool cache);
  void lens_layer(Path path, std::size_t l, std::size_t t, std::size_t k, PretrainedRunResult* r);

  PretrainedConfig config_;
  std::vector<Layer> layers_;
  Tensor wte_, wpe_, lnf_g_, lnf_b_;
  const float *lnfg_ = nullptr, *lnfb_ = nullptr;
  std::map<std::string, Slot> slots_;
  std::vector<File> files_;
  std::vector<float> vectors_;  // widened LayerNorm parameters and biases
  bool ready_ = false;

  std::unique_ptr<PretrainedPool> pool_;

  // Activations, grown to the largest t asked. kt_, gws_, aws_: one part per
  // worker, of kt_part_, gws_part_, aws_part_ floats.
  std::vector<float> x_, ln_, stats_, qkv_, heads_, tmp_, fc_, logits_, scores_, kt_, gws_, aws_;
  // With more than one worker: A of a product on packed weights, packed once for every chunk.
  std::vector<float> apack_;
  std::size_t kt_part_ = 0, gws_part_ = 0, aws_part_ = 0;
  // generate(): q, k, v [layers][kv_rows_][3 d], freed when it returns.
  std::vector<float> kv_;
  std::size_t kv_rows_ = 0;
};

}  // namespace headlab
