#include "headlab/lm_session.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace headlab {

std::int32_t lm_stop_token(const LmTaskSpec& spec) {
  for (std::size_t i = 0; i < spec.vocab; ++i)
    if (std::strcmp(spec.token_names[i], ".") == 0) return std::int32_t(i);
  return -1;
}

LmSessionOrError LmSession::create(const LmTaskSpec& spec, const LmTrainConfig& config) {
  LmSessionOrError r;
  r.error = lm_train_config_error(spec, config);
  if (r.error.empty()) r.session.reset(new LmSession(std::make_unique<LmTrainer>(spec, config), 0));
  return r;
}

LmSessionOrError LmSession::load(const std::uint8_t* bytes, std::size_t size) {
  LmLoaded loaded = load_lm(bytes, size);
  LmSessionOrError r;
  if (!loaded.trainer) {
    r.error = loaded.error;
    return r;
  }
  r.session.reset(new LmSession(std::move(loaded.trainer), loaded.steps));
  return r;
}

LmSession::LmSession(std::unique_ptr<LmTrainer> trainer, std::uint64_t base_steps)
    : trainer_(std::move(trainer)), base_steps_(base_steps) {
  const LmTaskSpec& s = trainer_->spec();
  const LmTrainConfig& c = trainer_->config();
  const std::size_t maps = c.num_layers * c.num_heads * s.seq_len * s.seq_len;
  one_ = LmBatch(s.seq_len, 1);
  one_.size = 1;
  std::fill(one_.targets.begin(), one_.targets.end(), -1);
  maps_.assign(maps, 0.0f);
  block_.assign(maps, 0.0f);
  probs_.assign(s.vocab, 0.0f);
  log_probs_.assign(s.seq_len * s.vocab, 0.0f);
  switches_.assign(c.num_layers * c.num_heads, 1);
  weights_.assign(s.vocab, 0.0);
}

void LmSession::pad(const std::int32_t* tokens, std::size_t t) {
  const LmTaskSpec& s = trainer_->spec();
  const std::int32_t pad = s.pad_token >= 0 ? s.pad_token : s.start_token;
  std::copy(tokens, tokens + t, one_.tokens.begin());
  std::fill(one_.tokens.begin() + std::ptrdiff_t(t), one_.tokens.end(), pad);
}

void LmSession::run(const std::int32_t* tokens, std::size_t t) {
  pad(tokens, t);
  trainer_->model().forward(one_, 1, false);
}

const float* LmSession::attention(const std::int32_t* tokens, std::size_t t) {
  run(tokens, t);
  copy_maps(t);
  return block_.data();
}

const float* LmSession::log_probabilities(const std::int32_t* tokens, std::size_t t, const std::uint8_t* off,
                                          bool maps) {
  LanguageModel& m = trainer_->model();
  const std::size_t heads = trainer_->config().num_layers * trainer_->config().num_heads;
  const std::size_t h = trainer_->config().num_heads, v = trainer_->spec().vocab;
  for (std::size_t k = 0; k < heads; ++k) {
    switches_[k] = m.head_enabled(k / h, k % h) ? 1 : 0;
    if (off && off[k]) m.set_head_enabled(k / h, k % h, false);
  }
  pad(tokens, t);
  m.log_probabilities(one_.tokens.data(), log_probs_.data());
  for (std::size_t k = 0; k < heads; ++k) m.set_head_enabled(k / h, k % h, switches_[k] != 0);
  std::copy(m.probabilities() + (t - 1) * v, m.probabilities() + t * v, probs_.data());
  if (maps) copy_maps(t);
  return log_probs_.data();
}

void LmSession::copy_maps(std::size_t t) {
  const std::size_t big_t = trainer_->spec().seq_len;
  const std::size_t maps = trainer_->config().num_layers * trainer_->config().num_heads;
  LanguageModel& m = trainer_->model();
  for (std::size_t l = 0; l < trainer_->config().num_layers; ++l) {
    const std::size_t h = trainer_->config().num_heads;
    std::copy(m.attention(l), m.attention(l) + h * big_t * big_t, maps_.data() + l * h * big_t * big_t);
  }
  for (std::size_t k = 0; k < maps; ++k)
    for (std::size_t i = 0; i < t; ++i)
      std::copy(maps_.data() + (k * big_t + i) * big_t, maps_.data() + (k * big_t + i) * big_t + t,
                block_.data() + (k * t + i) * t);
}

const float* LmSession::predict(const std::int32_t* tokens, std::size_t t) {
  const std::size_t v = trainer_->spec().vocab;
  run(tokens, t);
  const float* p = trainer_->model().probabilities() + (t - 1) * v;
  std::copy(p, p + v, probs_.data());
  return probs_.data();
}

std::size_t LmSession::generate(std::int32_t* tokens, std::size_t t, std::size_t max_new, float temperature,
                                std::uint64_t seed) {
  const LmTaskSpec& s = trainer_->spec();
  const std::int32_t stop = lm_stop_token(s);
  const std::int32_t start = s.start_token;
  Rng rng(seed, 7);
  // The arg-max without the start token (the lowest id on ties).
  const auto greedy = [&](const float* p) {
    std::int32_t best = -1;
    for (std::size_t i = 0; i < s.vocab; ++i)
      if (std::int32_t(i) != start && (best < 0 || p[i] > p[best])) best = std::int32_t(i);
    return best;
  };
  for (std::size_t made = 0; made < max_new && t < s.seq_len; ++made) {
    const float* p = predict(tokens, t);
    std::int32_t next = -1;
    if (temperature > 0.0f) {
      for (std::size_t i = 0; i < s.vocab; ++i)
        weights_[i] = p[i] > 0.0f && std::int32_t(i) != start ? std::exp(std::log(double(p[i])) / double(temperature)) : 0.0;
      next = std::int32_t(draw_index(weights_.data(), s.vocab, rng));
    }
    if (next < 0) next = greedy(p);  // temperature 0, or every weight underflowed
    if (next == s.pad_token) break;
    tokens[t++] = next;
    if (next == stop) break;
  }
  return t;
}

}  // namespace headlab
