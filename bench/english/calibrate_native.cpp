// headlab_english_calibrate: the small English in HeadLab's own C++ trainer
// (the `english` task's defaults), for bench/english/calibration.md.
//
//   headlab_english_calibrate --seed S [--steps N] [--heads H] [--layers L] [--save FILE.hlm] [--every K]
//       trains one seed on one thread and saves the model; with --every, also
//       FILE-<step>.hlm every K steps (one run gives the models of several
//       budgets: without a decay schedule, step s does not depend on the total);
//       --heads overrides the task's heads per layer (d_model stays), --layers its layers
//   headlab_english_calibrate --load FILE.hlm [--examples N]
//       scores a saved model: every head's relation scores, the baselines,
//       the accuracies and the agreement ablation (as the issue asks), printed
//       as a markdown section
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "headlab/lm.hpp"
#include "headlab/lm_english.hpp"
#include "headlab/lm_file.hpp"

using namespace headlab;

namespace {

bool save_model(LmTrainer& trainer, const std::string& path) {
  std::string error;
  const std::vector<std::uint8_t> bytes = save_lm(trainer, trainer.steps(), &error);
  if (bytes.empty()) {
    std::fprintf(stderr, "save: %s\n", error.c_str());
    return false;
  }
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              std::streamsize(bytes.size()));
  return true;
}

// FILE.hlm -> FILE-<step>.hlm
std::string checkpoint_path(const std::string& save, std::size_t step) {
  const std::size_t dot = save.rfind('.');
  const std::string stem = dot == std::string::npos ? save : save.substr(0, dot);
  return stem + "-" + std::to_string(step) + (dot == std::string::npos ? "" : save.substr(dot));
}

int train(std::uint64_t seed, std::size_t steps, std::size_t heads, std::size_t layers, const std::string& save,
          std::size_t every) {
  const LmTaskSpec& spec = *find_lm_task("english");
  LmTrainConfig config = lm_train_defaults(spec, seed);
  if (heads) config.num_heads = heads;
  if (layers) config.num_layers = layers;
  const std::string bad = lm_train_config_error(spec, config);
  if (!bad.empty()) {
    std::fprintf(stderr, "bad --heads or --layers: %s\n", bad.c_str());
    return 2;
  }
  LmTrainer trainer(spec, config);
  if (!steps) steps = spec.defaults.steps;
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  double loss = 0;
  for (std::size_t s = 0; s < steps;) {
    const std::size_t n = std::min<std::size_t>(100, steps - s);
    loss = trainer.step(n).loss;
    s += n;
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s % 500 == 0 || s == steps)
      std::fprintf(stderr, "seed %llu step %zu loss %.3f (%.0f s, %.0f s CPU)\n", (unsigned long long)seed, s, loss,
                   sec, double(std::clock() - c0) / CLOCKS_PER_SEC);
    if (every && !save.empty() && s % every == 0 && s < steps && !save_model(trainer, checkpoint_path(save, s)))
      return 1;
  }
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = double(std::clock() - c0) / CLOCKS_PER_SEC;
  std::printf("seed %llu: %zu steps in %.0f s wall, %.0f s CPU (one thread), last batch loss %.3f\n",
              (unsigned long long)seed, steps, sec, cpu, loss);
  return save.empty() || save_model(trainer, save) ? 0 : 1;
}

std::string head_name(std::size_t l, std::size_t h) {
  return "L" + std::to_string(l) + "H" + std::to_string(h);
}

// Calls visit(batch, b, arc, w) for every arc of `examples` held-out sequences
// (english_heads's, Rng(1000 + seed, 5)), w being the last layer's attention.
template <class Visit>
void for_each_last_layer_arc(LmTrainer& tr, std::size_t examples, Visit visit) {
  const LmConfig& c = tr.model().config();
  Rng rng(1000 + tr.config().seed, 5);
  LmBatch batch(c.seq_len, c.max_batch);
  for (std::size_t done = 0; done < examples;) {
    const std::size_t n = std::min(c.max_batch, examples - done);
    generate_lm_batch(tr.spec(), rng, n, batch);
    tr.model().forward(batch, n, false);
    const float* w = tr.model().attention(c.num_layers - 1);
    for (std::size_t b = 0; b < n; ++b)
      for (const EnArc& a : batch.arcs[b]) visit(batch, b, a, w);
    done += n;
  }
}

