// Embind layer of the trainer: its own wasm module (headlab_train), which
// web/lib/headlab.js loads the first time a page asks for training. JavaScript
// checks argument types first; C++ checks ranges and returns error strings,
// never aborts.
// Results are value_objects (plain JS objects, fields in the order registered
// below); arrays in them are copies made in one call (copies.hpp), never
// views of the wasm heap.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <malloc.h>

#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "arena.hpp"
#include "headlab/experiments.hpp"
#include "headlab/tasks.hpp"
#include "headlab/trainer.hpp"
#include "copies.hpp"

namespace {

using emscripten::val;
using headlab::bindings::copy_of;
using headlab::bindings::list_of;
using headlab::bindings::string_list;

// TrainerConfig as JS sees it. trainerDefaults() sends TrainerConfig{}'s values, which
// createTrainer starts from, so the defaults live in trainer.hpp only.
struct TrainerConfigJs {
  std::string task;
  double num_heads = 0, d_model = 0, seed = 0;
  float learning_rate = 0;
  double batch_size = 0;
  std::string optimizer;  // "adam" or "sgd"
  bool causal = false;
};

TrainerConfigJs to_js(const headlab::TrainerConfig& c) {
  TrainerConfigJs j;
  j.task = c.task;
  j.num_heads = static_cast<double>(c.num_heads);
  j.d_model = static_cast<double>(c.d_model);
  j.seed = static_cast<double>(c.seed);
  j.learning_rate = c.learning_rate;
  j.batch_size = static_cast<double>(c.batch_size);
  j.optimizer = c.optimizer == headlab::OptimizerKind::sgd ? "sgd" : "adam";
  j.causal = c.causal;
  return j;
}

// JS has checked the types and that the counts are positive integers below 2^31.
headlab::TrainerConfig from_js(const TrainerConfigJs& j) {
  headlab::TrainerConfig c;
  c.task = j.task;
  c.num_heads = static_cast<std::size_t>(j.num_heads);
  c.d_model = static_cast<std::size_t>(j.d_model);
  c.seed = static_cast<std::uint64_t>(j.seed);
  c.learning_rate = j.learning_rate;
  c.batch_size = static_cast<std::size_t>(j.batch_size);
  c.optimizer = j.optimizer == "sgd" ? headlab::OptimizerKind::sgd : headlab::OptimizerKind::adam;
  c.causal = j.causal;
  return c;
}

struct StepJs {
  double step = 0;
  float loss = 0, accuracy = 0;
  std::string diverged;  // "" while training is fine, else Trainer::divergence_message()
};

// step 0: training has not diverged (JS answers null).
struct DivergenceJs {
  double step = 0;
  float learning_rate = 0;
  std::string optimizer, reason, message;
};

struct EvalJs {
  float loss = 0, accuracy = 0;
  val relation_accuracy = val::null();  // number[R]
};

struct HeadMetricsJs {
  float entropy = 0, mean_distance = 0;
  val relation_share = val::null();  // number[R]
};

struct TaskJs {
  std::string name, description;
  double seq_len = 0, vocab = 0, num_relations = 0, query_position = 0;
  val relation_positions = val::null(), relation_names = val::null(), token_names = val::null();
};

TaskJs task_js(const headlab::TaskSpec& s) {
  TaskJs t;
  t.name = s.name;
  t.description = s.description;
  t.seq_len = static_cast<double>(s.seq_len);
  t.vocab = static_cast<double>(s.vocab);
  t.num_relations = static_cast<double>(s.num_relations);
  t.query_position = static_cast<double>(s.query_position);
  t.relation_positions = list_of(s.relation_positions, s.num_relations);
  t.relation_names = string_list(s.relation_names, s.num_relations);
  t.token_names = string_list(s.token_names, s.vocab);
  return t;
}

// The model's parameter blocks by the names exportModel uses, in the order they sit in
// params(): a block ends where the next begins, the last at ParamLayout::total.
struct NamedBlock {
  const char* name;
  std::size_t headlab::ParamLayout::*offset;
};
constexpr NamedBlock kBlocks[] = {
    {"tokEmb", &headlab::ParamLayout::tok_emb}, {"posEmb", &headlab::ParamLayout::pos_emb},
    {"wQ", &headlab::ParamLayout::w_q},         {"wK", &headlab::ParamLayout::w_k},
    {"wV", &headlab::ParamLayout::w_v},         {"wO", &headlab::ParamLayout::w_o},
    {"bQ", &headlab::ParamLayout::b_q},         {"bK", &headlab::ParamLayout::b_k},
    {"bV", &headlab::ParamLayout::b_v},         {"bO", &headlab::ParamLayout::b_o},
    {"wRead", &headlab::ParamLayout::w_read},   {"bRead", &headlab::ParamLayout::b_read},
};

class TrainerJs {
 public:
  // Returns "" on success, else a message naming the field.
  std::string init(const TrainerConfigJs& c) { return adopt(headlab::Trainer::create(from_js(c))); }

