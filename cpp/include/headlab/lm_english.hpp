// The small English's relations checked against a language model's heads
// (issue 24): per head, how much attention goes from the query position where
// a relation is needed to its true target; the baselines that position alone
// reaches on the same arcs; and the accuracies of the model's predictions
// there. The arcs are the generator's own (english.hpp), so every score is
// against the truth.
//
// Query and target of each score (positions in the sequence, 0 = <s>):
//   agreement      query: the token before a present-tense verb;
//                  target: the subject's head noun, or for a name its first
//                  name
//   selection      query: the token before the object noun of a verb that
//                  selects its object's class; target: the verb
//   coreference    query: "was"/"were" right after he/she/it/they; target: the
//                  antecedent's head noun, or for a name its first name
//   induction      query: the repeated first name of a two-word name;
//                  target: the last name after its earlier copy
//   previousToken  query: every position t >= 1 before the padding; target t-1
// score[relation][layer, head] = the mean over held-out arcs of the head's
// attention weight from query to target.
//
// Baselines on the same arcs (they need no model):
//   fixed offset   the best attention pattern "k tokens back" for one k chosen
//                  after the fact: the largest share of arcs with query -
//                  target = k (its score, since it puts weight 1 on one key)
//   last noun      attention on the last common noun or name at or before
//                  the query: the share of arcs whose target it is
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "headlab/english.hpp"
#include "headlab/lm.hpp"

namespace headlab {

// A head is labelled with the relation of its highest score at or above this
// (lower than kLmHeadThreshold: several heads often share one relation, and
// the issue judges them together, bench/english/calibration.md).
constexpr float kLmEnglishLabelThreshold = 0.3f;

// "verb → subject · syntax", "object → verb · semantics", "pronoun →
// antecedent · entities", "repeat → earlier copy · long range", "word →
// previous word · local context" (UTF-8): each arrow points from the word that
// looks (an arc's query) to the word it looks at (its target).
const char* english_relation_label(EnRelation r);

struct LmEnglishBaseline {
  float fixed_offset = 0;  // the best fixed offset's score
  std::int32_t offset = 0;  // that offset (query - target)
  float last_noun = 0;
  float best() const { return fixed_offset > last_noun ? fixed_offset : last_noun; }
};

struct LmEnglishReport {
  std::size_t num_layers = 0, num_heads = 0;
  std::size_t arcs[kEnRelationCount] = {};  // held-out arcs per relation
  std::vector<float> scores;                // [relation][layer * num_heads + head]
  LmEnglishBaseline baselines[kEnRelationCount];
  float score(EnRelation r, std::size_t layer, std::size_t head) const {
    return scores[(std::size_t(r) * num_layers + layer) * num_heads + head];
  }
  // The relation of the head's highest score at or above
  // kLmEnglishLabelThreshold (the first on ties), or -1.
  int label(std::size_t layer, std::size_t head) const;
};

// Accumulates the scores from attention weights: add() takes rows [0, n) of
// an english batch (LmBatch::arcs) and weights[l] [n, h, T, T] per layer.
class LmEnglishScorer {
 public:
  LmEnglishScorer(std::size_t num_layers, std::size_t num_heads, std::size_t seq_len);
  void add(const LmBatch& batch, std::size_t n, const float* const* weights);
  LmEnglishReport report() const;

 private:
  std::size_t layers_, heads_, t_len_;
  std::vector<double> sums_;                           // [relation][layer * h + head]
  std::vector<std::size_t> counts_, last_noun_;        // [relation]
  std::vector<std::size_t> offsets_;                   // [relation][offset 0..T-1]
};

// Runs `examples` english sequences from rng through the model (chunks of
// max_batch) and scores every head. The model's task must be english.
LmEnglishReport english_heads(LanguageModel& model, Rng& rng, std::size_t examples);

// The accuracies of issue 24 (LmEval's english fields; evaluate_lm computes
// them for the english task in the same pass as its loss): add() takes rows
// [0, n) of a batch and the model's probabilities [n * T, vocab] from
// forward on them; fill() writes LmEval::agreement .. coreference and the arc
// counts.
class LmEnglishAccuracy {
 public:
  explicit LmEnglishAccuracy(std::size_t seq_len);
  void add(const LmBatch& batch, std::size_t n, const float* probabilities);
  void fill(LmEval& out) const;

 private:
  enum { kAgree, kAttractor, kPlain, kSelect, kCoref, kKinds };
  std::size_t t_len_;
  std::size_t right_[kKinds] = {}, total_[kKinds] = {};
  std::vector<double> mass_;  // [kEnClassCount]
};

// The same held-out sequences as LmTrainer::heads.
LmEnglishReport english_heads(LmTrainer& trainer, std::size_t examples);

}  // namespace headlab