// Coreference arcs split by antecedent: a name (its first name), or a common
// noun taken up by he/she, it or they. Per head of the last layer, the mean
// weight from the query on the target for each kind: heads divide the job.
void coreference_by_antecedent(LmTrainer& tr, std::size_t examples) {
  const LmConfig& c = tr.model().config();
  const std::size_t H = c.num_heads, T = c.seq_len;
  constexpr int kKinds = 4;
  const char* const names[kKinds] = {"name", "noun he/she", "noun it", "noun they"};
  std::vector<double> sum(kKinds * H, 0.0);
  std::size_t count[kKinds] = {};
  for_each_last_layer_arc(tr, examples, [&](const LmBatch& batch, std::size_t b, const EnArc& a, const float* w) {
        if (a.relation != EnRelation::coreference || std::size_t(a.query) >= T) return;
        const std::string& pron = english_word(batch.tokens[b * T + std::size_t(a.query) - 1]).text;
        const int kind = english_word(batch.tokens[b * T + std::size_t(a.target)]).cat == EnCategory::first_name ? 0
                         : pron == "it"                                                                       ? 2
                         : pron == "they"                                                                     ? 3
                                                                                                              : 1;
        ++count[kind];
        for (std::size_t h = 0; h < H; ++h)
          sum[std::size_t(kind) * H + h] += w[((b * H + h) * T + std::size_t(a.query)) * T + std::size_t(a.target)];
  });
  std::printf("coreference by antecedent, last layer's heads:");
  for (int kind = 0; kind < kKinds; ++kind) {
    std::printf(" %s (%zu arcs)", names[kind], count[kind]);
    for (std::size_t h = 0; h < H; ++h)
      std::printf(" %.2f", count[kind] ? sum[std::size_t(kind) * H + h] / double(count[kind]) : 0.0);
    std::printf(kind + 1 < kKinds ? ";" : "\n\n");
  }
}

// Agreement arcs of the last layer's heads: the mean weight on the subject's
// head noun and on the two words before it (a determiner or an adjective, a
// first name), split by the subject's kind (a name or a common noun).
void agreement_by_subject(LmTrainer& tr, std::size_t examples) {
  const LmConfig& c = tr.model().config();
  const std::size_t H = c.num_heads, T = c.seq_len;
  std::vector<double> sum(2 * 3 * H, 0.0);  // [kind][target, target-1, target-2][head]
  std::size_t count[2] = {};
  for_each_last_layer_arc(tr, examples, [&](const LmBatch& batch, std::size_t b, const EnArc& a, const float* w) {
        if (a.relation != EnRelation::agreement || std::size_t(a.query) >= T || a.target < 2) return;
        const EnCategory cat = english_word(batch.tokens[b * T + std::size_t(a.target)]).cat;
        const int kind = cat == EnCategory::first_name || cat == EnCategory::last_name;
        ++count[kind];
        for (std::size_t d = 0; d < 3; ++d)
          for (std::size_t h = 0; h < H; ++h)
            sum[(std::size_t(kind) * 3 + d) * H + h] +=
                w[((b * H + h) * T + std::size_t(a.query)) * T + std::size_t(a.target) - d];
  });
  std::printf("agreement by subject, last layer's heads, weight on the head noun / the word before / two before:");
  for (int kind = 0; kind < 2; ++kind) {
    std::printf(" %s (%zu arcs)", kind ? "name" : "noun", count[kind]);
    for (std::size_t h = 0; h < H; ++h) {
      std::printf(" H%zu", h);
      for (std::size_t d = 0; d < 3; ++d)
        std::printf("%s%.2f", d ? "/" : " ", sum[(std::size_t(kind) * 3 + d) * H + h] / double(count[kind] ? count[kind] : 1));
    }
    std::printf(kind ? "\n\n" : ";");
  }
}

