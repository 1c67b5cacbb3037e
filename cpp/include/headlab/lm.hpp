// A small causal transformer language model (GPT-2 style, pre-LayerNorm):
//   X_0 = E[token] + P[position]                                   [T, d]
//   for each layer l = 1..L:
//     M_l     = X_{l-1} + MultiHead(LN1_l(X_{l-1}))                 causal, W^O and biases
//     X_l     = M_l + W2_l GELU(W1_l LN2_l(M_l) + b1_l) + b2_l       when mlp (d -> 4d -> d)
//             = M_l                                                  otherwise
//   logits  = LN_f(X_L) W_U + b_U                                    [T, vocab], W_U not tied to E
//   loss    = mean over positions with a target of -log softmax(logits)[target]
// GELU is the tanh approximation (lm_kernels.hpp). LayerNorm eps 1e-5.
// Every buffer is allocated at construction for max_batch sequences; forward()
// (with or without backward) allocates nothing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "headlab/kernels.hpp"
#include "headlab/lm_tasks.hpp"
#include "headlab/mha.hpp"
#include "headlab/mha_backward.hpp"
#include "headlab/train/optimizer.hpp"

namespace headlab {

constexpr std::size_t kLmMaxLayers = 4;

struct LmConfig {
  std::size_t vocab = 0;
  std::size_t seq_len = 0;  // T: every batch has exactly this length
  std::size_t d_model = 0;
  std::size_t num_heads = 0;   // d_k = d_v = d_model / num_heads
  std::size_t num_layers = 1;  // 1..kLmMaxLayers
  bool mlp = true;             // d_ff = 4 d_model
  std::size_t max_batch = 0;   // largest batch forward() accepts
  float ln_eps = 1e-5f;
};

// "" when valid, else a message naming the offending field.
const char* lm_config_error(const LmConfig& config);

// Offsets (in floats) into the one parameter buffer, in this order:
//   tok_emb [vocab, d], pos_emb [seq_len, d],
//   per layer: ln1_g, ln1_b [d],
//              w_q, w_k, w_v [d, d] (head i in columns i*d_k..), w_o [d, d],
//              b_q, b_k, b_v, b_o [d],
//              and when mlp: ln2_g, ln2_b [d], w_fc [d, 4d], b_fc [4d],
//                            w_proj [4d, d], b_proj [d]
//              (without mlp those offsets equal the next field's and hold nothing),
//   lnf_g, lnf_b [d], w_unembed [d, vocab], b_unembed [vocab].
// Linear maps are y = x W + b with W row-major [in, out] (torch's weight^T).
struct LmLayerLayout {
  std::size_t ln1_g, ln1_b, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o;
  std::size_t ln2_g, ln2_b, w_fc, b_fc, w_proj, b_proj;
};
struct LmLayout {
  std::size_t tok_emb, pos_emb;
  LmLayerLayout layers[kLmMaxLayers];
  std::size_t lnf_g, lnf_b, w_unembed, b_unembed, total;
};
LmLayout lm_layout(const LmConfig& config);

struct LmResult {
  float loss = 0;               // mean cross-entropy over positions with a target
  std::size_t predictions = 0;  // positions with a target
  std::size_t correct = 0;      // of those, arg-max == target
};

class LanguageModel {
 public:
  // The config must pass lm_config_error().
  explicit LanguageModel(const LmConfig& config);
  LanguageModel(const LanguageModel&) = delete;  // views point into owned storage
  LanguageModel& operator=(const LanguageModel&) = delete;

  // Bytes the constructor allocates for `config`.
  static std::size_t buffer_bytes(const LmConfig& config);

  const LmConfig& config() const { return config_; }
  const LmLayout& layout() const { return layout_; }
  std::size_t num_params() const { return layout_.total; }
  float* params() { return params_.data(); }
  const float* params() const { return params_.data(); }
  const float* grads() const { return grads_.data(); }
  // Writable for a data-parallel step (lm_parallel.hpp), which sums its
  // replicas' gradients here before the optimizer step.
  float* grads() { return grads_.data(); }