  // bytes: address and length in the wasm heap of a save() image.
  std::string load(double address, double size) {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(static_cast<std::uintptr_t>(address));
    return adopt(headlab::Trainer::load(bytes, static_cast<std::size_t>(size)));
  }

  StepJs step(double n) {
    const headlab::StepResult r = t_->step(static_cast<std::size_t>(n));
    return {static_cast<double>(r.step), r.loss, r.accuracy, r.diverged ? t_->divergence_message() : ""};
  }

  DivergenceJs divergence() const {
    DivergenceJs d;
    if (t_->diverged_at() == 0) return d;
    d.step = static_cast<double>(t_->diverged_at());
    d.learning_rate = t_->config().learning_rate;
    d.optimizer = to_js(t_->config()).optimizer;
    d.reason = t_->divergence() == headlab::Divergence::loss ? "loss" : "update";
    d.message = t_->divergence_message();
    return d;
  }

  EvalJs evaluate(double n) {
    const headlab::EvalResult r = t_->evaluate(static_cast<std::size_t>(n));
    return {r.loss, r.accuracy, list_of(r.relation_accuracy, t_->task().num_relations)};
  }

  // One entry per head.
  val head_metrics(double n) {
    const auto metrics = t_->head_metrics(static_cast<std::size_t>(n));
    val a = val::array();
    for (std::size_t h = 0; h < metrics.size(); ++h) {
      const auto& m = metrics[h];
      a.set(h, HeadMetricsJs{m.entropy, m.mean_distance, list_of(m.relation_share, t_->task().num_relations)});
    }
    return a;
  }

  // Float32Array [numHeads, T, T] on the probe sequence.
  val attention_weights() {
    const std::vector<float> w = t_->attention_weights();
    return copy_of(w.data(), w.size());
  }

  // Int32Array [T].
  val probe_tokens() const {
    const auto& tokens = t_->probe_tokens();
    return copy_of(tokens.data(), tokens.size());
  }

  // Float32Array [T, dModel]: the probe's embedded inputs to the attention layer.
  val probe_inputs() const {
    std::vector<float> x(t_->task().seq_len * t_->config().d_model);
    t_->probe_inputs(x.data());
    return copy_of(x.data(), x.size());
  }

  // A Float32Array copy of one parameter block, by its name in kBlocks; null for another name.
  val parameters(const std::string& name) const {
    const headlab::ParamLayout& l = t_->model().layout();
    for (const NamedBlock* b = std::begin(kBlocks); b != std::end(kBlocks); ++b) {
      if (name != b->name) continue;
      const std::size_t end = b + 1 == std::end(kBlocks) ? l.total : l.*(b + 1)->offset;
      return copy_of(t_->model().params() + l.*b->offset, end - l.*b->offset);
    }
    return val::null();
  }

  TaskJs task_info() const { return task_js(t_->task()); }
  TrainerConfigJs config() const { return to_js(t_->config()); }
  double steps() const { return static_cast<double>(t_->steps()); }

  void set_head_enabled(double head, bool on) { t_->set_head_enabled(static_cast<std::size_t>(head), on); }
  bool head_enabled(double head) const { return t_->head_enabled(static_cast<std::size_t>(head)); }

  // Uint8Array: the model file.
  val save() const {
    const std::vector<std::uint8_t> bytes = t_->save();
    return copy_of(bytes.data(), bytes.size());
  }

 private:
  std::string adopt(headlab::TrainerOrError r) {
    if (!r.error.empty()) return r.error;
    t_ = std::move(r.trainer);
    return "";
  }

  std::unique_ptr<headlab::Trainer> t_;
};

headlab::bindings::Buffer g_file;  // a model file on its way into load()

// Room for a model file of `bytes` bytes; its address, or 0 when the heap cannot grow.
double reserve_file(double bytes) {
  return static_cast<double>(reinterpret_cast<std::uintptr_t>(g_file.reserve(static_cast<std::size_t>(bytes))));
}

// Bytes malloc has handed out in this module and not taken back (for leak tests).
double heap_in_use() { return static_cast<double>(mallinfo().uordblks); }

TrainerConfigJs trainer_defaults() { return to_js(headlab::TrainerConfig{}); }

val task_table() {
  val a = val::array();
  for (std::size_t i = 0; i < headlab::task_count(); ++i) a.set(i, task_js(headlab::task_at(i)));
  return a;
}

// HeadsTrialConfig as JS sends it, every field given and type-checked by JavaScript.
struct HeadsTrialConfigJs {
  std::string task;
  double d_model = 0, num_heads = 0, seed = 0, steps = 0, eval_examples = 0;
};

// error "": the trial ran; else what was wrong with the config and nothing else is set.
struct HeadsTrialJs {
  std::string error;
  double d_k = 0;
  float loss = 0, accuracy = 0;
  val relation_accuracy = val::null(), best_share = val::null();  // number[R]
  double relations_with_own_head = 0;
  bool diverged = false;
};

// One trial of the choosing-h experiment (experiments.hpp).
HeadsTrialJs heads_trial(const HeadsTrialConfigJs& j) {
  headlab::HeadsTrialConfig config;
  config.task = j.task;
  config.d_model = static_cast<std::size_t>(j.d_model);
  config.num_heads = static_cast<std::size_t>(j.num_heads);
  config.seed = static_cast<std::uint64_t>(j.seed);
  config.steps = static_cast<std::size_t>(j.steps);
  config.eval_examples = static_cast<std::size_t>(j.eval_examples);
  const headlab::HeadsTrial r = headlab::heads_trial(config);
  HeadsTrialJs o;
  o.error = r.error;
  if (!r.error.empty()) return o;
  o.d_k = static_cast<double>(r.d_k);
  o.loss = r.loss;
  o.accuracy = r.accuracy;
  o.relation_accuracy = list_of(r.relation_accuracy, r.num_relations);
  o.best_share = list_of(r.best_share, r.num_relations);
  o.relations_with_own_head = static_cast<double>(r.relations_with_own_head);
  o.diverged = r.diverged;
  return o;
}

}  // namespace

