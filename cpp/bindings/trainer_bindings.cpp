// Embind layer of the trainer: its own wasm module (headlab_train), which
// web/lib/headlab.js loads the first time a page asks for training. JavaScript
// checks argument types first; C++ checks ranges and returns error strings,
// never aborts.
// Arrays come back as typed-array views of buffers this object owns, which
// the JS side copies at once.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <malloc.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "arena.hpp"
#include "headlab/experiments.hpp"
#include "headlab/tasks.hpp"
#include "headlab/trainer.hpp"

namespace {

using emscripten::val;

val float_array(const float* p, std::size_t n) {
  val a = val::array();
  for (std::size_t i = 0; i < n; ++i) a.call<void>("push", p[i]);
  return a;
}

val int_array(const std::vector<int>& v) {
  val a = val::array();
  for (int x : v) a.call<void>("push", x);
  return a;
}

class TrainerJs {
 public:
  // Returns "" on success, else a message naming the field.
  std::string init(val c) {
    headlab::TrainerConfig config;
    config.task = c["task"].as<std::string>();
    config.num_heads = static_cast<std::size_t>(c["numHeads"].as<double>());
    config.d_model = static_cast<std::size_t>(c["dModel"].as<double>());
    config.seed = static_cast<std::uint64_t>(c["seed"].as<double>());
    config.learning_rate = c["learningRate"].as<float>();
    config.batch_size = static_cast<std::size_t>(c["batchSize"].as<double>());
    config.optimizer = c["optimizer"].as<std::string>() == "sgd" ? headlab::OptimizerKind::sgd
                                                                  : headlab::OptimizerKind::adam;
    config.causal = c["causal"].as<bool>();
    return adopt(headlab::Trainer::create(config));
  }

  // bytes: address and length in the wasm heap of a save() image.
  std::string load(double address, double size) {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(static_cast<std::uintptr_t>(address));
    return adopt(headlab::Trainer::load(bytes, static_cast<std::size_t>(size)));
  }

  // diverged: null, or the message of Trainer::divergence_message().
  val step(double n) {
    const headlab::StepResult r = t_->step(static_cast<std::size_t>(n));
    val o = val::object();
    o.set("step", static_cast<double>(r.step));
    o.set("loss", r.loss);
    o.set("accuracy", r.accuracy);
    o.set("diverged", r.diverged ? val(t_->divergence_message()) : val::null());
    return o;
  }

  // null, or { step, learningRate, optimizer, reason, message } once training has diverged.
  val divergence() const {
    if (t_->diverged_at() == 0) return val::null();
    const headlab::TrainerConfig& c = t_->config();
    val o = val::object();
    o.set("step", static_cast<double>(t_->diverged_at()));
    o.set("learningRate", c.learning_rate);
    o.set("optimizer", std::string(c.optimizer == headlab::OptimizerKind::sgd ? "sgd" : "adam"));
    o.set("reason", std::string(t_->divergence() == headlab::Divergence::loss ? "loss" : "update"));
    o.set("message", t_->divergence_message());
    return o;
  }

  val evaluate(double n) {
    const headlab::EvalResult r = t_->evaluate(static_cast<std::size_t>(n));
    val o = val::object();
    o.set("loss", r.loss);
    o.set("accuracy", r.accuracy);
    o.set("relationAccuracy", float_array(r.relation_accuracy, t_->task().num_relations));
    return o;
  }

  val head_metrics(double n) {
    const auto metrics = t_->head_metrics(static_cast<std::size_t>(n));
    val a = val::array();
    for (const auto& m : metrics) {
      val o = val::object();
      o.set("entropy", m.entropy);
      o.set("meanDistance", m.mean_distance);
      o.set("relationShare", float_array(m.relation_share, t_->task().num_relations));
      a.call<void>("push", o);
    }
    return a;
  }

  val attention_weights() {
    buffer_ = t_->attention_weights();
    return val(emscripten::typed_memory_view(buffer_.size(), buffer_.data()));
  }

  val probe_tokens() const {
    const auto& tokens = t_->probe_tokens();
    return val(emscripten::typed_memory_view(tokens.size(), tokens.data()));
  }

  val probe_inputs() {
    buffer_.resize(t_->task().seq_len * t_->config().d_model);
    t_->probe_inputs(buffer_.data());
    return val(emscripten::typed_memory_view(buffer_.size(), buffer_.data()));
  }

  // One parameter block of the model, by name: tokEmb, posEmb, wQ, wK, wV, wO, bQ, bK, bV, bO, wRead, bRead.
  val parameters(const std::string& name) const {
    const headlab::ParamLayout& l = t_->model().layout();
    const std::size_t offsets[] = {l.tok_emb, l.pos_emb, l.w_q, l.w_k, l.w_v, l.w_o, l.b_q,
                                   l.b_k,     l.b_v,     l.b_o, l.w_read, l.b_read, l.total};
    const char* names[] = {"tokEmb", "posEmb", "wQ", "wK", "wV", "wO", "bQ", "bK", "bV", "bO", "wRead", "bRead"};
    for (std::size_t i = 0; i < 12; ++i)
      if (name == names[i])
        return val(emscripten::typed_memory_view(offsets[i + 1] - offsets[i], t_->model().params() + offsets[i]));
    return val::null();
  }

  val task_info() const { return task_object(t_->task()); }