  // Token embeddings N(0, 1) (torch's nn.Embedding). Position embeddings
  // N(0, 0.1^2), small beside the tokens. Measured on the induction task
  // (2 layers x 4 heads, d 32, 3000 steps, seeds 1-5, Adam 3e-3): the phase
  // change came in 1 of 5 seeds with position std 1, 2 of 5 with 0.3, 5 of 5
  // with 0.1 (phase steps 1200-1700) and 0.03 (1300-1900); token std 0.3 with
  // position std 0.1 lost it in 5 of 5 (Adam 5e-3). With the task's trainer
  // defaults (lm_tasks.cpp) and std 0.1: 5 of 5, steps 1300-1600.
  // W^Q, W^K N(0, 2/d), twice torch's xavier std: with std-1 positions the
  // phase change came in 1 of 5 seeds at this scale against 0 of 20 at
  // xavier's; with std-0.1 positions, 3x xavier came later (2200-2800, 4 of
  // 5), and xavier's scale (Adam 5e-3..7e-3) came in 4-5 of 5 but left a
  // layer-1 previous-token head >= 0.5 in only 2-3 of 5 (at 2x: 5 of 5 with
  // the task defaults). W^V N(0, 1/(2d)) (xavier); W^O, W_fc, W_proj, W_U
  // N(0, 1/(3 fan_in)) (the std of torch's default Linear init); every bias 0;
  // LayerNorm gains 1. Draws from rng in layout order.
  void init(Rng& rng);

  // A disabled head's output is zeroed before W^O (training and evaluation).
  void set_head_enabled(std::size_t layer, std::size_t head, bool on);
  bool head_enabled(std::size_t layer, std::size_t head) const;

  // Rows [0, n) of `batch` (n <= max_batch, batch.seq_len == seq_len). With
  // `backward`, grads() becomes d loss / d params for that batch.
  LmResult forward(const LmBatch& batch, std::size_t n, bool backward, Path path = Path::simd);
  // The same on n sequences given as tokens / targets [n * seq_len] (a slice of
  // a batch: the data-parallel step runs one per thread).
  LmResult run(const std::int32_t* tokens, const std::int32_t* targets, std::size_t n, bool backward,
               Path path);

  // From the last forward, for its n sequences:
  //   probabilities [n*T, vocab]; argmax [n*T] (most probable next token);
  //   attention(l) [n, h, T, T], the attention weights of layer l (rows sum to
  //   1 over keys <= query; they do not depend on which heads of layer l are
  //   enabled, but do on heads disabled in earlier layers).
  const float* probabilities() const { return probs_.data(); }
  const std::int32_t* argmax() const { return argmax_.data(); }
  const float* attention(std::size_t layer) const { return caches_[layer].weights; }

  // Attention weights of every layer and head for one sequence tokens [T]:
  // out [num_layers, h, T, T]. Runs a forward pass (replacing the last one's
  // activations); heads stay as set_head_enabled left them.
  void attention_maps(const std::int32_t* tokens, float* out);

  // Log-probabilities at every position of one sequence tokens [seq_len]:
  // out [seq_len, vocab], each row the log-softmax of that position's logits
  // (summed in double). One forward pass, as attention_maps runs; afterwards
  // probabilities() and attention(l) are that pass's.
  void log_probabilities(const std::int32_t* tokens, float* out);

 private:
  // The forward pass of n sequences up to the logits, which it leaves in probs_ [n*T, vocab].
  void forward_logits(const std::int32_t* tokens, std::size_t n, Path path);

