// Steps to the induction phase change under other training schedules: a
// measurement driver, not a test (bench/results/time-to-aha.md). It trains the
// induction task's model as LmTrainer does (same init and batch streams, same
// Optimizer), with the schedule taken from the command line, and prints per seed
// the first held-out evaluation (every --every steps on 256 sequences, as
// `npm run bench:training`) with accuracy >= 0.5, and, with --full, the
// issue-12 checks on the final model (tests/cpp/test_lm_training.cpp).
//   headlab_aha --lr 0.02 --warmup 300 --decay cosine --batch 32 --seeds 1-5 --full
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "headlab/lm.hpp"
#include "headlab/lm_tasks.hpp"
#include "headlab/train/optimizer.hpp"

using namespace headlab;

namespace {

struct Opts {
  float lr = 1e-2f, beta1 = 0.9f, beta2 = 0.95f, clip = 0, floor = 0;  // floor: decay to lr * floor
  std::size_t warmup = 1000, batch = 64, steps = 3000, every = 50, until = 0;
  std::string decay = "none";  // none | cosine | linear, from the end of warm-up to `steps`
  std::uint64_t seed_lo = 1, seed_hi = 5;
  bool full = false;
};

float rate(const Opts& o, std::uint64_t t) {
  if (t <= o.warmup) {  // as LmTrainer::step rounds it
    float lr = o.lr;
    lr *= float(t) / float(o.warmup);
    return lr;
  }
  if (o.decay == "none" || o.steps <= o.warmup) return o.lr;
  const double p = std::min(1.0, double(t - o.warmup) / double(o.steps - o.warmup));
  const double f = o.decay == "cosine" ? 0.5 * (1 + std::cos(M_PI * p)) : 1 - p;
  return float(o.lr * (o.floor + (1 - o.floor) * f));
}

}  // namespace

int main(int argc, char** argv) {
  Opts o;
  bool trainer = false;  // --trainer: LmTrainer at the task's defaults, for comparison
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--full") { o.full = true; continue; }
    if (a == "--trainer") { trainer = true; continue; }
    ++i;
    if (a == "--lr") o.lr = std::strtof(v, nullptr);
    else if (a == "--beta1") o.beta1 = std::strtof(v, nullptr);
    else if (a == "--beta2") o.beta2 = std::strtof(v, nullptr);
    else if (a == "--clip") o.clip = std::strtof(v, nullptr);
    else if (a == "--floor") o.floor = std::strtof(v, nullptr);
    else if (a == "--warmup") o.warmup = std::strtoul(v, nullptr, 10);
    else if (a == "--batch") o.batch = std::strtoul(v, nullptr, 10);
    else if (a == "--steps") o.steps = std::strtoul(v, nullptr, 10);
    else if (a == "--every") o.every = std::strtoul(v, nullptr, 10);
    else if (a == "--decay") o.decay = v;
    else if (a == "--seeds") {
      o.seed_lo = std::strtoull(v, nullptr, 10);
      const char* dash = std::strchr(v, '-');
      o.seed_hi = dash ? std::strtoull(dash + 1, nullptr, 10) : o.seed_lo;
    } else { std::fprintf(stderr, "unknown option %s\n", a.c_str()); return 2; }
  }
  const LmTaskSpec& spec = *find_lm_task("induction");
  std::printf("# lr %g warmup %zu decay %s floor %g beta1 %g beta2 %g clip %g batch %zu steps %zu\n", o.lr,
              o.warmup, o.decay.c_str(), o.floor, o.beta1, o.beta2, o.clip, o.batch, o.steps);
  std::size_t formed = 0;
  for (std::uint64_t seed = o.seed_lo; seed <= o.seed_hi; ++seed) {
    LmTrainConfig c = lm_train_defaults(spec, seed);
    c.batch_size = o.batch;
    LanguageModel model(LmTrainer::model_config(spec, c));
    Rng init_rng(seed, 1), data(seed, 2);
    model.init(init_rng);
    Optimizer opt(OptimizerKind::adam, model.num_params(), o.lr);
    opt.beta1 = o.beta1;
    opt.beta2 = o.beta2;
    LmBatch batch(spec.seq_len, o.batch);
    std::size_t phase = 0;
    bool diverged = false;
    if (trainer) {
      LmTrainer tr(spec, lm_train_defaults(spec, seed));
      for (std::size_t s = o.every; s <= o.steps && !phase; s += o.every) {
        tr.step(o.every);
        if (tr.evaluate(256).accuracy >= 0.5f) phase = s;
      }
      std::printf("seed %llu trainer phase %zu\n", (unsigned long long)seed, phase);
      continue;
    }
    for (std::size_t s = 1; s <= o.steps; ++s) {
      opt.set_learning_rate(rate(o, opt.steps() + 1));
      const Divergence why = opt.step_or_rollback(data, model.params(), model.grads(), [&] {
        generate_lm_batch(spec, data, o.batch, batch);
        const float loss = model.forward(batch, o.batch, true).loss;
        if (o.clip > 0) {
          double n2 = 0;
          float* g = model.grads();
          for (std::size_t k = 0; k < model.num_params(); ++k) n2 += double(g[k]) * g[k];
          const double n = std::sqrt(n2);
          if (n > o.clip)
            for (std::size_t k = 0; k < model.num_params(); ++k) g[k] = float(g[k] * (o.clip / n));
        }
        return loss;
      });
      if (why != Divergence::none) { diverged = true; break; }
      if (phase == 0 && s % o.every == 0) {
        Rng held_out(1000 + seed, 3);
        if (evaluate_lm(model, spec, held_out, 256).accuracy >= 0.5f) {
          phase = s;
          if (!o.full) break;
        }
      }
    }
    if (!o.full) {
      std::printf("seed %llu phase %zu%s\n", (unsigned long long)seed, phase, diverged ? " DIVERGED" : "");
      std::fflush(stdout);
      continue;
    }
    // The issue-12 checks (lm_runs.hpp induction_run, test_lm_training.cpp).
    Rng held_out(999, 4);
    const float acc = evaluate_lm(model, spec, held_out, 1000).accuracy;
    Rng probe(77, 5);
    const LmHeadReport rep = detect_heads(model, spec, probe, 500);
    float prev = 0, ind = 0;
    for (std::size_t i = 0; i < rep.num_heads; ++i) {
      prev = std::max(prev, rep.at(0, i).prev_token);
      ind = std::max(ind, rep.at(1, i).induction);
    }
    for (std::size_t i = 0; i < rep.num_heads; ++i)
      if (rep.at(1, i).induction >= 0.3f) model.set_head_enabled(1, i, false);
    Rng held_out2(999, 4);
    const float ablated = evaluate_lm(model, spec, held_out2, 1000).accuracy;
    const bool ok = acc >= 0.85f && prev >= 0.5f && ind >= 0.6f && acc - ablated >= 0.4f;
    formed += ok;
    std::printf("seed %llu phase %zu acc %.3f prev %.2f ind %.2f ablated %.3f %s%s\n", (unsigned long long)seed,
                phase, acc, prev, ind, ablated, ok ? "OK" : "FAIL", diverged ? " DIVERGED" : "");
    std::fflush(stdout);
  }
  if (o.full) std::printf("formed %zu of %llu\n", formed, (unsigned long long)(o.seed_hi - o.seed_lo + 1));
  return 0;
}