int score(const std::string& path, std::size_t examples) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LmLoaded loaded = load_lm(bytes.data(), bytes.size());
  if (!loaded.trainer) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), loaded.error.c_str());
    return 1;
  }
  LmTrainer& tr = *loaded.trainer;
  const LmTrainConfig& c = tr.config();
  const std::size_t L = c.num_layers, H = c.num_heads;
  const LmEnglishReport rep = english_heads(tr, examples);
  const LmEval ev = tr.evaluate(examples);
  std::printf("### seed %llu: %zu layers x %zu heads, d_model %zu, %s, Adam %g (warmup %zu, beta2 %g), batch %zu, "
              "%llu steps\n\n",
              (unsigned long long)c.seed, L, H, c.d_model, c.mlp ? "MLP" : "no MLP", double(c.learning_rate),
              c.warmup_steps, double(c.adam_beta2), c.batch_size, (unsigned long long)loaded.steps);
  std::printf("held-out: %zu sequences, loss %.3f; arcs:", examples, ev.loss);
  for (std::size_t r = 0; r < kEnRelationCount; ++r)
    std::printf(" %s %zu%s", english_relation_name(EnRelation(r)), rep.arcs[r], r + 1 < kEnRelationCount ? "," : "\n\n");
  std::printf("| relation |");
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t h = 0; h < H; ++h) std::printf(" %s |", head_name(l, h).c_str());
  std::printf(" best head | fixed offset | last noun |\n|---|");
  for (std::size_t k = 0; k < L * H + 3; ++k) std::printf("---|");
  std::printf("\n");
  int met = 0;
  std::string met_names;
  for (std::size_t r = 0; r < kEnRelationCount; ++r) {
    const EnRelation rel = EnRelation(r);
    std::printf("| %s |", english_relation_name(rel));
    float best = 0;
    for (std::size_t l = 0; l < L; ++l)
      for (std::size_t h = 0; h < H; ++h) {
        std::printf(" %.2f |", double(rep.score(rel, l, h)));
        best = std::max(best, rep.score(rel, l, h));
      }
    const LmEnglishBaseline& b = rep.baselines[r];
    std::printf(" **%.2f** | %.2f (%d back) | %.2f |\n", double(best), double(b.fixed_offset), b.offset,
                double(b.last_noun));
    if (best >= 0.5f && b.best() <= 0.3f) {
      ++met;
      met_names += std::string(met_names.empty() ? "" : ", ") + english_relation_name(rel);
    }
  }
  std::printf("\nagreementAccuracy %.3f (attractor %.3f, none %.3f); selectionAccuracy %.3f; coreferenceAccuracy "
              "%.3f\n\n",
              double(ev.agreement), double(ev.agreement_attractor), double(ev.agreement_plain), double(ev.selection),
              double(ev.coreference));
  coreference_by_antecedent(tr, examples);
  agreement_by_subject(tr, examples);
  // Ablation: the heads >= 0.3 on agreement off; control: as many of the lowest-scoring heads off.
  std::vector<std::pair<float, std::size_t>> order;
  for (std::size_t k = 0; k < L * H; ++k) order.push_back({rep.score(EnRelation::agreement, k / H, k % H), k});
  std::sort(order.begin(), order.end());
  std::vector<std::size_t> strong, weak;
  for (const auto& [s, k] : order)
    if (s >= kLmEnglishLabelThreshold) strong.push_back(k);
  for (std::size_t i = 0; i < strong.size(); ++i) weak.push_back(order[i].second);
  auto ablate = [&](const std::vector<std::size_t>& heads, std::string* names) {
    for (std::size_t k : heads) {
      tr.model().set_head_enabled(k / H, k % H, false);
      *names += std::string(names->empty() ? "" : ", ") + head_name(k / H, k % H);
    }
    const LmEval e = tr.evaluate(examples);
    for (std::size_t k : heads) tr.model().set_head_enabled(k / H, k % H, true);
    return e;
  };
  std::string strong_names, weak_names;
  const LmEval off = ablate(strong, &strong_names), control = ablate(weak, &weak_names);
  const double drop = double(ev.agreement_attractor) - double(off.agreement_attractor);
  std::printf("ablation: agreement heads >= 0.3 off (%s): agreementAccuracy %.3f, attractor %.3f; control, as many "
              "lowest-scoring heads off (%s): %.3f, attractor %.3f\n\n",
              strong_names.c_str(), double(off.agreement), double(off.agreement_attractor), weak_names.c_str(),
              double(control.agreement), double(control.agreement_attractor));
  std::printf("thresholds: relations with a head >= 0.5 and baselines <= 0.3: %d (%s); attractor accuracy >= 0.9: "
              "%s; ablation drop (attractor) %.3f (>= 0.2: %s)\n\n",
              met, met_names.c_str(), ev.agreement_attractor >= 0.9f ? "yes" : "no", drop,
              drop >= 0.2 && !strong.empty() ? "yes" : "no");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t seed = 1;
  std::size_t steps = 0, examples = 2000, every = 0, heads = 0, layers = 0;
  std::string save, load;
  if (argc < 3 || argc % 2 == 0) {
    std::fprintf(stderr, "usage: %s --seed S [--steps N] [--heads H] [--layers L] [--save FILE] [--every K] | --load FILE [--examples N]\n", argv[0]);
    return 2;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--seed") seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (k == "--steps") steps = std::strtoull(argv[i + 1], nullptr, 10);
    else if (k == "--save") save = argv[i + 1];
    else if (k == "--load") load = argv[i + 1];
    else if (k == "--heads") heads = std::strtoull(argv[i + 1], nullptr, 10);
    else if (k == "--layers") layers = std::strtoull(argv[i + 1], nullptr, 10);
    else if (k == "--every") every = std::strtoull(argv[i + 1], nullptr, 10);
    else if (k == "--examples") examples = std::strtoull(argv[i + 1], nullptr, 10);
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (load.empty()) return train(seed, steps, heads, layers, save, every);
  return score(load, examples);
}