EMSCRIPTEN_BINDINGS(headlab_trainer) {
  using namespace emscripten;
  value_object<TrainerConfigJs>("TrainerConfig")
      .field("task", &TrainerConfigJs::task)
      .field("numHeads", &TrainerConfigJs::num_heads)
      .field("dModel", &TrainerConfigJs::d_model)
      .field("seed", &TrainerConfigJs::seed)
      .field("learningRate", &TrainerConfigJs::learning_rate)
      .field("batchSize", &TrainerConfigJs::batch_size)
      .field("optimizer", &TrainerConfigJs::optimizer)
      .field("causal", &TrainerConfigJs::causal);
  value_object<StepJs>("TrainerStep")
      .field("step", &StepJs::step)
      .field("loss", &StepJs::loss)
      .field("accuracy", &StepJs::accuracy)
      .field("diverged", &StepJs::diverged);
  value_object<DivergenceJs>("TrainerDivergence")
      .field("step", &DivergenceJs::step)
      .field("learningRate", &DivergenceJs::learning_rate)
      .field("optimizer", &DivergenceJs::optimizer)
      .field("reason", &DivergenceJs::reason)
      .field("message", &DivergenceJs::message);
  value_object<EvalJs>("TrainerEvaluation")
      .field("loss", &EvalJs::loss)
      .field("accuracy", &EvalJs::accuracy)
      .field("relationAccuracy", &EvalJs::relation_accuracy);
  value_object<HeadMetricsJs>("HeadMetrics")
      .field("entropy", &HeadMetricsJs::entropy)
      .field("meanDistance", &HeadMetricsJs::mean_distance)
      .field("relationShare", &HeadMetricsJs::relation_share);
  value_object<TaskJs>("Task")
      .field("name", &TaskJs::name)
      .field("description", &TaskJs::description)
      .field("seqLen", &TaskJs::seq_len)
      .field("vocab", &TaskJs::vocab)
      .field("numRelations", &TaskJs::num_relations)
      .field("queryPosition", &TaskJs::query_position)
      .field("relationPositions", &TaskJs::relation_positions)
      .field("relationNames", &TaskJs::relation_names)
      .field("tokenNames", &TaskJs::token_names);
  value_object<HeadsTrialConfigJs>("HeadsTrialConfig")
      .field("task", &HeadsTrialConfigJs::task)
      .field("dModel", &HeadsTrialConfigJs::d_model)
      .field("numHeads", &HeadsTrialConfigJs::num_heads)
      .field("seed", &HeadsTrialConfigJs::seed)
      .field("steps", &HeadsTrialConfigJs::steps)
      .field("evalExamples", &HeadsTrialConfigJs::eval_examples);
  value_object<HeadsTrialJs>("HeadsTrial")
      .field("error", &HeadsTrialJs::error)
      .field("dK", &HeadsTrialJs::d_k)
      .field("loss", &HeadsTrialJs::loss)
      .field("accuracy", &HeadsTrialJs::accuracy)
      .field("relationAccuracy", &HeadsTrialJs::relation_accuracy)
      .field("bestShare", &HeadsTrialJs::best_share)
      .field("relationsWithOwnHead", &HeadsTrialJs::relations_with_own_head)
      .field("diverged", &HeadsTrialJs::diverged);
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
      .function("steps", &TrainerJs::steps)
      .function("setHeadEnabled", &TrainerJs::set_head_enabled)
      .function("headEnabled", &TrainerJs::head_enabled)
      .function("save", &TrainerJs::save);
  function("trainerDefaults", &trainer_defaults);
  function("taskTable", &task_table);
  function("headsTrial", &heads_trial);
  function("reserveFile", &reserve_file);
  function("heapInUse", &heap_in_use);
  function("heapMax", &headlab::bindings::heap_max);
}