  LmConfig config_;
  LmLayout layout_;
  MhaShape shape_;
  std::size_t rows_max_;  // max_batch * T
  std::vector<float> params_, grads_;
  std::vector<std::uint8_t> head_enabled_;  // [L, h]
  // Activations, [L] arrays of [rows_max, .] slices in one buffer.
  std::vector<float> act_;
  float* resid_[kLmMaxLayers + 1];  // X_l [R, d]; X_{l+1} is M_{l+1} without MLP
  float* mid_[kLmMaxLayers];        // M_l [R, d] (== resid_[l+1] without MLP)
  float* ln1_[kLmMaxLayers];        // [R, d]
  float* ln1_stats_[kLmMaxLayers];  // mean [R] | rstd [R]
  float* ln2_[kLmMaxLayers];
  float* ln2_stats_[kLmMaxLayers];
  float* fc_[kLmMaxLayers];      // pre-GELU [R, 4d]
  float* act_fc_[kLmMaxLayers];  // GELU output [R, 4d]
  float* lnf_;
  float* lnf_stats_;
  MhaCache caches_[kLmMaxLayers];
  std::vector<float> probs_;  // [R, vocab] logits, then probabilities
  std::vector<std::int32_t> argmax_;
  std::vector<std::int32_t> no_targets_;  // [T] of -1, for attention_maps()
  // Scratch.
  std::vector<float> attn_out_, dresid_, dtmp_, dfc_, dlogits_, fws_, bws_;
};

// ---- Head detectors ----------------------------------------------------------

// Per layer and head, on held-out sequences of the model's task (means over
// sequences and query positions of attention weights):
//   prev_token   weight on t-1, queries t >= 1
//   first_token  weight on position 0, queries t >= 1 (an attention sink)
//   duplicate    summed weight on earlier occurrences of the query's token,
//                queries that have one
//   induction    summed weight on the positions right after earlier occurrences
//                of the query's token (the induction task: queries in the second
//                copy only)
//   coreference  cricket only: weight from the pronoun's prediction query onto
//                the referent noun, the larger of the two queries "it" and
//                "was" (the adjective is predicted at "was")
// A head's label is the name of its highest score among those at or above
// kLmHeadThreshold: "previous token", "induction", "duplicate token",
// "first token", "coreference"; "" when none is.
constexpr float kLmHeadThreshold = 0.5f;

struct LmHeadScores {
  float prev_token = 0, first_token = 0, duplicate = 0, induction = 0;
  float coreference = 0, coreference_pronoun = 0, coreference_next = 0;
  // Cricket: the highest mean weight this head puts on one fixed absolute
  // position, or one fixed offset back, from either pronoun query (a head
  // that attends by position scores high here whatever the referent).
  float position_peak = 0;
  const char* label = "";
};

struct LmHeadReport {
  std::size_t num_layers = 0, num_heads = 0;
  std::vector<LmHeadScores> heads;  // [layer * num_heads + head]
  // Cricket: the best fixed-position baseline for coreference, the score of
  // an ideal head that puts all its weight, from either pronoun query, on one
  // absolute position or one offset back chosen after the fact: the largest
  // share of sentences whose referent sits at one position (or offset).
  float best_fixed_position = 0;
  float best_coreference = 0;
  const LmHeadScores& at(std::size_t layer, std::size_t head) const {
    return heads[layer * num_heads + head];
  }
};

// Accumulates the scores from attention weights of sequences of `spec`:
// add() takes rows [0, n) of a batch and weights[l] [n, h, T, T] per layer.
// Allocates at construction only.
class LmHeadScorer {
 public:
  LmHeadScorer(const LmTaskSpec& spec, std::size_t num_layers, std::size_t num_heads, std::size_t seq_len);
  void add(const LmBatch& batch, std::size_t n, const float* const* weights);
  LmHeadReport report() const;

 private:
  enum Stat { kPrev, kFirst, kDup, kInd, kCorefIt, kCorefNext, kStats };
  const LmTaskSpec& spec_;
  std::size_t layers_, heads_, t_len_, pronouns_ = 0;
  std::vector<double> sums_;  // [layer*h + head][Stat]
  std::vector<std::size_t> counts_;
  std::vector<double> abs_pos_, rel_pos_;       // [head][query kind][position | offset]
  std::vector<std::size_t> ref_abs_, ref_rel_;  // [query kind][position | offset]
};

// Runs `examples` sequences of `spec` from rng through the model (in chunks of
// max_batch) and gives each chunk's attention (one [n, h, T, T] block per layer)
// to scorer.add(batch, n, weights): what every head-scoring pass shares.
template <class Scorer>
void score_attention(LanguageModel& model, const LmTaskSpec& spec, Rng& rng, std::size_t examples, Scorer& scorer) {
  const LmConfig& c = model.config();
  LmBatch batch(c.seq_len, c.max_batch);
  const float* weights[kLmMaxLayers];
  for (std::size_t done = 0; done < examples;) {
    const std::size_t n = std::min(c.max_batch, examples - done);
    generate_lm_batch(spec, rng, n, batch);
    model.forward(batch, n, false);
    for (std::size_t l = 0; l < c.num_layers; ++l) weights[l] = model.attention(l);
    scorer.add(batch, n, weights);
    done += n;
  }
}

// Scores every head on `examples` sequences of `spec` (score_attention). Allocates
// (evaluation, not a hot path).
LmHeadReport detect_heads(LanguageModel& model, const LmTaskSpec& spec, Rng& rng, std::size_t examples);

// The task's metric over held-out sequences: share of scored positions right
// (induction: next token exact; cricket: the predicted adjective belongs to the
// referent), plus mean loss.
//
// english: accuracy is agreement (below), and the accuracies of issue 24 at
// each arc's query (lm_english.hpp defines them; 0 for other tasks):
//   agreement            p(the verb) > p(its other-number form), every
//                        agreement arc; agreement_attractor / _plain: arcs
//                        with / without an attractor
//   selection            the selected class's nouns hold the most probability
//   coreference          the antecedent's class's predicates hold the most
struct LmEval {
  float loss = 0;
  float accuracy = 0;    // the task's metric
  float next_token = 0;  // arg-max == target over all positions with a target
  float agreement = 0, agreement_attractor = 0, agreement_plain = 0, selection = 0, coreference = 0;
  std::size_t agreement_arcs = 0, attractor_arcs = 0, selection_arcs = 0, coreference_arcs = 0;
};
LmEval evaluate_lm(LanguageModel& model, const LmTaskSpec& spec, Rng& rng, std::size_t examples);

// ---- The training loop ---------------------------------------------------------

// One design for every caller (tests, bindings, `npm run train:models`): the
// same seed gives the same model on every path that trains through LmTrainer.
struct LmTrainConfig {
  std::size_t num_layers = 2, num_heads = 4, d_model = 32;
  bool mlp = false;
  float learning_rate = 1e-2f;
  std::size_t batch_size = 64;
  std::size_t warmup_steps = 1000;  // the learning rate rises linearly over these first steps
  float adam_beta1 = 0.9f, adam_beta2 = 0.95f;
  std::uint64_t seed = 1;
};

// The task's defaults (LmTaskSpec::defaults) with `seed`.
LmTrainConfig lm_train_defaults(const LmTaskSpec& spec, std::uint64_t seed = 1);

// Runs a training batch forward and backward for LmTrainer::step in place of
// model.forward(batch, n, true): afterwards model.grads() must hold d loss /
// d params for the n sequences and the result their mean loss, as forward's.
// The data-parallel step (lm_parallel.hpp, threaded builds only) is one; the
// core knows no threads.
class LmBatchRunner {
 public:
  virtual ~LmBatchRunner() = default;
  virtual LmResult run(LanguageModel& model, const LmBatch& batch, std::size_t n) = 0;
};

class LmTrainer {
 public:
  // The model is initialised from Rng(seed, 1); training batches come from
  // Rng(seed, 2). `config` must give a valid LmConfig (lm_config_error).
  LmTrainer(const LmTaskSpec& spec, const LmTrainConfig& config);

