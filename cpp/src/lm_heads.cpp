// Head detectors and the task metric for the language model (lm.hpp).
#include <algorithm>
#include <vector>

#include "headlab/lm.hpp"
#include "headlab/lm_english.hpp"

namespace headlab {

namespace {

bool valid_query(const LmTaskSpec& spec, const std::int32_t* tok, std::size_t t) {
  return t >= 1 && (spec.pad_token < 0 || tok[t] != spec.pad_token);
}

}  // namespace

LmEval evaluate_lm(LanguageModel& model, const LmTaskSpec& spec, Rng& rng, std::size_t examples) {
  const LmConfig& c = model.config();
  const std::size_t t_len = c.seq_len;
  LmBatch batch(t_len, c.max_batch);
  double loss = 0;
  std::size_t predictions = 0, correct = 0, scored = 0, right = 0;
  const bool english = spec.kind == LmTaskKind::english;
  LmEnglishAccuracy english_acc(t_len);
  for (std::size_t done = 0; done < examples;) {
    const std::size_t n = std::min(c.max_batch, examples - done);
    generate_lm_batch(spec, rng, n, batch);
    const LmResult r = model.forward(batch, n, false);
    loss += double(r.loss) * double(r.predictions);
    predictions += r.predictions;
    correct += r.correct;
    const std::int32_t* am = model.argmax();
    if (english) english_acc.add(batch, n, model.probabilities());
    for (std::size_t b = 0; b < n; ++b)
      for (std::size_t t = 0; t < t_len; ++t) {
        const std::size_t i = b * t_len + t;
        if (!batch.scored[i]) continue;
        ++scored;
        if (spec.kind == LmTaskKind::cricket) {
          const std::vector<std::int32_t> adj =
              cricket_adjectives(batch.tokens[b * t_len + batch.referent[b]]);
          right += std::find(adj.begin(), adj.end(), am[i]) != adj.end() ? 1 : 0;
        } else if (english) {
          continue;  // agreement, from english_acc below
        } else {
          right += am[i] == batch.targets[i] ? 1 : 0;
        }
      }
    done += n;
  }
  LmEval e;
  e.loss = predictions ? float(loss / double(predictions)) : 0.0f;
  e.next_token = predictions ? float(correct) / float(predictions) : 0.0f;
  e.accuracy = scored ? float(right) / float(scored) : 0.0f;
  if (english) {
    english_acc.fill(e);
    e.accuracy = e.agreement;
  }
  return e;
}

LmHeadScorer::LmHeadScorer(const LmTaskSpec& spec, std::size_t num_layers, std::size_t num_heads,
                           std::size_t seq_len)
    : spec_(spec), layers_(num_layers), heads_(num_heads), t_len_(seq_len) {
  const std::size_t lh = num_layers * num_heads;
  sums_.assign(lh * kStats, 0.0);
  counts_.assign(lh * kStats, 0);
  abs_pos_.assign(lh * 2 * seq_len, 0.0);
  rel_pos_.assign(lh * 2 * seq_len, 0.0);
  ref_abs_.assign(2 * seq_len, 0);
  ref_rel_.assign(2 * seq_len, 0);
}

void LmHeadScorer::add(const LmBatch& batch, std::size_t n, const float* const* weights) {
  const std::size_t t_len = t_len_, h = heads_;
  const bool cricket = spec_.kind == LmTaskKind::cricket;
  auto put = [&](std::size_t k, Stat s, double x) {
    sums_[k * kStats + s] += x;
    ++counts_[k * kStats + s];
  };
  for (std::size_t b = 0; b < n; ++b) {
    const std::int32_t* tok = batch.tokens.data() + b * t_len;
    const bool has_pronoun = cricket && batch.pronoun[b] >= 0;
    if (has_pronoun) {
      ++pronouns_;
      for (std::size_t kind = 0; kind < 2; ++kind) {
        ++ref_abs_[kind * t_len + std::size_t(batch.referent[b])];
        ++ref_rel_[kind * t_len + std::size_t(batch.pronoun[b]) + kind - std::size_t(batch.referent[b])];
      }
    }
    for (std::size_t l = 0; l < layers_; ++l)
      for (std::size_t i = 0; i < h; ++i) {
        const std::size_t k = l * h + i;
        const float* w = weights[l] + (b * h + i) * t_len * t_len;  // [T, T]
        for (std::size_t t = 1; t < t_len; ++t) {
          if (!valid_query(spec_, tok, t)) continue;
          const float* row = w + t * t_len;
          put(k, kPrev, row[t - 1]);
          put(k, kFirst, row[0]);
          // Induction task: only queries in the second copy count.
          if (spec_.kind == LmTaskKind::induction) {
            const std::size_t s = std::size_t(batch.seg_start[b]), len = std::size_t(batch.seg_len[b]);
            if (t < s + len || t >= s + 2 * len) continue;
          }
          double on_dup = 0, on_next = 0;
          bool any = false;
          for (std::size_t j = 0; j < t; ++j)
            if (tok[j] == tok[t]) {
              any = true;
              on_dup += row[j];
              on_next += row[j + 1];  // j + 1 <= t
            }
          if (!any) continue;
          put(k, kDup, on_dup);
          put(k, kInd, on_next);
        }
        if (!has_pronoun) continue;
        const std::size_t ref = std::size_t(batch.referent[b]);
        for (std::size_t kind = 0; kind < 2; ++kind) {
          const std::size_t q = std::size_t(batch.pronoun[b]) + kind;
          const float* row = w + q * t_len;
          put(k, kind == 0 ? kCorefIt : kCorefNext, row[ref]);
          for (std::size_t j = 0; j <= q; ++j) {
            abs_pos_[(k * 2 + kind) * t_len + j] += row[j];
            rel_pos_[(k * 2 + kind) * t_len + (q - j)] += row[j];
          }
        }
      }
  }
}

LmHeadReport LmHeadScorer::report() const {
  const std::size_t lh = layers_ * heads_, t_len = t_len_;
  auto mean = [&](std::size_t k, Stat s) {
    const std::size_t c = counts_[k * kStats + s];
    return c ? float(sums_[k * kStats + s] / double(c)) : 0.0f;
  };
  LmHeadReport rep;
  rep.num_layers = layers_;
  rep.num_heads = heads_;
  rep.heads.resize(lh);
  const double np = double(pronouns_);
  for (std::size_t k = 0; k < lh; ++k) {
    LmHeadScores& s = rep.heads[k];
    s.prev_token = mean(k, kPrev);
    s.first_token = mean(k, kFirst);
    s.duplicate = mean(k, kDup);
    s.induction = mean(k, kInd);
    if (pronouns_) {
      s.coreference_pronoun = mean(k, kCorefIt);
      s.coreference_next = mean(k, kCorefNext);
      s.coreference = std::max(s.coreference_pronoun, s.coreference_next);
      for (std::size_t j = 0; j < 2 * t_len; ++j)
        s.position_peak = std::max({s.position_peak, float(abs_pos_[k * 2 * t_len + j] / np),
                                    float(rel_pos_[k * 2 * t_len + j] / np)});
      rep.best_coreference = std::max(rep.best_coreference, s.coreference);
    }
    const std::pair<float, const char*> candidates[] = {{s.prev_token, "previous token"},
                                                        {s.induction, "induction"},
                                                        {s.duplicate, "duplicate token"},
                                                        {s.first_token, "first token"},
                                                        {s.coreference, "coreference"}};
    float best = 0;
    s.label = "";
    for (const auto& cand : candidates)
      if (cand.first >= kLmHeadThreshold && cand.first > best) {
        best = cand.first;
        s.label = cand.second;
      }
  }
  if (pronouns_)
    for (std::size_t j = 0; j < 2 * t_len; ++j)
      rep.best_fixed_position = std::max(
          {rep.best_fixed_position, float(double(ref_abs_[j]) / np), float(double(ref_rel_[j]) / np)});
  return rep;
}

LmHeadReport detect_heads(LanguageModel& model, const LmTaskSpec& spec, Rng& rng, std::size_t examples) {
  const LmConfig& c = model.config();
  LmHeadScorer scorer(spec, c.num_layers, c.num_heads, c.seq_len);
  score_attention(model, spec, rng, examples, scorer);
  return scorer.report();
}

}  // namespace headlab
