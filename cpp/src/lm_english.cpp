// The small English's relations against a language model's heads, the
// baselines and the accuracies (lm_english.hpp).
#include "headlab/lm_english.hpp"

#include <algorithm>

namespace headlab {

const char* english_relation_label(EnRelation r) {
  // From the word that looks (the arc's query) to the word it looks at (its target), as every
  // arc, the page's headings and the CSV export point.
  static const char* const labels[] = {
      "verb \u2192 subject \u00b7 syntax",
      "object \u2192 verb \u00b7 semantics",
      "pronoun \u2192 antecedent \u00b7 entities",
      "repeat \u2192 earlier copy \u00b7 long range",
      "word \u2192 previous word \u00b7 local context",
  };
  return labels[int(r)];
}

int LmEnglishReport::label(std::size_t layer, std::size_t head) const {
  int best = -1;
  float top = 0;
  for (std::size_t r = 0; r < kEnRelationCount; ++r) {
    const float s = score(EnRelation(r), layer, head);
    if (s >= kLmEnglishLabelThreshold && s > top) {
      top = s;
      best = int(r);
    }
  }
  return best;
}

LmEnglishScorer::LmEnglishScorer(std::size_t num_layers, std::size_t num_heads, std::size_t seq_len)
    : layers_(num_layers),
      heads_(num_heads),
      t_len_(seq_len),
      sums_(kEnRelationCount * num_layers * num_heads, 0.0),
      counts_(kEnRelationCount, 0),
      last_noun_(kEnRelationCount, 0),
      offsets_(kEnRelationCount * seq_len, 0) {}

void LmEnglishScorer::add(const LmBatch& batch, std::size_t n, const float* const* weights) {
  const std::size_t t_len = t_len_, h = heads_, lh = layers_ * heads_;
  std::vector<std::int32_t> last_noun(t_len);
  for (std::size_t b = 0; b < n; ++b) {
    const std::int32_t* tok = batch.tokens.data() + b * t_len;
    for (std::int32_t t = 0, cur = -1; t < std::int32_t(t_len); ++t) {
      if (english_is_noun(tok[t])) cur = t;
      last_noun[std::size_t(t)] = cur;
    }
    for (const EnArc& a : batch.arcs[b]) {
      const std::size_t r = std::size_t(a.relation), q = std::size_t(a.query), k = std::size_t(a.target);
      if (q >= t_len) continue;  // the generator keeps every arc inside the sequence
      ++counts_[r];
      ++offsets_[r * t_len + (q - k)];
      if (last_noun[q] == a.target) ++last_noun_[r];
      for (std::size_t l = 0; l < layers_; ++l)
        for (std::size_t i = 0; i < h; ++i)
          sums_[r * lh + l * h + i] += weights[l][((b * h + i) * t_len + q) * t_len + k];
    }
  }
}

LmEnglishReport LmEnglishScorer::report() const {
  const std::size_t lh = layers_ * heads_;
  LmEnglishReport rep;
  rep.num_layers = layers_;
  rep.num_heads = heads_;
  rep.scores.assign(kEnRelationCount * lh, 0.0f);
  for (std::size_t r = 0; r < kEnRelationCount; ++r) {
    const std::size_t c = counts_[r];
    rep.arcs[r] = c;
    if (!c) continue;
    for (std::size_t k = 0; k < lh; ++k) rep.scores[r * lh + k] = float(sums_[r * lh + k] / double(c));
    LmEnglishBaseline& base = rep.baselines[r];
    std::size_t top = 0;
    for (std::size_t o = 0; o < t_len_; ++o)
      if (offsets_[r * t_len_ + o] > top) {
        top = offsets_[r * t_len_ + o];
        base.offset = std::int32_t(o);
      }
    base.fixed_offset = float(double(top) / double(c));
    base.last_noun = float(double(last_noun_[r]) / double(c));
  }
  return rep;
}

LmEnglishReport english_heads(LanguageModel& model, Rng& rng, std::size_t examples) {
  const LmTaskSpec& spec = *find_lm_task("english");
  const LmConfig& c = model.config();
  LmEnglishScorer scorer(c.num_layers, c.num_heads, c.seq_len);
  score_attention(model, spec, rng, examples, scorer);
  return scorer.report();
}

LmEnglishReport english_heads(LmTrainer& trainer, std::size_t examples) {
  Rng held_out(1000 + trainer.config().seed, 5);  // LmTrainer::heads's sequences
  return english_heads(trainer.model(), held_out, examples);
}

LmEnglishAccuracy::LmEnglishAccuracy(std::size_t seq_len) : t_len_(seq_len), mass_(kEnClassCount, 0.0) {}

void LmEnglishAccuracy::add(const LmBatch& batch, std::size_t n, const float* probabilities) {
  const std::size_t v = english_vocab_size();
  // The class (of the category asked for) whose words hold the most probability.
  auto top_class = [&](const float* p, EnCategory cat) {
    std::fill(mass_.begin(), mass_.end(), 0.0);
    for (std::size_t t = 0; t < v; ++t) {
      const EnWord& w = english_word(std::int32_t(t));
      if (w.cat == cat && w.cls >= 0) mass_[std::size_t(w.cls)] += p[t];
    }
    return int(std::max_element(mass_.begin(), mass_.end()) - mass_.begin());
  };
  auto count = [&](int kind, bool right) {
    ++total_[kind];
    right_[kind] += right ? 1 : 0;
  };
  for (std::size_t b = 0; b < n; ++b)
    for (const EnArc& a : batch.arcs[b]) {
      if (std::size_t(a.query) >= t_len_) continue;
      const float* p = probabilities + (b * t_len_ + std::size_t(a.query)) * v;
      if (a.relation == EnRelation::agreement) {
        const bool right = p[a.answer] > p[a.foil];
        count(kAgree, right);
        count(a.attractor ? kAttractor : kPlain, right);
      } else if (a.relation == EnRelation::selection) {
        count(kSelect, top_class(p, EnCategory::noun) == a.cls);
      } else if (a.relation == EnRelation::coreference) {
        count(kCoref, top_class(p, EnCategory::pred) == a.cls);
      }
    }
}

void LmEnglishAccuracy::fill(LmEval& out) const {
  auto share = [&](int kind) { return total_[kind] ? float(double(right_[kind]) / double(total_[kind])) : 0.0f; };
  out.agreement = share(kAgree);
  out.agreement_attractor = share(kAttractor);
  out.agreement_plain = share(kPlain);
  out.selection = share(kSelect);
  out.coreference = share(kCoref);
  out.agreement_arcs = total_[kAgree];
  out.attractor_arcs = total_[kAttractor];
  out.selection_arcs = total_[kSelect];
  out.coreference_arcs = total_[kCoref];
}

}  // namespace headlab