  // Up to n Adam steps (the trainer's Optimizer, learning rate warmed up
  // linearly over warmup_steps), one fresh batch each; returns the last taken
  // step's result. As in Trainer::step, a step whose loss is not finite or
  // whose update would make a parameter non-finite or |p| >= kMaxParam is not
  // taken: the model keeps the state of the last good step, the batch is
  // drawn again by the next step, and the trainer stays diverged (step()
  // takes no further steps; evaluation, heads and saving work on).
  LmResult step(std::size_t n);
  std::uint64_t steps() const { return optimizer_.steps(); }

  // The model an LmTrainer for `config` builds (file checks ask it before building one).
  static LmConfig model_config(const LmTaskSpec& spec, const LmTrainConfig& config);
  // The step that diverged (steps() + 1 when it happened), or 0; and why.
  std::uint64_t diverged_at() const { return diverged_at_; }
  Divergence divergence() const { return divergence_; }

  // Held-out sequences, the same ones on every call (Rng(1000 + seed, 3) for
  // evaluate, Rng(1000 + seed, 5) for heads), never seen in training.
  LmEval evaluate(std::size_t examples);
  LmHeadReport heads(std::size_t examples);

  const LmTaskSpec& spec() const { return spec_; }
  const LmTrainConfig& config() const { return config_; }
  LanguageModel& model() { return model_; }
  const LanguageModel& model() const { return model_; }

  // The training batches' generator state, saved in model files so a loaded
  // model trains on new batches.
  std::uint64_t data_state() const { return data_rng_.state(); }
  void set_data_state(std::uint64_t state) { data_rng_.set_state(state); }

  // Who runs each step's batch: null (the default) is model().forward on this
  // thread, today's code path. set_lm_threads (lm_parallel.hpp) installs a
  // data-parallel runner; the optimizer step and divergence rule stay here.
  void set_batch_runner(std::unique_ptr<LmBatchRunner> runner) { runner_ = std::move(runner); }
  LmBatchRunner* batch_runner() const { return runner_.get(); }

 private:
  const LmTaskSpec& spec_;
  LmTrainConfig config_;
  LanguageModel model_;
  Optimizer optimizer_;
  Rng data_rng_;
  LmBatch batch_;
  std::uint64_t diverged_at_ = 0;
  Divergence divergence_ = Divergence::none;
  std::unique_ptr<LmBatchRunner> runner_;
};

}  // namespace headlab
