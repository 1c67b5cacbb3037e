// A one-layer attention model small enough to train in a browser tab:
//   X = E[token] + P[position]                          [T, d_model]
//   H = X + MultiHead(X)                                 residual, one layer
//   logits_r = H[query] W_r + c_r,  r = 1..R             [vocab] each
//   loss = mean over batch and relations of -log softmax(logits_r)[answer_r]
// Only the query row of H reaches the loss, so the forward pass attends from
// that one row (t_q = 1 against t_k = T keys); a causal mask becomes a key mask
// hiding keys after the query. attention_map() gives the full [h, T, T] map.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "headlab/kernels.hpp"
#include "headlab/mha.hpp"
#include "headlab/mha_backward.hpp"
#include "headlab/tasks.hpp"
#include "headlab/train/optimizer.hpp"

namespace headlab {

struct ModelConfig {
  std::size_t vocab = 0;
  std::size_t seq_len = 0;
  std::size_t num_relations = 0;
  std::size_t d_model = 0;
  std::size_t num_heads = 0;  // d_k = d_v = d_model / num_heads
  bool causal = false;
  std::size_t max_batch = 0;  // largest batch forward() accepts
};

// Every parameter lives in one float buffer, in this order (offsets in floats):
//   tok_emb [vocab, d_model], pos_emb [seq_len, d_model],
//   w_q, w_k, w_v [d_model, d_model] (head i in columns i*d_k..), w_o [d_model, d_model],
//   b_q, b_k, b_v, b_o [d_model],
//   w_read [d_model, R*vocab] (relation r in columns r*vocab..), b_read [R*vocab].
struct ParamLayout {
  std::size_t tok_emb, pos_emb, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, w_read, b_read, total;
};
ParamLayout param_layout(const ModelConfig& config);

struct BatchResult {
  float loss = 0;  // mean cross-entropy over examples and relations
  std::size_t examples = 0;
  std::size_t all_right = 0;                      // examples with every relation's argmax right
  std::size_t answers_right[kMaxRelations] = {};  // per relation
};

class Model {
 public:
  // Allocates every buffer for config.max_batch; no allocation afterwards.
  // The config must be valid (num_heads divides d_model, sizes positive).
  explicit Model(const ModelConfig& config);

  // Bytes the constructor allocates for `config` (parameters, gradients and
  // every activation buffer), so callers can refuse a model that cannot fit.
  static std::size_t buffer_bytes(const ModelConfig& config);
  Model(const Model&) = delete;  // cache_ points into cache_store_
  Model& operator=(const Model&) = delete;

  const ModelConfig& config() const { return config_; }
  const ParamLayout& layout() const { return layout_; }
  std::size_t num_params() const { return layout_.total; }
  float* params() { return params_.data(); }
  const float* params() const { return params_.data(); }
  const float* grads() const { return grads_.data(); }

  // Token and position embeddings N(0, 1/2), so X = E + P has unit variance
  // (with N(0, 1) each, some seeds settle on two heads that both blend both
  // positions); W^Q, W^K, W^V N(0, 1/(2 d)) (PyTorch's xavier scale for its
  // packed in-projection); W^O, W_r, c_r N(0, 1/(3 d)) (the std of PyTorch's
  // default Linear init); attention biases 0. Draws from rng in that order.
  void init(Rng& rng);

  // A disabled head's output is zeroed before W^O (training and evaluation).
  void set_head_enabled(std::size_t head, bool on) { head_enabled_[head] = on ? 1 : 0; }
  bool head_enabled(std::size_t head) const { return head_enabled_[head] != 0; }

  // Rows [0, n) of `batch` (n <= max_batch). With `backward`, grads() becomes
  // d loss / d params for that batch.
  BatchResult forward(const TaskBatch& batch, std::size_t n, bool backward, Path path = Path::simd);

  // From the last forward: attention weights of the query row [n, h, seq_len]
  // and the output probabilities [n, R, vocab].
  const float* query_weights() const { return cache_.weights; }
  const float* probabilities() const { return probs_.data(); }

  // Full self-attention map of one sequence, every query row: out [h, T, T].
  // Uses mha_forward; weights do not depend on which heads are enabled.
  void attention_map(const std::int32_t* tokens, float* out);

 private:
  void embed(const TaskBatch& batch, std::size_t n, Path path);

  ModelConfig config_;
  ParamLayout layout_;
  MhaShape shape_;  // t_q = 1, t_k = seq_len
  std::vector<float> params_, grads_;
  std::vector<std::uint8_t> head_enabled_;
  // Activations for max_batch examples.
  std::vector<float> x_;                // [B*T, d] embeddings
  std::vector<float> xq_;               // [B, d] embeddings at the query
  std::vector<std::uint8_t> key_mask_;  // [B, T] when causal
  std::vector<float> cache_store_;
  MhaCache cache_;
  std::vector<float> attn_;   // [B, d] attention output at the query
  std::vector<float> h_;      // [B, d] H at the query
  std::vector<float> probs_;  // [B, R*vocab] logits, then softmax
  // Backward.
  std::vector<float> dlogits_;    // [B, R*vocab]
  std::vector<float> dh_;         // [B, d]
  std::vector<float> dxq_;        // [B, d]
  std::vector<float> dx_;         // [B*T, d]
  std::vector<float> fws_, bws_;  // attention workspaces
  // attention_map().
  std::vector<float> map_x_, map_out_, map_ws_;
};

}  // namespace headlab
