// HeadLab's own language models (lm.hpp) through the pretrained block (pretrained.hpp): the
// LM's parameter buffer written as a safetensors file under the HeadlabLanguageModel table's
// names (pretrained_arch.cpp), loaded as a PretrainedModel and run. Its logits at every position,
// log-softmaxed, equal the LM's own forward (LanguageModel::log_probabilities, the training
// code's pass), with and without the MLP, on a prefix and the whole sequence, heads ablated or not.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "headlab/lm.hpp"
#include "headlab/pretrained.hpp"
#include "reference_pretrained.hpp"

using namespace headlab;
using namespace headlab::test;

namespace {

FileTensor raw(const std::string& name, const float* p, std::vector<std::uint64_t> shape) {
  std::uint64_t n = 1;
  for (auto x : shape) n *= x;
  FileTensor f{name, "F32", std::move(shape), {}};
  const auto* b = reinterpret_cast<const std::uint8_t*>(p);
  f.bytes.assign(b, b + n * 4);
  return f;
}

// The LM's parameters as the table names them (layout in lm.hpp: every matrix [in, out]).
std::vector<std::uint8_t> lm_safetensors(const LanguageModel& m) {
  const LmConfig& c = m.config();
  const LmLayout& y = m.layout();
  const float* p = m.params();
  const std::uint64_t d = c.d_model, f = 4 * d, v = c.vocab;
  std::vector<FileTensor> t{
      raw("tok_emb", p + y.tok_emb, {v, d}),
      raw("pos_emb", p + y.pos_emb, {c.seq_len, d}),
      raw("lnf_g", p + y.lnf_g, {d}),
      raw("lnf_b", p + y.lnf_b, {d}),
      raw("w_unembed", p + y.w_unembed, {d, v}),
      raw("b_unembed", p + y.b_unembed, {v}),
  };
  for (std::size_t l = 0; l < c.num_layers; ++l) {
    const LmLayerLayout& a = y.layers[l];
    const std::string n = "layers." + std::to_string(l) + ".";
    for (auto [name, at] : {std::pair{"ln1_g", a.ln1_g},
                            {"ln1_b", a.ln1_b},
                            {"b_q", a.b_q},
                            {"b_k", a.b_k},
                            {"b_v", a.b_v},
                            {"b_o", a.b_o}})
      t.push_back(raw(n + name, p + at, {d}));
    for (auto [name, at] : {std::pair{"w_q", a.w_q}, {"w_k", a.w_k}, {"w_v", a.w_v}, {"w_o", a.w_o}})
      t.push_back(raw(n + name, p + at, {d, d}));
    if (!c.mlp) continue;
    t.push_back(raw(n + "ln2_g", p + a.ln2_g, {d}));
    t.push_back(raw(n + "ln2_b", p + a.ln2_b, {d}));
    t.push_back(raw(n + "w_fc", p + a.w_fc, {d, f}));
    t.push_back(raw(n + "b_fc", p + a.b_fc, {f}));
    t.push_back(raw(n + "w_proj", p + a.w_proj, {f, d}));
    t.push_back(raw(n + "b_proj", p + a.b_proj, {d}));
  }
  return write_safetensors(t);
}

std::unique_ptr<PretrainedModel> as_pretrained(const LanguageModel& m) {
  const LmConfig& c = m.config();
  PretrainedConfig p;
  p.architecture = PretrainedArch::headlab;
  p.num_layers = c.num_layers;
  p.num_heads = c.num_heads;
  p.d_model = c.d_model;
  p.mlp = c.mlp;
  p.d_ff = c.mlp ? 4 * c.d_model : 0;
  p.vocab = c.vocab;
  p.context = c.seq_len;
  p.ln_eps = c.ln_eps;
  p.windows.assign(c.num_layers, 0);
  REQUIRE(pretrained_config_error(p) == "");
  auto out = std::make_unique<PretrainedModel>(p);
  const std::vector<std::uint8_t> file = lm_safetensors(m);
  std::uint8_t* buffer = out->alloc_file(file.size());
  REQUIRE(buffer != nullptr);
  std::memcpy(buffer, file.data(), file.size());
  const std::string added = out->add_safetensors("model.safetensors", buffer, file.size());
  REQUIRE_MESSAGE(added.empty(), added);
  const std::string finished = out->finish();
  REQUIRE_MESSAGE(finished.empty(), finished);
  return out;
}

}  // namespace

TEST_CASE(
    "lm through the pretrained block: the table's forward equals the LM's own, with and without the MLP") {
  const LmTaskSpec& spec = *find_lm_task("cricket");
  for (bool mlp : {true, false}) {
    LmTrainConfig tc = lm_train_defaults(spec, 4);
    tc.num_layers = 2;
    tc.num_heads = 4;
    tc.d_model = 16;
    tc.mlp = mlp;
    tc.batch_size = 8;
    LmTrainer trainer(spec, tc);
    trainer.step(20);  // biases and gains away from their initial 0 and 1
    LanguageModel& lm = trainer.model();
    const LmConfig& c = lm.config();
    auto pre = as_pretrained(lm);
    CHECK(pre->parameters() == lm.num_params());

    LmBatch batch(c.seq_len, 1);
    Rng rng(11, 3);
    generate_lm_batch(spec, rng, 1, batch);
    const std::size_t v = c.vocab, heads = c.num_layers * c.num_heads;
    std::vector<float> want(c.seq_len * v);
    for (int ablate = 0; ablate < 2; ++ablate) {
      std::vector<std::uint8_t> off(heads, 0);
      if (ablate) off[0 * c.num_heads + 2] = off[1 * c.num_heads + 1] = 1;
      for (std::size_t k = 0; k < heads; ++k) lm.set_head_enabled(k / c.num_heads, k % c.num_heads, !off[k]);
      lm.log_probabilities(batch.tokens.data(), want.data());
      for (std::size_t t : {std::size_t(5), c.seq_len}) {
        PretrainedRunOptions o;
        o.all_logits = true;
        o.ablate = off.data();
        PretrainedRunResult r;
        REQUIRE(pre->run(batch.tokens.data(), t, o, &r) == "");
        REQUIRE(r.logits.size() == t * v);
        double worst = 0;
        for (std::size_t i = 0; i < t; ++i) {
          const float* z = r.logits.data() + i * v;
          const double top = *std::max_element(z, z + v);
          double sum = 0;
          for (std::size_t j = 0; j < v; ++j) sum += std::exp(double(z[j]) - top);
          for (std::size_t j = 0; j < v; ++j)
            worst = std::max(worst, std::fabs(double(z[j]) - top - std::log(sum) - double(want[i * v + j])));
        }
        CHECK_MESSAGE(worst <= 1e-5, "mlp " << mlp << " ablate " << ablate << " t " << t
                                            << ": max |log p (pretrained block) - log p (LM)| " << worst);
      }
    }
  }
}