  val config() const {
    const headlab::TrainerConfig& c = t_->config();
    val o = val::object();
    o.set("task", c.task);
    o.set("numHeads", static_cast<double>(c.num_heads));
    o.set("dModel", static_cast<double>(c.d_model));
    o.set("seed", static_cast<double>(c.seed));
    o.set("learningRate", c.learning_rate);
    o.set("batchSize", static_cast<double>(c.batch_size));
    o.set("optimizer", std::string(c.optimizer == headlab::OptimizerKind::sgd ? "sgd" : "adam"));
    o.set("causal", c.causal);
    o.set("step", static_cast<double>(t_->steps()));
    return o;
  }

  void set_head_enabled(double head, bool on) { t_->set_head_enabled(static_cast<std::size_t>(head), on); }
  bool head_enabled(double head) const { return t_->head_enabled(static_cast<std::size_t>(head)); }

  val save() {
    saved_ = t_->save();
    return val(emscripten::typed_memory_view(saved_.size(), saved_.data()));
  }

  static val task_object(const headlab::TaskSpec& s) {
    val o = val::object();
    o.set("name", std::string(s.name));
    o.set("description", std::string(s.description));
    o.set("seqLen", static_cast<double>(s.seq_len));
    o.set("vocab", static_cast<double>(s.vocab));
    o.set("numRelations", static_cast<double>(s.num_relations));
    o.set("queryPosition", static_cast<double>(s.query_position));
    std::vector<int> positions(s.relation_positions, s.relation_positions + s.num_relations);
    o.set("relationPositions", int_array(positions));
    val rel = val::array(), tok = val::array();
    for (std::size_t r = 0; r < s.num_relations; ++r) rel.call<void>("push", std::string(s.relation_names[r]));
    for (std::size_t t = 0; t < s.vocab; ++t) tok.call<void>("push", std::string(s.token_names[t]));
    o.set("relationNames", rel);
    o.set("tokenNames", tok);
    return o;
  }

 private:
  std::string adopt(headlab::TrainerOrError r) {
    if (!r.error.empty()) return r.error;
    t_ = std::move(r.trainer);
    return "";
  }

  std::unique_ptr<headlab::Trainer> t_;
  std::vector<float> buffer_;
  std::vector<std::uint8_t> saved_;
};

headlab::bindings::Buffer g_file;  // a model file on its way into load()

// Room for a model file of `bytes` bytes; its address, or 0 when the heap cannot grow.
double reserve_file(double bytes) {
  return static_cast<double>(reinterpret_cast<std::uintptr_t>(g_file.reserve(static_cast<std::size_t>(bytes))));
}

// Bytes malloc has handed out in this module and not taken back (for leak tests).
double heap_in_use() { return static_cast<double>(mallinfo().uordblks); }

val task_table() {
  val a = val::array();
  for (std::size_t i = 0; i < headlab::task_count(); ++i) a.call<void>("push", TrainerJs::task_object(headlab::task_at(i)));
  return a;
}

// One trial of the choosing-h experiment (experiments.hpp); c holds task, dModel,
// numHeads, seed, steps, evalExamples, already type-checked by JavaScript.
val heads_trial(val c) {
  headlab::HeadsTrialConfig config;
  config.task = c["task"].as<std::string>();
  config.d_model = static_cast<std::size_t>(c["dModel"].as<double>());
  config.num_heads = static_cast<std::size_t>(c["numHeads"].as<double>());
  config.seed = static_cast<std::uint64_t>(c["seed"].as<double>());
  config.steps = static_cast<std::size_t>(c["steps"].as<double>());
  config.eval_examples = static_cast<std::size_t>(c["evalExamples"].as<double>());
  const headlab::HeadsTrial r = headlab::heads_trial(config);
  val o = val::object();
  if (!r.error.empty()) {
    o.set("error", r.error);
    return o;
  }
  o.set("dK", static_cast<double>(r.d_k));
  o.set("loss", r.loss);
  o.set("accuracy", r.accuracy);
  o.set("relationAccuracy", float_array(r.relation_accuracy, r.num_relations));
  o.set("bestShare", float_array(r.best_share, r.num_relations));
  o.set("relationsWithOwnHead", static_cast<double>(r.relations_with_own_head));
  o.set("diverged", r.diverged);
  return o;
}

}  // namespace

EMSCRIPTEN_BINDINGS(headlab_trainer) {
  using namespace emscripten;
  class_<TrainerJs>("TrainerCore")
      .constructor<>()
      .function("init", &TrainerJs::init)
      .function("load", &TrainerJs::load)
      .function("step", &TrainerJs::step)
      .function("divergence", &TrainerJs::divergence)
      .function("evaluate", &TrainerJs::evaluate)
      .function("headMetrics", &TrainerJs::head_metrics)
      .function("attentionWeights", &TrainerJs::attention_weights)
      .function("probeTokens", &TrainerJs::probe_tokens)
      .function("probeInputs", &TrainerJs::probe_inputs)
      .function("parameters", &TrainerJs::parameters)
      .function("taskInfo", &TrainerJs::task_info)
      .function("config", &TrainerJs::config)
      .function("setHeadEnabled", &TrainerJs::set_head_enabled)
      .function("headEnabled", &TrainerJs::head_enabled)
      .function("save", &TrainerJs::save);
  function("taskTable", &task_table);
  function("headsTrial", &heads_trial);
  function("reserveFile", &reserve_file);
  function("heapInUse", &heap_in_use);
  function("heapMax", &headlab::bindings::heap_max);
}
