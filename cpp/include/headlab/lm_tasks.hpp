// Next-token tasks for the small causal language model (lm.hpp), generated
// from a seed. Every task is one row of a table a UI can read.
//
//   induction  24 tokens: a start token, then tokens uniform over 32, holding
//              a segment of 4..10 distinct tokens repeated right after itself
//              at a random offset. The repeat is predictable only by looking
//              back; the metric is next-token accuracy on the second copy where
//              the first copy determines the answer.
//   cricket    Toy cricket commentary, one sentence per sequence, e.g.
//              "virat hit the ball because it was full". The word after
//              "it was" is an adjective of the noun "it" refers to, which is
//              always the object of the verb ("<verb> the <noun>"); a distractor
//              noun sits before the subject or after the object in most
//              sentences, and an optional opener ("now", "and then") shifts
//              everything. The metric is whether the predicted adjective
//              belongs to the referent.
//   english    The small English of english.hpp: 48 tokens, a start token,
//              sentences with subject-verb agreement across attractors, verbs
//              that select their objects, pronouns with antecedents and
//              repeated names, then padding. Loss on every next token up to the
//              padding; the metric is agreement: at the token before a
//              present-tense verb, the form that agrees with the subject is
//              more probable than the other form. Each row keeps the
//              generator's arcs (the ground truth of every relation).
//   lm_task_at(i) is the table (lm_task_count() rows).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "headlab/english.hpp"
#include "headlab/train/rng.hpp"

namespace headlab {

enum class LmTaskKind { induction, cricket, english };

// The settings a UI starts from for a task (calibrated in
// tests/cpp/test_lm_training.cpp; numbers in its header).
struct LmDefaults {
  std::size_t num_layers, num_heads, d_model;
  bool mlp;
  float learning_rate;
  std::size_t batch_size;
  std::size_t steps;         // a training run long enough for the task's heads to form
  std::size_t warmup_steps;  // linear learning-rate warmup (LmTrainConfig)
  float adam_beta1, adam_beta2;
  // A seed on which the task's heads form within `steps` in the WebAssembly SIMD
  // build (what browsers run; its rounding differs from native AVX2, so runs of
  // one seed drift apart): what a UI starts from when the user picks none.
  std::uint64_t seed;
};

struct LmTaskSpec {
  const char* name;
  LmTaskKind kind;
  std::size_t vocab;
  std::size_t seq_len;
  const char* const* token_names;  // [vocab]
  std::int32_t start_token;        // at position 0 of every sequence
  std::int32_t pad_token;          // fills a sequence after its end, or -1
  const char* metric;              // what LmResult::scored_right counts
  const char* description;
  LmDefaults defaults;
};

std::size_t lm_task_count();
const LmTaskSpec& lm_task_at(std::size_t index);
const LmTaskSpec* find_lm_task(const std::string& name);

// A batch of sequences, allocated once for `capacity`:
//   tokens  [capacity, seq_len]
//   targets [capacity, seq_len]  the token to predict at each position (the next
//                                token), -1 where no loss is taken (the last
//                                position, padding)
//   scored  [capacity, seq_len]  1 where the prediction counts towards the
//                                task's metric
// Per-sequence annotations (-1 when the task has none):
//   induction: seg_start (first copy at seg_start.., second copy right after),
//              seg_len
//   cricket:   pronoun ("it"), referent (the noun it refers to), distractor
//              (the other noun, -1 when absent); the adjective is predicted at
//              pronoun + 1 ("was")
//   english:   arcs[row], the generator's arcs of the row's sequence (query
//              and target index the row); scored marks agreement queries
struct LmBatch {
  LmBatch() = default;
  LmBatch(std::size_t seq_len, std::size_t capacity);
  std::size_t capacity = 0, size = 0, seq_len = 0;
  std::vector<std::int32_t> tokens, targets;
  std::vector<std::uint8_t> scored;
  std::vector<std::int32_t> seg_start, seg_len, pronoun, referent, distractor;
  std::vector<std::vector<EnArc>> arcs;  // [capacity], english only (empty rows otherwise)
};

// Row `row` (< capacity) from rng alone; generate_lm_batch fills rows [0, n)
// and sets size = n. No allocation for induction and cricket; english builds
// each sentence in vectors of its own (generate_english), a few small
// allocations per row, nothing beside a training step's cost.
void generate_lm_example(const LmTaskSpec& spec, Rng& rng, LmBatch& batch, std::size_t row);
void generate_lm_batch(const LmTaskSpec& spec, Rng& rng, std::size_t n, LmBatch& batch);

// The cricket language, for tests and UIs: token ids by word (-1 when not a
// word of the language), and whether a word sequence (no start token, no
// padding) is a sentence of the language; when it is, *referent gets the
// referent noun's index in `words`.
std::int32_t cricket_token(const std::string& word);
bool cricket_parse(const std::vector<std::string>& words, int* referent = nullptr);

// Adjectives of a cricket noun token (empty for other tokens).
std::vector<std::int32_t> cricket_adjectives(std::int32_t noun);

}  // namespace headlab
