// Embind layer of the language model, compiled into the training module
// (headlab_train) next to trainer_bindings.cpp. JavaScript checks argument
// types, token ids and lengths first; C++ checks config ranges and files and
// returns error strings, never aborts. Token sequences go in through
// tokenBuffer(), a view of a buffer this object owns; arrays come back as
// typed-array views the JS side copies at once.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "headlab/lm_session.hpp"
#include "headlab/lm_tasks.hpp"

namespace {

using emscripten::val;

double num(std::size_t x) { return static_cast<double>(x); }

class LanguageModelJs {
 public:
  // Returns "" on success, else a message naming the field.
  std::string init(val c) {
    const std::string task = c["task"].as<std::string>();
    const headlab::LmTaskSpec* spec = headlab::find_lm_task(task);
    if (!spec) {
      std::string known;
      for (std::size_t i = 0; i < headlab::lm_task_count(); ++i)
        known += std::string(i ? ", " : "") + headlab::lm_task_at(i).name;
      return "task: unknown task '" + task + "' (known: " + known + ")";
    }
    headlab::LmTrainConfig config;
    config.num_layers = static_cast<std::size_t>(c["numLayers"].as<double>());
    config.num_heads = static_cast<std::size_t>(c["numHeads"].as<double>());
    config.d_model = static_cast<std::size_t>(c["dModel"].as<double>());
    config.mlp = c["mlp"].as<bool>();
    config.learning_rate = c["learningRate"].as<float>();
    config.batch_size = static_cast<std::size_t>(c["batchSize"].as<double>());
    config.seed = static_cast<std::uint64_t>(c["seed"].as<double>());
    return adopt(headlab::LmSession::create(*spec, config));
  }

  // bytes: address and length in the wasm heap of a save() image (reserveFile).
  std::string load(double address, double size) {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(static_cast<std::uintptr_t>(address));
    return adopt(headlab::LmSession::load(bytes, static_cast<std::size_t>(size)));
  }

  val step(double n) {
    const headlab::LmResult r = s_->step(static_cast<std::size_t>(n));
    val o = val::object();
    o.set("step", static_cast<double>(s_->steps()));
    o.set("loss", r.loss);
    o.set("diverged", s_->diverged_at() ? val(s_->divergence_message()) : val::null());
    return o;
  }

  // null, or { step, learningRate, reason, message } once training has diverged.
  val divergence() const {
    if (s_->diverged_at() == 0) return val::null();
    val o = val::object();
    o.set("step", static_cast<double>(s_->diverged_at()));
    o.set("learningRate", s_->config().learning_rate);
    o.set("reason", std::string(s_->trainer().divergence() == headlab::Divergence::loss ? "loss" : "update"));
    o.set("message", s_->divergence_message());
    return o;
  }

  double steps() const { return static_cast<double>(s_->steps()); }

  val evaluate(double n) {
    const headlab::LmEval e = s_->evaluate(static_cast<std::size_t>(n));
    val o = val::object();
    o.set("loss", e.loss);
    o.set("accuracy", e.accuracy);
    o.set("nextTokenAccuracy", e.next_token);
    o.set("examples", n);
    return o;
  }

  // { heads: [{ layer, head, previousToken, induction, duplicateToken, firstToken,
  //   coreference?, positionPeak?, label }], bestFixedPosition?, bestCoreference? }
  val head_report(double n) {
    const headlab::LmHeadReport r = s_->heads(static_cast<std::size_t>(n));
    const bool cricket = s_->spec().kind == headlab::LmTaskKind::cricket;
    val heads = val::array();
    for (std::size_t l = 0; l < r.num_layers; ++l)
      for (std::size_t h = 0; h < r.num_heads; ++h) {
        const headlab::LmHeadScores& s = r.at(l, h);
        val o = val::object();
        o.set("layer", num(l));
        o.set("head", num(h));
        o.set("previousToken", s.prev_token);
        o.set("induction", s.induction);
        o.set("duplicateToken", s.duplicate);
        o.set("firstToken", s.first_token);
        if (cricket) {
          o.set("coreference", s.coreference);
          o.set("positionPeak", s.position_peak);
        }
        o.set("label", *s.label ? val(std::string(s.label)) : val::null());
        heads.call<void>("push", o);
      }
    val o = val::object();
    o.set("heads", heads);
    o.set("threshold", headlab::kLmHeadThreshold);
    if (cricket) {
      o.set("bestFixedPosition", r.best_fixed_position);
      o.set("bestCoreference", r.best_coreference);
    }
    return o;
  }

  // Where JS writes a token sequence (ids) before attention, predict and generate: [seqLen].
  val token_buffer() {
    tokens_.resize(s_->spec().seq_len);
    return val(emscripten::typed_memory_view(tokens_.size(), tokens_.data()));
  }

  // [numLayers, numHeads, t, t] for the first t tokens of the token buffer.
  val attention(double t) {
    const std::size_t n = static_cast<std::size_t>(t);
    const headlab::LmTrainConfig& c = s_->config();
    return val(emscripten::typed_memory_view(c.num_layers * c.num_heads * n * n, s_->attention(tokens_.data(), n)));
  }

