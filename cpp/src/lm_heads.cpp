// Head detectors and the task metric for the language model (lm.hpp).
#include <algorithm>
#include <vector>

#include "headlab/lm.hpp"

namespace headlab {

namespace {

bool valid_query(const LmTaskSpec& spec, const std::int32_t* tok, std::size_t t) {
  return t >= 1 && (spec.pad_token < 0 || tok[t] != spec.pad_token);
}

struct Sum {
  double total = 0;
  std::size_t count = 0;
  void add(double x) { total += x, ++count; }
  float mean() const { return count ? float(total / double(count)) : 0.0f; }
};

}  // namespace

LmEval evaluate_lm(LanguageModel& model, const LmTaskSpec& spec, Rng& rng, std::size_t examples) {
  const LmConfig& c = model.config();
  const std::size_t t_len = c.seq_len;
  LmBatch batch(t_len, c.max_batch);
  double loss = 0;
  std::size_t predictions = 0, correct = 0, scored = 0, right = 0;
  for (std::size_t done = 0; done < examples;) {
    const std::size_t n = std::min(c.max_batch, examples - done);
    generate_lm_batch(spec, rng, n, batch);
    const LmResult r = model.forward(batch, n, false);
    loss += double(r.loss) * double(r.predictions);
    predictions += r.predictions;
    correct += r.correct;
    const std::int32_t* am = model.argmax();
    for (std::size_t b = 0; b < n; ++b)
      for (std::size_t t = 0; t < t_len; ++t) {
        const std::size_t i = b * t_len + t;
        if (!batch.scored[i]) continue;
        ++scored;
        if (spec.kind == LmTaskKind::cricket) {
          const std::vector<std::int32_t> adj = cricket_adjectives(batch.tokens[b * t_len + batch.referent[b]]);
          right += std::find(adj.begin(), adj.end(), am[i]) != adj.end() ? 1 : 0;
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
  return e;
}

LmHeadReport detect_heads(LanguageModel& model, const LmTaskSpec& spec, Rng& rng, std::size_t examples) {
  const LmConfig& c = model.config();
  const std::size_t t_len = c.seq_len, h = c.num_heads, big_l = c.num_layers, lh = big_l * h;
  const bool cricket = spec.kind == LmTaskKind::cricket;
  std::vector<Sum> prev(lh), first(lh), dup(lh), ind(lh), coref_it(lh), coref_next(lh);
  // Fixed-position baseline: [head][query kind 0/1][absolute position | offset back].
  std::vector<double> abs_pos(lh * 2 * t_len, 0.0), rel_pos(lh * 2 * t_len, 0.0);
  std::size_t pronouns = 0;
  // Where referents sit: [query kind][absolute position | offset back].
  std::vector<std::size_t> ref_abs(2 * t_len, 0), ref_rel(2 * t_len, 0);
  LmBatch batch(t_len, c.max_batch);
  for (std::size_t done = 0; done < examples;) {
    const std::size_t n = std::min(c.max_batch, examples - done);
    generate_lm_batch(spec, rng, n, batch);
    model.forward(batch, n, false);
    for (std::size_t b = 0; b < n; ++b) {
      const std::int32_t* tok = batch.tokens.data() + b * t_len;
      const bool has_pronoun = cricket && batch.pronoun[b] >= 0;
      pronouns += has_pronoun ? 1 : 0;
      if (has_pronoun)
        for (std::size_t kind = 0; kind < 2; ++kind) {
          ++ref_abs[kind * t_len + std::size_t(batch.referent[b])];
          ++ref_rel[kind * t_len + std::size_t(batch.pronoun[b]) + kind - std::size_t(batch.referent[b])];
        }
      for (std::size_t l = 0; l < big_l; ++l)
        for (std::size_t i = 0; i < h; ++i) {
          const std::size_t k = l * h + i;
          const float* w = model.attention(l) + (b * h + i) * t_len * t_len;  // [T, T]
          for (std::size_t t = 1; t < t_len; ++t) {
            if (!valid_query(spec, tok, t)) continue;
            const float* row = w + t * t_len;
            prev[k].add(row[t - 1]);
            first[k].add(row[0]);
            // Induction task: only queries in the second copy count.
            if (spec.kind == LmTaskKind::induction) {
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
            dup[k].add(on_dup);
            ind[k].add(on_next);
          }
          if (!has_pronoun) continue;
          const std::size_t ref = std::size_t(batch.referent[b]);
          for (std::size_t kind = 0; kind < 2; ++kind) {
            const std::size_t q = std::size_t(batch.pronoun[b]) + kind;
            const float* row = w + q * t_len;
            (kind == 0 ? coref_it : coref_next)[k].add(row[ref]);
            for (std::size_t j = 0; j <= q; ++j) {
              abs_pos[(k * 2 + kind) * t_len + j] += row[j];
              rel_pos[(k * 2 + kind) * t_len + (q - j)] += row[j];
            }
          }
        }
    }
    done += n;
  }

  LmHeadReport rep;
  rep.num_layers = big_l;
  rep.num_heads = h;
  rep.heads.resize(lh);
  for (std::size_t k = 0; k < lh; ++k) {
    LmHeadScores& s = rep.heads[k];
    s.prev_token = prev[k].mean();
    s.first_token = first[k].mean();
    s.duplicate = dup[k].mean();
    s.induction = ind[k].mean();
    if (cricket && pronouns) {
      s.coreference_pronoun = coref_it[k].mean();
      s.coreference_next = coref_next[k].mean();
      s.coreference = std::max(s.coreference_pronoun, s.coreference_next);
      for (std::size_t j = 0; j < 2 * t_len; ++j)
        s.position_peak = std::max({s.position_peak, float(abs_pos[k * 2 * t_len + j] / double(pronouns)),
                                    float(rel_pos[k * 2 * t_len + j] / double(pronouns))});
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
  if (cricket && pronouns)
    for (std::size_t j = 0; j < 2 * t_len; ++j)
      rep.best_fixed_position = std::max({rep.best_fixed_position, float(double(ref_abs[j]) / double(pronouns)),
                                          float(double(ref_rel[j]) / double(pronouns))});
  return rep;
}

}  // namespace headlab
