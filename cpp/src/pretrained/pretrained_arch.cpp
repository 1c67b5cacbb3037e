#include "pretrained_arch.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>

namespace headlab {
namespace arch {

namespace {

using M = PretrainedModel;
using L = Layout;

constexpr bool kLayer = true, kGlobal = false;

// ---------------------------------------------------------------- tables

const TensorEntry kGpt2[] = {
    {"wte.weight", M::embed, kGlobal, L::embed, Dim::v, Dim::d},
    {"wpe.weight", M::pos_embed, kGlobal, L::embed, Dim::n, Dim::d},
    {"ln_f.weight", M::final_w, kGlobal, L::vector, Dim::d, Dim::none},
    {"ln_f.bias", M::final_b, kGlobal, L::vector, Dim::d, Dim::none},
    {"lm_head.weight", -1, kGlobal, L::checked, Dim::v, Dim::d},
    {"h.{}.ln_1.weight", M::norm1_w, kLayer, L::vector, Dim::d, Dim::none},
    {"h.{}.ln_1.bias", M::norm1_b, kLayer, L::vector, Dim::d, Dim::none},
    {"h.{}.ln_2.weight", M::norm2_w, kLayer, L::vector, Dim::d, Dim::none},
    {"h.{}.ln_2.bias", M::norm2_b, kLayer, L::vector, Dim::d, Dim::none},
    {"h.{}.attn.c_attn.weight", M::qkv_w, kLayer, L::in_out, Dim::d, Dim::qkv},
    {"h.{}.attn.c_attn.bias", M::qkv_b, kLayer, L::vector, Dim::qkv, Dim::none},
    {"h.{}.attn.c_proj.weight", M::o_w, kLayer, L::in_out, Dim::q, Dim::d},
    {"h.{}.attn.c_proj.bias", M::o_b, kLayer, L::vector, Dim::d, Dim::none},
    {"h.{}.mlp.c_fc.weight", M::up_w, kLayer, L::in_out, Dim::d, Dim::f},
    {"h.{}.mlp.c_fc.bias", M::up_b, kLayer, L::vector, Dim::f, Dim::none},
    {"h.{}.mlp.c_proj.weight", M::down_w, kLayer, L::in_out, Dim::f, Dim::d},
    {"h.{}.mlp.c_proj.bias", M::down_b, kLayer, L::vector, Dim::d, Dim::none},
    {"h.{}.attn.bias", -1, kLayer, L::ignored, Dim::none, Dim::none},
    {"h.{}.attn.masked_bias", -1, kLayer, L::ignored, Dim::none, Dim::none},
};

const TensorEntry kGptNeo[] = {
    {"wte.weight", M::embed, kGlobal, L::embed, Dim::v, Dim::d},
    {"wpe.weight", M::pos_embed, kGlobal, L::embed, Dim::n, Dim::d},
    {"ln_f.weight", M::final_w, kGlobal, L::vector, Dim::d, Dim::none},
    {"ln_f.bias", M::final_b, kGlobal, L::vector, Dim::d, Dim::none},
    {"lm_head.weight", -1, kGlobal, L::checked, Dim::v, Dim::d},
    {"h.{}.ln_1.weight", M::norm1_w, kLayer, L::vector, Dim::d, Dim::none},
    {"h.{}.ln_1.bias", M::norm1_b, kLayer, L::vector, Dim::d, Dim::none},
    {"h.{}.ln_2.weight", M::norm2_w, kLayer, L::vector, Dim::d, Dim::none},
    {"h.{}.ln_2.bias", M::norm2_b, kLayer, L::vector, Dim::d, Dim::none},
    {"h.{}.attn.attention.q_proj.weight", M::q_w, kLayer, L::out_in, Dim::q, Dim::d},
    {"h.{}.attn.attention.k_proj.weight", M::k_w, kLayer, L::out_in, Dim::kv, Dim::d},
    {"h.{}.attn.attention.v_proj.weight", M::v_w, kLayer, L::out_in, Dim::kv, Dim::d},
    {"h.{}.attn.attention.out_proj.weight", M::o_w, kLayer, L::out_in, Dim::d, Dim::q},
    {"h.{}.attn.attention.out_proj.bias", M::o_b, kLayer, L::vector, Dim::d, Dim::none},
    {"h.{}.mlp.c_fc.weight", M::up_w, kLayer, L::out_in, Dim::f, Dim::d},
    {"h.{}.mlp.c_fc.bias", M::up_b, kLayer, L::vector, Dim::f, Dim::none},
    {"h.{}.mlp.c_proj.weight", M::down_w, kLayer, L::out_in, Dim::d, Dim::f},
    {"h.{}.mlp.c_proj.bias", M::down_b, kLayer, L::vector, Dim::d, Dim::none},
    {"h.{}.attn.attention.bias", -1, kLayer, L::ignored, Dim::none, Dim::none},
    {"h.{}.attn.attention.masked_bias", -1, kLayer, L::ignored, Dim::none, Dim::none},
};

// Llama's names (Mistral's and Gemma's too; Qwen2 adds q/k/v biases).
#define HEADLAB_LLAMA_COMMON                                                                                   \
  {"embed_tokens.weight", M::embed, kGlobal, L::embed, Dim::v, Dim::d},                                       \
      {"norm.weight", M::final_w, kGlobal, L::vector, Dim::d, Dim::none},                                     \
      {"lm_head.weight", M::unembed, kGlobal, L::out_in, Dim::v, Dim::d, When::untied},                       \
      {"lm_head.weight", -1, kGlobal, L::checked, Dim::v, Dim::d, When::tied},                                \
      {"layers.{}.input_layernorm.weight", M::norm1_w, kLayer, L::vector, Dim::d, Dim::none},                 \
      {"layers.{}.post_attention_layernorm.weight", M::norm2_w, kLayer, L::vector, Dim::d, Dim::none},        \
      {"layers.{}.self_attn.q_proj.weight", M::q_w, kLayer, L::out_in, Dim::q, Dim::d},                       \
      {"layers.{}.self_attn.k_proj.weight", M::k_w, kLayer, L::out_in, Dim::kv, Dim::d},                      \
      {"layers.{}.self_attn.v_proj.weight", M::v_w, kLayer, L::out_in, Dim::kv, Dim::d},                      \
      {"layers.{}.self_attn.o_proj.weight", M::o_w, kLayer, L::out_in, Dim::d, Dim::q},                       \
      {"layers.{}.mlp.gate_proj.weight", M::gate_w, kLayer, L::out_in, Dim::f, Dim::d},                       \
      {"layers.{}.mlp.up_proj.weight", M::up_w, kLayer, L::out_in, Dim::f, Dim::d},                           \
      {"layers.{}.mlp.down_proj.weight", M::down_w, kLayer, L::out_in, Dim::d, Dim::f},                       \
      {"layers.{}.self_attn.rotary_emb.inv_freq", -1, kLayer, L::ignored, Dim::none, Dim::none}

const TensorEntry kLlama[] = {
    HEADLAB_LLAMA_COMMON,
    {"layers.{}.self_attn.q_proj.bias", M::q_b, kLayer, L::vector, Dim::q, Dim::none, When::attention_bias},
    {"layers.{}.self_attn.k_proj.bias", M::k_b, kLayer, L::vector, Dim::kv, Dim::none, When::attention_bias},
    {"layers.{}.self_attn.v_proj.bias", M::v_b, kLayer, L::vector, Dim::kv, Dim::none, When::attention_bias},
    {"layers.{}.self_attn.o_proj.bias", M::o_b, kLayer, L::vector, Dim::d, Dim::none, When::attention_bias},
    {"layers.{}.mlp.gate_proj.bias", M::gate_b, kLayer, L::vector, Dim::f, Dim::none, When::mlp_bias},
    {"layers.{}.mlp.up_proj.bias", M::up_b, kLayer, L::vector, Dim::f, Dim::none, When::mlp_bias},
    {"layers.{}.mlp.down_proj.bias", M::down_b, kLayer, L::vector, Dim::d, Dim::none, When::mlp_bias},
};

const TensorEntry kQwen2[] = {
    HEADLAB_LLAMA_COMMON,
    {"layers.{}.self_attn.q_proj.bias", M::q_b, kLayer, L::vector, Dim::q, Dim::none},
    {"layers.{}.self_attn.k_proj.bias", M::k_b, kLayer, L::vector, Dim::kv, Dim::none},
    {"layers.{}.self_attn.v_proj.bias", M::v_b, kLayer, L::vector, Dim::kv, Dim::none},
};

const TensorEntry kMistralGemma[] = {HEADLAB_LLAMA_COMMON};

#undef HEADLAB_LLAMA_COMMON

const TensorEntry kPhi3[] = {
    {"embed_tokens.weight", M::embed, kGlobal, L::embed, Dim::v, Dim::d},
    {"norm.weight", M::final_w, kGlobal, L::vector, Dim::d, Dim::none},
    {"lm_head.weight", M::unembed, kGlobal, L::out_in, Dim::v, Dim::d, When::untied},
    {"lm_head.weight", -1, kGlobal, L::checked, Dim::v, Dim::d, When::tied},
    {"layers.{}.input_layernorm.weight", M::norm1_w, kLayer, L::vector, Dim::d, Dim::none},
    {"layers.{}.post_attention_layernorm.weight", M::norm2_w, kLayer, L::vector, Dim::d, Dim::none},
    {"layers.{}.self_attn.qkv_proj.weight", M::qkv_w, kLayer, L::out_in, Dim::qkv, Dim::d},
    {"layers.{}.self_attn.o_proj.weight", M::o_w, kLayer, L::out_in, Dim::d, Dim::q},
    {"layers.{}.mlp.gate_up_proj.weight", M::gate_up_w, kLayer, L::out_in, Dim::f2, Dim::d},
    {"layers.{}.mlp.down_proj.weight", M::down_w, kLayer, L::out_in, Dim::d, Dim::f},
};

const TensorEntry kGptNeox[] = {
    {"embed_in.weight", M::embed, kGlobal, L::embed, Dim::v, Dim::d},
    {"final_layer_norm.weight", M::final_w, kGlobal, L::vector, Dim::d, Dim::none},
    {"final_layer_norm.bias", M::final_b, kGlobal, L::vector, Dim::d, Dim::none},
    {"embed_out.weight", M::unembed, kGlobal, L::out_in, Dim::v, Dim::d, When::untied},
    {"embed_out.weight", -1, kGlobal, L::checked, Dim::v, Dim::d, When::tied},
    {"layers.{}.input_layernorm.weight", M::norm1_w, kLayer, L::vector, Dim::d, Dim::none},
    {"layers.{}.input_layernorm.bias", M::norm1_b, kLayer, L::vector, Dim::d, Dim::none},
    {"layers.{}.post_attention_layernorm.weight", M::norm2_w, kLayer, L::vector, Dim::d, Dim::none},
    {"layers.{}.post_attention_layernorm.bias", M::norm2_b, kLayer, L::vector, Dim::d, Dim::none},
    // Rows interleaved per head: [head][q, k, v][d_k] (BlockSpec's bases and strides).
    {"layers.{}.attention.query_key_value.weight", M::qkv_w, kLayer, L::out_in, Dim::qkv, Dim::d},
    {"layers.{}.attention.query_key_value.bias", M::qkv_b, kLayer, L::vector, Dim::qkv, Dim::none},
    {"layers.{}.attention.dense.weight", M::o_w, kLayer, L::out_in, Dim::d, Dim::q},
    {"layers.{}.attention.dense.bias", M::o_b, kLayer, L::vector, Dim::d, Dim::none},
    {"layers.{}.mlp.dense_h_to_4h.weight", M::up_w, kLayer, L::out_in, Dim::f, Dim::d},
    {"layers.{}.mlp.dense_h_to_4h.bias", M::up_b, kLayer, L::vector, Dim::f, Dim::none},
    {"layers.{}.mlp.dense_4h_to_h.weight", M::down_w, kLayer, L::out_in, Dim::d, Dim::f},
    {"layers.{}.mlp.dense_4h_to_h.bias", M::down_b, kLayer, L::vector, Dim::d, Dim::none},
    {"layers.{}.attention.bias", -1, kLayer, L::ignored, Dim::none, Dim::none},
    {"layers.{}.attention.masked_bias", -1, kLayer, L::ignored, Dim::none, Dim::none},
    {"layers.{}.attention.rotary_emb.inv_freq", -1, kLayer, L::ignored, Dim::none, Dim::none},
};

// BERT and RoBERTa: the same encoder layers; bert-base-uncased's own file names its norms
// gamma / beta (N, B), RoBERTa weight / bias. The pooler and the next-sentence head are ignored.
#define HEADLAB_BERT_COMMON(N, B)                                                                              \
  {"embeddings.word_embeddings.weight", M::embed, kGlobal, L::embed, Dim::v, Dim::d},                         \
      {"embeddings.position_embeddings.weight", M::pos_embed, kGlobal, L::embed, Dim::n, Dim::d},             \
      {"embeddings.token_type_embeddings.weight", M::type_embed, kGlobal, L::embed, Dim::types, Dim::d},      \
      {"embeddings.LayerNorm." N, M::embed_norm_w, kGlobal, L::vector, Dim::d, Dim::none},                    \
      {"embeddings.LayerNorm." B, M::embed_norm_b, kGlobal, L::vector, Dim::d, Dim::none},                    \
      {"embeddings.position_ids", -1, kGlobal, L::ignored, Dim::none, Dim::none},                             \
      {"encoder.layer.{}.attention.self.query.weight", M::q_w, kLayer, L::out_in, Dim::q, Dim::d},            \
      {"encoder.layer.{}.attention.self.query.bias", M::q_b, kLayer, L::vector, Dim::q, Dim::none},           \
      {"encoder.layer.{}.attention.self.key.weight", M::k_w, kLayer, L::out_in, Dim::kv, Dim::d},             \
      {"encoder.layer.{}.attention.self.key.bias", M::k_b, kLayer, L::vector, Dim::kv, Dim::none},            \
      {"encoder.layer.{}.attention.self.value.weight", M::v_w, kLayer, L::out_in, Dim::kv, Dim::d},           \
      {"encoder.layer.{}.attention.self.value.bias", M::v_b, kLayer, L::vector, Dim::kv, Dim::none},          \
      {"encoder.layer.{}.attention.output.dense.weight", M::o_w, kLayer, L::out_in, Dim::d, Dim::q},          \
      {"encoder.layer.{}.attention.output.dense.bias", M::o_b, kLayer, L::vector, Dim::d, Dim::none},         \
      {"encoder.layer.{}.attention.output.LayerNorm." N, M::norm1_w, kLayer, L::vector, Dim::d, Dim::none},   \
      {"encoder.layer.{}.attention.output.LayerNorm." B, M::norm1_b, kLayer, L::vector, Dim::d, Dim::none},   \
      {"encoder.layer.{}.intermediate.dense.weight", M::up_w, kLayer, L::out_in, Dim::f, Dim::d},             \
      {"encoder.layer.{}.intermediate.dense.bias", M::up_b, kLayer, L::vector, Dim::f, Dim::none},            \
      {"encoder.layer.{}.output.dense.weight", M::down_w, kLayer, L::out_in, Dim::d, Dim::f},                 \
      {"encoder.layer.{}.output.dense.bias", M::down_b, kLayer, L::vector, Dim::d, Dim::none},                \
      {"encoder.layer.{}.output.LayerNorm." N, M::norm2_w, kLayer, L::vector, Dim::d, Dim::none},             \
      {"encoder.layer.{}.output.LayerNorm." B, M::norm2_b, kLayer, L::vector, Dim::d, Dim::none},             \
      {"pooler.dense.weight", -1, kGlobal, L::ignored, Dim::none, Dim::none},                                 \
      {"pooler.dense.bias", -1, kGlobal, L::ignored, Dim::none, Dim::none}

// The masked-LM head: transform (head_w, head_b), its LayerNorm (final_w, final_b), the
// decoder tied to the word embeddings with its own bias (unembed_b).
const TensorEntry kBert[] = {
    HEADLAB_BERT_COMMON("gamma", "beta"),
    {"cls.predictions.transform.dense.weight", M::head_w, kGlobal, L::out_in, Dim::d, Dim::d},
    {"cls.predictions.transform.dense.bias", M::head_b, kGlobal, L::vector, Dim::d, Dim::none},
    {"cls.predictions.transform.LayerNorm.gamma", M::final_w, kGlobal, L::vector, Dim::d, Dim::none},
    {"cls.predictions.transform.LayerNorm.beta", M::final_b, kGlobal, L::vector, Dim::d, Dim::none},
    {"cls.predictions.bias", M::unembed_b, kGlobal, L::vector, Dim::v, Dim::none},
    {"cls.predictions.decoder.weight", -1, kGlobal, L::checked, Dim::v, Dim::d},
    {"cls.predictions.decoder.bias", -1, kGlobal, L::ignored, Dim::none, Dim::none},
    {"cls.seq_relationship.weight", -1, kGlobal, L::ignored, Dim::none, Dim::none},
    {"cls.seq_relationship.bias", -1, kGlobal, L::ignored, Dim::none, Dim::none},
};

const char* const kBertRenames[][2] = {{"LayerNorm.weight", "LayerNorm.gamma"},
                                       {"LayerNorm.bias", "LayerNorm.beta"}};

const TensorEntry kRoberta[] = {
    HEADLAB_BERT_COMMON("weight", "bias"),
    {"lm_head.dense.weight", M::head_w, kGlobal, L::out_in, Dim::d, Dim::d},
    {"lm_head.dense.bias", M::head_b, kGlobal, L::vector, Dim::d, Dim::none},
    {"lm_head.layer_norm.weight", M::final_w, kGlobal, L::vector, Dim::d, Dim::none},
    {"lm_head.layer_norm.bias", M::final_b, kGlobal, L::vector, Dim::d, Dim::none},
    {"lm_head.bias", M::unembed_b, kGlobal, L::vector, Dim::v, Dim::none},
    {"lm_head.decoder.weight", -1, kGlobal, L::checked, Dim::v, Dim::d},
    {"lm_head.decoder.bias", -1, kGlobal, L::ignored, Dim::none, Dim::none},
};

// BertModel (sentence-transformers and many fine-tunes): the encoder and the pooler, no masked-LM
// head; names without the bert. prefix as BertModel saves them (with it, as a converted file has
// them, read the same).
const TensorEntry kBertModel[] = {HEADLAB_BERT_COMMON("gamma", "beta")};

#undef HEADLAB_BERT_COMMON

const TensorEntry kDistilBert[] = {
    {"embeddings.word_embeddings.weight", M::embed, kGlobal, L::embed, Dim::v, Dim::d},
    {"embeddings.position_embeddings.weight", M::pos_embed, kGlobal, L::embed, Dim::n, Dim::d},
    {"embeddings.LayerNorm.weight", M::embed_norm_w, kGlobal, L::vector, Dim::d, Dim::none},
    {"embeddings.LayerNorm.bias", M::embed_norm_b, kGlobal, L::vector, Dim::d, Dim::none},
    {"embeddings.position_ids", -1, kGlobal, L::ignored, Dim::none, Dim::none},
    {"transformer.layer.{}.attention.q_lin.weight", M::q_w, kLayer, L::out_in, Dim::q, Dim::d},
    {"transformer.layer.{}.attention.q_lin.bias", M::q_b, kLayer, L::vector, Dim::q, Dim::none},
    {"transformer.layer.{}.attention.k_lin.weight", M::k_w, kLayer, L::out_in, Dim::kv, Dim::d},
    {"transformer.layer.{}.attention.k_lin.bias", M::k_b, kLayer, L::vector, Dim::kv, Dim::none},
    {"transformer.layer.{}.attention.v_lin.weight", M::v_w, kLayer, L::out_in, Dim::kv, Dim::d},
    {"transformer.layer.{}.attention.v_lin.bias", M::v_b, kLayer, L::vector, Dim::kv, Dim::none},
    {"transformer.layer.{}.attention.out_lin.weight", M::o_w, kLayer, L::out_in, Dim::d, Dim::q},
    {"transformer.layer.{}.attention.out_lin.bias", M::o_b, kLayer, L::vector, Dim::d, Dim::none},
    {"transformer.layer.{}.sa_layer_norm.weight", M::norm1_w, kLayer, L::vector, Dim::d, Dim::none},
    {"transformer.layer.{}.sa_layer_norm.bias", M::norm1_b, kLayer, L::vector, Dim::d, Dim::none},
    {"transformer.layer.{}.ffn.lin1.weight", M::up_w, kLayer, L::out_in, Dim::f, Dim::d},
    {"transformer.layer.{}.ffn.lin1.bias", M::up_b, kLayer, L::vector, Dim::f, Dim::none},
    {"transformer.layer.{}.ffn.lin2.weight", M::down_w, kLayer, L::out_in, Dim::d, Dim::f},
    {"transformer.layer.{}.ffn.lin2.bias", M::down_b, kLayer, L::vector, Dim::d, Dim::none},
    {"transformer.layer.{}.output_layer_norm.weight", M::norm2_w, kLayer, L::vector, Dim::d, Dim::none},
    {"transformer.layer.{}.output_layer_norm.bias", M::norm2_b, kLayer, L::vector, Dim::d, Dim::none},
    {"vocab_transform.weight", M::head_w, kGlobal, L::out_in, Dim::d, Dim::d},
    {"vocab_transform.bias", M::head_b, kGlobal, L::vector, Dim::d, Dim::none},
    {"vocab_layer_norm.weight", M::final_w, kGlobal, L::vector, Dim::d, Dim::none},
    {"vocab_layer_norm.bias", M::final_b, kGlobal, L::vector, Dim::d, Dim::none},
    {"vocab_projector.bias", M::unembed_b, kGlobal, L::vector, Dim::v, Dim::none},
    {"vocab_projector.weight", -1, kGlobal, L::checked, Dim::v, Dim::d},
};

// HeadLab's own language models (cpp/include/headlab/lm.hpp): the parameter buffer's fields under
// these names (lm_tensor_names), every matrix [in, out]; an untied unembedding with a bias; the
// MLP's tensors only with mlp.
const TensorEntry kHeadlab[] = {
    {"tok_emb", M::embed, kGlobal, L::embed, Dim::v, Dim::d},
    {"pos_emb", M::pos_embed, kGlobal, L::embed, Dim::n, Dim::d},
    {"lnf_g", M::final_w, kGlobal, L::vector, Dim::d, Dim::none},
    {"lnf_b", M::final_b, kGlobal, L::vector, Dim::d, Dim::none},
    {"w_unembed", M::unembed, kGlobal, L::in_out, Dim::d, Dim::v},
    {"b_unembed", M::unembed_b, kGlobal, L::vector, Dim::v, Dim::none},
    {"layers.{}.ln1_g", M::norm1_w, kLayer, L::vector, Dim::d, Dim::none},
    {"layers.{}.ln1_b", M::norm1_b, kLayer, L::vector, Dim::d, Dim::none},
    {"layers.{}.w_q", M::q_w, kLayer, L::in_out, Dim::d, Dim::q},
    {"layers.{}.w_k", M::k_w, kLayer, L::in_out, Dim::d, Dim::kv},
    {"layers.{}.w_v", M::v_w, kLayer, L::in_out, Dim::d, Dim::kv},
    {"layers.{}.w_o", M::o_w, kLayer, L::in_out, Dim::q, Dim::d},
    {"layers.{}.b_q", M::q_b, kLayer, L::vector, Dim::q, Dim::none},
    {"layers.{}.b_k", M::k_b, kLayer, L::vector, Dim::kv, Dim::none},
    {"layers.{}.b_v", M::v_b, kLayer, L::vector, Dim::kv, Dim::none},
    {"layers.{}.b_o", M::o_b, kLayer, L::vector, Dim::d, Dim::none},
    {"layers.{}.ln2_g", M::norm2_w, kLayer, L::vector, Dim::d, Dim::none, When::mlp},
    {"layers.{}.ln2_b", M::norm2_b, kLayer, L::vector, Dim::d, Dim::none, When::mlp},
    {"layers.{}.w_fc", M::up_w, kLayer, L::in_out, Dim::d, Dim::f, When::mlp},
    {"layers.{}.b_fc", M::up_b, kLayer, L::vector, Dim::f, Dim::none, When::mlp},
    {"layers.{}.w_proj", M::down_w, kLayer, L::in_out, Dim::f, Dim::d, When::mlp},
    {"layers.{}.b_proj", M::down_b, kLayer, L::vector, Dim::d, Dim::none, When::mlp},
};

// ---------------------------------------------------------------- blocks

std::size_t head_dim(const PretrainedConfig& c) {
  return c.head_dim ? c.head_dim : c.d_model / c.num_heads;
}

std::size_t kv_heads(const PretrainedConfig& c) {
  return c.num_kv_heads ? c.num_kv_heads : c.num_heads;
}

// Q, K, V side by side in each row: [h d_k | g d_k | g d_k].
void side_by_side(BlockSpec* b) {
  b->q_base = 0;
  b->k_base = b->heads * b->head_dim;
  b->v_base = b->k_base + b->kv_heads * b->head_dim;
  b->q_stride = b->kv_stride = b->head_dim;
}

BlockSpec common(const PretrainedConfig& c) {
  BlockSpec b;
  b.eps = c.ln_eps;
  b.heads = c.num_heads;
  b.kv_heads = kv_heads(c);
  b.head_dim = head_dim(c);
  b.windows = c.windows;
  b.score_scale = 1.0f / std::sqrt(float(b.head_dim));
  side_by_side(&b);
  return b;
}

BlockSpec gpt2(const PretrainedConfig& c) {
  BlockSpec b = common(c);
  b.score_scale = c.scale_scores ? b.score_scale : 1.0f;
  b.fused_qkv = true;
  return b;
}

BlockSpec gpt_neo(const PretrainedConfig& c) {
  BlockSpec b = common(c);
  b.score_scale = c.scale_scores ? b.score_scale : 1.0f;  // GPT-Neo does not scale
  return b;
}

void rotary(const PretrainedConfig& c, BlockSpec* b) {
  b->positions = BlockSpec::Positions::rotary;
  std::size_t rot = std::size_t(double(b->head_dim) * c.rotary_fraction);
  b->rope = {rot - rot % 2, c.rope_theta, c.rope_factor, c.rope_low_freq_factor, c.rope_high_freq_factor,
             c.rope_original_context};
}

BlockSpec llama(const PretrainedConfig& c) {
  BlockSpec b = common(c);
  b.norm = BlockSpec::Norm::rms;
  rotary(c, &b);
  b.mlp = BlockSpec::Mlp::swiglu;
  return b;
}

BlockSpec phi3(const PretrainedConfig& c) {
  BlockSpec b = llama(c);
  b.fused_qkv = true;
  b.fused_gate_up = true;
  return b;
}

BlockSpec gemma(const PretrainedConfig& c) {
  BlockSpec b = llama(c);
  b.norm = BlockSpec::Norm::rms_one_plus;
  b.mlp = BlockSpec::Mlp::geglu;
  // sqrt(d_model) rounded to the weights' dtype, as Gemma multiplies in it.
  float s = std::sqrt(float(c.d_model));
  std::uint32_t bits;
  std::memcpy(&bits, &s, 4);
  if (c.dtype == "BF16") {
    bits = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;  // round to nearest even
  } else if (c.dtype == "F16") {
    bits = (bits + 0xfffu + ((bits >> 13) & 1u)) & 0xffffe000u;  // 10 mantissa bits (normal range)
  }
  std::memcpy(&s, &bits, 4);
  b.embed_scale = s;
  return b;
}

BlockSpec gpt_neox(const PretrainedConfig& c) {
  BlockSpec b = common(c);
  rotary(c, &b);
  b.fused_qkv = true;
  b.q_base = 0;
  b.k_base = b.head_dim;
  b.v_base = 2 * b.head_dim;
  b.q_stride = b.kv_stride = 3 * b.head_dim;
  b.parallel_residual = true;
  b.mlp = BlockSpec::Mlp::gelu_erf;
  return b;
}

// BERT, RoBERTa, DistilBERT: post-norm, bidirectional, LayerNorm after the embeddings, the MLM head.
BlockSpec encoder(const PretrainedConfig& c) {
  BlockSpec b = common(c);
  b.causal = false;
  b.post_norm = true;
  b.mlp = BlockSpec::Mlp::gelu_erf;
  b.embed_norm = true;
  b.mlm_head = true;
  b.position_offset = c.position_offset;
  return b;
}

// BertModel: the same encoder, no head: its output is the last hidden state.
BlockSpec encoder_without_head(const PretrainedConfig& c) {
  BlockSpec b = encoder(c);
  b.mlm_head = false;
  b.hidden_output = true;
  return b;
}

// HeadLab's language models: pre-LayerNorm, learned positions, causal, GELU tanh or no MLP.
BlockSpec headlab_lm(const PretrainedConfig& c) {
  BlockSpec b = common(c);
  if (!c.mlp) b.mlp = BlockSpec::Mlp::none;
  return b;
}

}  // namespace

template <std::size_t N>
constexpr std::size_t count(const TensorEntry (&)[N]) {
  return N;
}

const Architecture kArchitectures[] = {
    {"GPT2LMHeadModel", "transformer.", kGpt2, count(kGpt2), gpt2},
    {"GPTNeoForCausalLM", "transformer.", kGptNeo, count(kGptNeo), gpt_neo},
    {"LlamaForCausalLM", "model.", kLlama, count(kLlama), llama},
    {"Qwen2ForCausalLM", "model.", kQwen2, count(kQwen2), llama},
    {"MistralForCausalLM", "model.", kMistralGemma, count(kMistralGemma), llama},
    {"GPTNeoXForCausalLM", "gpt_neox.", kGptNeox, count(kGptNeox), gpt_neox},
    {"Phi3ForCausalLM", "model.", kPhi3, count(kPhi3), phi3},
    {"GemmaForCausalLM", "model.", kMistralGemma, count(kMistralGemma), gemma},
    {"BertForMaskedLM", "bert.", kBert, count(kBert), encoder, kBertRenames, std::size(kBertRenames)},
    {"RobertaForMaskedLM", "roberta.", kRoberta, count(kRoberta), encoder},
    {"DistilBertForMaskedLM", "distilbert.", kDistilBert, count(kDistilBert), encoder},
    {"BertModel", "bert.", kBertModel, count(kBertModel), encoder_without_head, kBertRenames,
     std::size(kBertRenames)},
    {"HeadlabLanguageModel", "", kHeadlab, count(kHeadlab), headlab_lm},
};

const Architecture& architecture(PretrainedArch a) {
  return kArchitectures[static_cast<int>(a)];
}

}  // namespace arch

bool pretrained_arch_from_name(const std::string& name, PretrainedArch* out) {
  for (std::size_t i = 0; i < std::size(arch::kArchitectures); ++i)
    if (name == arch::kArchitectures[i].name) {
      *out = static_cast<PretrainedArch>(i);
      return true;
    }
  return false;
}

std::string pretrained_arch_names() {
  std::string s;
  for (const arch::Architecture& a : arch::kArchitectures) s += (s.empty() ? "" : ", ") + std::string(a.name);
  return s;
}

}  // namespace headlab