  // [vocab]: next-token probabilities after the first t tokens.
  val predict(double t) {
    return val(emscripten::typed_memory_view(s_->spec().vocab, s_->predict(tokens_.data(), static_cast<std::size_t>(t))));
  }

  // Extends the first t tokens of the token buffer in place; returns the new length.
  double generate(double t, double max_new, float temperature, double seed) {
    return num(s_->generate(tokens_.data(), static_cast<std::size_t>(t), static_cast<std::size_t>(max_new), temperature,
                            static_cast<std::uint64_t>(seed)));
  }

  void set_head_enabled(double layer, double head, bool on) {
    s_->set_head_enabled(static_cast<std::size_t>(layer), static_cast<std::size_t>(head), on);
  }
  bool head_enabled(double layer, double head) const {
    return s_->head_enabled(static_cast<std::size_t>(layer), static_cast<std::size_t>(head));
  }

  // A Uint8Array view of the file, or the reason it cannot be saved (a string).
  val save() {
    std::string error;
    saved_ = s_->save(&error);
    if (!error.empty()) return val(error);
    return val(emscripten::typed_memory_view(saved_.size(), saved_.data()));
  }

  val config() const {
    const headlab::LmTrainConfig& c = s_->config();
    val o = val::object();
    o.set("task", std::string(s_->spec().name));
    o.set("numLayers", num(c.num_layers));
    o.set("numHeads", num(c.num_heads));
    o.set("dModel", num(c.d_model));
    o.set("mlp", c.mlp);
    o.set("seed", static_cast<double>(c.seed));
    o.set("learningRate", c.learning_rate);
    o.set("batchSize", num(c.batch_size));
    return o;
  }

  std::string task_name() const { return s_->spec().name; }

  static val task_object(const headlab::LmTaskSpec& s) {
    val o = val::object();
    o.set("name", std::string(s.name));
    o.set("description", std::string(s.description));
    o.set("metric", std::string(s.metric));
    o.set("seqLen", num(s.seq_len));
    val vocabulary = val::array();
    for (std::size_t t = 0; t < s.vocab; ++t) vocabulary.call<void>("push", std::string(s.token_names[t]));
    o.set("vocabulary", vocabulary);
    o.set("startToken", std::string(s.token_names[s.start_token]));
    o.set("padToken", s.pad_token >= 0 ? val(std::string(s.token_names[s.pad_token])) : val::null());
    const std::int32_t stop = headlab::lm_stop_token(s);
    o.set("stopToken", stop >= 0 ? val(std::string(s.token_names[stop])) : val::null());
    const headlab::LmDefaults& d = s.defaults;
    val defaults = val::object();
    defaults.set("numLayers", num(d.num_layers));
    defaults.set("numHeads", num(d.num_heads));
    defaults.set("dModel", num(d.d_model));
    defaults.set("mlp", d.mlp);
    defaults.set("learningRate", d.learning_rate);
    defaults.set("batchSize", num(d.batch_size));
    defaults.set("steps", num(d.steps));
    defaults.set("seed", static_cast<double>(d.seed));
    o.set("defaults", defaults);
    return o;
  }

 private:
  std::string adopt(headlab::LmSessionOrError r) {
    if (!r.error.empty()) return r.error;
    s_ = std::move(r.session);
    tokens_.assign(s_->spec().seq_len, 0);
    return "";
  }

  std::unique_ptr<headlab::LmSession> s_;
  std::vector<std::int32_t> tokens_;
  std::vector<std::uint8_t> saved_;
};

val language_task_table() {
  val a = val::array();
  for (std::size_t i = 0; i < headlab::lm_task_count(); ++i)
    a.call<void>("push", LanguageModelJs::task_object(headlab::lm_task_at(i)));
  return a;
}

}  // namespace

EMSCRIPTEN_BINDINGS(headlab_language_model) {
  using namespace emscripten;
  class_<LanguageModelJs>("LanguageModelCore")
      .constructor<>()
      .function("init", &LanguageModelJs::init)
      .function("load", &LanguageModelJs::load)
      .function("step", &LanguageModelJs::step)
      .function("steps", &LanguageModelJs::steps)
      .function("divergence", &LanguageModelJs::divergence)
      .function("evaluate", &LanguageModelJs::evaluate)
      .function("headReport", &LanguageModelJs::head_report)
      .function("tokenBuffer", &LanguageModelJs::token_buffer)
      .function("attention", &LanguageModelJs::attention)
      .function("predict", &LanguageModelJs::predict)
      .function("generate", &LanguageModelJs::generate)
      .function("setHeadEnabled", &LanguageModelJs::set_head_enabled)
      .function("headEnabled", &LanguageModelJs::head_enabled)
      .function("save", &LanguageModelJs::save)
      .function("config", &LanguageModelJs::config)
      .function("taskName", &LanguageModelJs::task_name);
  function("languageTaskTable", &language_task_table);
}
