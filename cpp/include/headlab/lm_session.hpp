// A language model a UI can drive: an LmTrainer plus what the JS API asks of
// it between training steps (attention on a sequence, next-token
// probabilities, generation, saving), with every buffer allocated at
// construction. Token sequences here are ids, start token included, of length
// 1..seq_len; shorter than seq_len is fine because the model is causal (a
// prefix gives the same activations as the padded sequence).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "headlab/lm.hpp"
#include "headlab/lm_english.hpp"
#include "headlab/lm_file.hpp"

namespace headlab {

// The token generation stops after: the task's "." when it has one, else -1.
std::int32_t lm_stop_token(const LmTaskSpec& spec);

class LmSession;
struct LmSessionOrError {
  std::unique_ptr<LmSession> session;  // null on error
  std::string error;
};

class LmSession {
 public:
  // Checks the config (lm_train_config_error) first.
  static LmSessionOrError create(const LmTaskSpec& spec, const LmTrainConfig& config);
  // load_lm, then the session counts steps on from the file's.
  static LmSessionOrError load(const std::uint8_t* bytes, std::size_t size);

  LmResult step(std::size_t n) { return trainer_->step(n); }
  // The step (counted like steps()) that diverged and was not taken, or 0; the
  // message LanguageModel.step throws (divergence_message in train/optimizer.hpp).
  std::uint64_t diverged_at() const {
    return trainer_->diverged_at() == 0 ? 0 : base_steps_ + trainer_->diverged_at();
  }
  std::string divergence_message() const {
    return diverged_at() == 0 ? std::string()
                              : headlab::divergence_message(trainer_->divergence(), diverged_at(),
                                                            trainer_->config().learning_rate, "adam", "model");
  }
  // Training steps in all, including those a loaded file had taken.
  std::uint64_t steps() const { return base_steps_ + trainer_->steps(); }
  LmEval evaluate(std::size_t examples) { return trainer_->evaluate(examples); }
  LmHeadReport heads(std::size_t examples) { return trainer_->heads(examples); }
  // The english task only: relation scores and baselines on the heads' held-out sequences.
  LmEnglishReport english_heads(std::size_t examples) { return headlab::english_heads(*trainer_, examples); }

  // Attention of every layer and head on tokens [t]: out [num_layers, h, t, t],
  // the t x t top-left block of each map. The returned buffer is owned here.
  const float* attention(const std::int32_t* tokens, std::size_t t);

  // Next-token probabilities after tokens [t] (at position t - 1): [vocab].
  const float* predict(const std::int32_t* tokens, std::size_t t);

  // One forward pass over tokens [t] with the heads off[layer * h + head] != 0 switched off for
  // this call only (null: none; heads switched off by set_head_enabled stay off, and every switch
  // is as it was afterwards). Returns log-probabilities [t, vocab] at every position, as predict()
  // gives them on each prefix; after it, last_probabilities() [vocab] holds predict()'s answer at
  // position t - 1 and, with `maps`, last_attention() [num_layers, h, t, t] attention()'s.
  const float* log_probabilities(const std::int32_t* tokens, std::size_t t, const std::uint8_t* off, bool maps);
  const float* last_probabilities() const { return probs_.data(); }
  const float* last_attention() const { return block_.data(); }

  // Appends up to max_new tokens to tokens [t] (room for seq_len), never past
  // seq_len; returns the new length. Each token is drawn from predict()'s
  // distribution without the start token, sharpened by temperature
  // (p^(1/temperature), renormalised) with Rng(seed, 7), or the arg-max without
  // the start token (lowest id on ties) when temperature is 0. The start token
  // is never generated. Stops after lm_stop_token, and before the pad token
  // (never appended).
  std::size_t generate(std::int32_t* tokens, std::size_t t, std::size_t max_new, float temperature,
                       std::uint64_t seed);

  void set_head_enabled(std::size_t layer, std::size_t head, bool on) {
    trainer_->model().set_head_enabled(layer, head, on);
  }
  bool head_enabled(std::size_t layer, std::size_t head) const { return trainer_->model().head_enabled(layer, head); }

  // save_lm of this session; empty with *error set when a weight is non-finite or beyond ±1e4.
  std::vector<std::uint8_t> save(std::string* error) const { return save_lm(*trainer_, steps(), error); }

  const LmTaskSpec& spec() const { return trainer_->spec(); }
  const LmTrainConfig& config() const { return trainer_->config(); }
  LmTrainer& trainer() { return *trainer_; }

 private:
  LmSession(std::unique_ptr<LmTrainer> trainer, std::uint64_t base_steps);
  void run(const std::int32_t* tokens, std::size_t t);  // forward of one padded sequence
  void pad(const std::int32_t* tokens, std::size_t t);  // tokens into one_, padded to seq_len
  void copy_maps(std::size_t t);                        // the last forward's maps into block_

  std::unique_ptr<LmTrainer> trainer_;
  std::uint64_t base_steps_;
  LmBatch one_;                        // one sequence, targets -1
  std::vector<float> maps_, block_;    // [L, h, T, T], [L, h, t, t]
  std::vector<float> probs_;           // [vocab]
  std::vector<float> log_probs_;       // [T, vocab]
  std::vector<std::uint8_t> switches_;  // [L, h], saved across log_probabilities()
  std::vector<double> weights_;        // [vocab], generation
};

}  // namespace headlab
