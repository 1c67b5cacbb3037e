// Embind layer of the language model, compiled into the training module
// (headlab_train) next to trainer_bindings.cpp. JavaScript checks argument
// types, token ids and lengths first; C++ checks config ranges and files and
// returns error strings, never aborts. Token sequences go in through
// tokenBuffer(), a view of a buffer this object owns that JS writes just before
// the call that reads it. Results are value_objects; arrays in them are copies
// made in one call (copies.hpp), never views of the wasm heap.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "copies.hpp"
#include "headlab/english.hpp"
#include "headlab/lm_english.hpp"
#include "headlab/lm_session.hpp"
#include "headlab/lm_tasks.hpp"
#ifdef HEADLAB_THREADS
#include "headlab/lm_parallel.hpp"
#endif

namespace {

using emscripten::val;
using headlab::bindings::copy_of;
using headlab::bindings::string_list;

double num(std::size_t x) { return static_cast<double>(x); }

// LmTrainConfig's fields that JS sets; createLanguageModel fills every one, from the
// task's defaults (LmTaskSpec::defaults, sent with the task table) where not given.
struct LmConfigJs {
  std::string task;
  double num_layers = 0, num_heads = 0, d_model = 0;
  bool mlp = false;
  double seed = 0;
  float learning_rate = 0;
  double batch_size = 0;
};

struct LmStepJs {
  double step = 0;
  float loss = 0;
  std::string diverged;  // "" while training is fine, else the divergence message
};

// step 0: training has not diverged (JS answers null).
struct LmDivergenceJs {
  double step = 0;
  float learning_rate = 0;
  std::string reason, message;
};

struct LmEvalJs {
  float loss = 0, accuracy = 0, next_token_accuracy = 0;
  double examples = 0;
};

// coreference and positionPeak are removed for tasks other than cricket.
struct LmHeadJs {
  double layer = 0, head = 0;
  float previous_token = 0, induction = 0, duplicate_token = 0, first_token = 0;
  float coreference = 0, position_peak = 0;
  val label = val::null();  // the detector's name, or null
};

// bestFixedPosition and bestCoreference are removed for tasks other than cricket.
struct LmHeadReportJs {
  val heads = val::null();  // LmHeadJs[], layer-major
  float threshold = 0, best_fixed_position = 0, best_coreference = 0;
};

struct LmDefaultsJs {
  double num_layers = 0, num_heads = 0, d_model = 0;
  bool mlp = false;
  float learning_rate = 0;
  double batch_size = 0, steps = 0, seed = 0;
};

struct LmTaskJs {
  std::string name, description, metric;
  double seq_len = 0;
  val vocabulary = val::null();  // string[vocab]
  std::string start_token;
  val pad_token = val::null(), stop_token = val::null();  // a token name, or null
  LmDefaultsJs defaults;
};

val token_name_or_null(const headlab::LmTaskSpec& s, std::int32_t id) {
  return id >= 0 ? val(std::string(s.token_names[id])) : val::null();
}

LmTaskJs task_js(const headlab::LmTaskSpec& s) {
  LmTaskJs t;
  t.name = s.name;
  t.description = s.description;
  t.metric = s.metric;
  t.seq_len = num(s.seq_len);
  t.vocabulary = string_list(s.token_names, s.vocab);
  t.start_token = s.token_names[s.start_token];
  t.pad_token = token_name_or_null(s, s.pad_token);
  t.stop_token = token_name_or_null(s, headlab::lm_stop_token(s));
  const headlab::LmDefaults& d = s.defaults;
  t.defaults = {num(d.num_layers), num(d.num_heads), num(d.d_model), d.mlp, d.learning_rate,
                num(d.batch_size),  num(d.steps),     static_cast<double>(d.seed)};
  return t;
}

class LanguageModelJs {
 public:
  // Returns "" on success, else a message naming the field.
  std::string init(const LmConfigJs& c) {
    const headlab::LmTaskSpec* spec = headlab::find_lm_task(c.task);
    if (!spec) {
      std::string known;
      for (std::size_t i = 0; i < headlab::lm_task_count(); ++i)
        known += std::string(i ? ", " : "") + headlab::lm_task_at(i).name;
      return "task: unknown task '" + c.task + "' (known: " + known + ")";
    }
    // The task's schedule (warm-up, Adam betas) with the options given.
    headlab::LmTrainConfig config = headlab::lm_train_defaults(*spec);
    config.num_layers = static_cast<std::size_t>(c.num_layers);
    config.num_heads = static_cast<std::size_t>(c.num_heads);
    config.d_model = static_cast<std::size_t>(c.d_model);
    config.mlp = c.mlp;
    config.learning_rate = c.learning_rate;
    config.batch_size = static_cast<std::size_t>(c.batch_size);
    config.seed = static_cast<std::uint64_t>(c.seed);
    return adopt(headlab::LmSession::create(*spec, config));
  }

  // bytes: address and length in the wasm heap of a save() image (reserveFile).
  std::string load(double address, double size) {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(static_cast<std::uintptr_t>(address));
    return adopt(headlab::LmSession::load(bytes, static_cast<std::size_t>(size)));
  }

#ifdef HEADLAB_THREADS
  // The threaded training module (headlab_train_threads) only: each step's batch split over
  // `threads` threads (1 = the one-thread path). "" or a message naming threads.
  std::string set_threads(double threads) {
    return headlab::set_lm_threads(s_->trainer(), static_cast<std::size_t>(threads));
  }
#endif

  LmStepJs step(double n) {
    const headlab::LmResult r = s_->step(static_cast<std::size_t>(n));
    return {static_cast<double>(s_->steps()), r.loss, s_->diverged_at() ? s_->divergence_message() : ""};
  }

  LmDivergenceJs divergence() const {
    LmDivergenceJs d;
    if (s_->diverged_at() == 0) return d;
    d.step = static_cast<double>(s_->diverged_at());
    d.learning_rate = s_->config().learning_rate;
    d.reason = s_->trainer().divergence() == headlab::Divergence::loss ? "loss" : "update";
    d.message = s_->divergence_message();
    return d;
  }

  double steps() const { return static_cast<double>(s_->steps()); }

  // An LmEvalJs; english adds agreementAccuracy (and with / without an attractor),
  // selectionAccuracy, coreferenceAccuracy and the arcs each counts.
  val evaluate(double n) {
    const headlab::LmEval e = s_->evaluate(static_cast<std::size_t>(n));
    val o(LmEvalJs{e.loss, e.accuracy, e.next_token, n});
    if (english()) {
      o.set("agreementAccuracy", e.agreement);
      o.set("agreementAccuracyAttractor", e.agreement_attractor);
      o.set("agreementAccuracyNoAttractor", e.agreement_plain);
      o.set("selectionAccuracy", e.selection);
      o.set("coreferenceAccuracy", e.coreference);
      val arcs = val::object();
      arcs.set("agreement", num(e.agreement_arcs));
      arcs.set("attractor", num(e.attractor_arcs));
      arcs.set("selection", num(e.selection_arcs));
      arcs.set("coreference", num(e.coreference_arcs));
      o.set("arcs", arcs);
    }
    return o;
  }

  // english: per relation (the keys of headScores), the baselines on the heads' held-out arcs:
  // { fixedOffset, offset, lastNoun, best, arcs }.
  val baselines(double n) {
    const headlab::LmEnglishReport r = s_->english_heads(static_cast<std::size_t>(n));
    val o = val::object();
    for (std::size_t k = 0; k < headlab::kEnRelationCount; ++k) {
      const headlab::LmEnglishBaseline& b = r.baselines[k];
      val x = val::object();
      x.set("fixedOffset", b.fixed_offset);
      x.set("offset", b.offset);
      x.set("lastNoun", b.last_noun);
      x.set("best", b.best());
      x.set("arcs", num(r.arcs[k]));
      o.set(headlab::english_relation_name(headlab::EnRelation(k)), x);
    }
    return o;
  }

  // english: the grammar's arcs of the first t tokens of the token buffer (positions index them,
  // 0 = the start token): { arcs: [{ relation, query, target, label, answer, foil, cls, attractor }] }
  // or { error, word } (word: the position where parsing stops, t when the text ends early).
  val relations(double t) {
    std::vector<std::string> words;
    for (std::size_t i = 0; i < static_cast<std::size_t>(t); ++i) words.push_back(s_->spec().token_names[tokens_[i]]);
    const headlab::EnParse p = headlab::english_relations(words);
    val o = val::object();
    if (!p.ok) {
      o.set("error", p.error);
      o.set("word", p.error_word);
      return o;
    }
    val arcs = val::array();
    std::size_t i = 0;
    for (const headlab::EnArc& a : p.arcs) {
      val x = val::object();
      x.set("relation", std::string(headlab::english_relation_name(a.relation)));
      x.set("query", a.query);
      x.set("target", a.target);
      x.set("label", std::string(headlab::english_relation_label(a.relation)));
      x.set("answer", a.answer >= 0 ? val(std::string(s_->spec().token_names[a.answer])) : val::null());
      if (a.relation == headlab::EnRelation::agreement) {
        x.set("foil", std::string(s_->spec().token_names[a.foil]));
        x.set("attractor", a.attractor);
      }
      if (a.cls >= 0) x.set("class", std::string(headlab::english_class_name(a.cls)));
      arcs.set(i++, x);
    }
    o.set("arcs", arcs);
    return o;
  }

  // An LmHeadReportJs.
  val head_report(double n) {
    const headlab::LmHeadReport r = s_->heads(static_cast<std::size_t>(n));
    const bool cricket = s_->spec().kind == headlab::LmTaskKind::cricket;
    LmHeadReportJs report;
    report.heads = val::array();
    for (std::size_t l = 0; l < r.num_layers; ++l)
      for (std::size_t h = 0; h < r.num_heads; ++h) {
        const headlab::LmHeadScores& s = r.at(l, h);
        val o(LmHeadJs{num(l), num(h), s.prev_token, s.induction, s.duplicate, s.first_token, s.coreference,
                       s.position_peak, *s.label ? val(std::string(s.label)) : val::null()});
        if (!cricket) {
          o.delete_("coreference");
          o.delete_("positionPeak");
        }
        report.heads.set(l * r.num_heads + h, o);
      }
    report.threshold = headlab::kLmHeadThreshold;
    if (english()) {
      // The relation scores replace the generic induction and previousToken (previousToken is the
      // same number; induction is scored on repeated names only) and the label.
      const headlab::LmEnglishReport e = s_->english_heads(static_cast<std::size_t>(n));
      for (std::size_t l = 0; l < r.num_layers; ++l)
        for (std::size_t h = 0; h < r.num_heads; ++h) {
          val o = report.heads[l * r.num_heads + h];
          for (std::size_t k = 0; k < headlab::kEnRelationCount; ++k)
            o.set(headlab::english_relation_name(headlab::EnRelation(k)), e.score(headlab::EnRelation(k), l, h));
          const int label = e.label(l, h);
          o.set("label", label >= 0 ? val(std::string(headlab::english_relation_label(headlab::EnRelation(label))))
                                    : val::null());
          o.set("relation", label >= 0 ? val(std::string(headlab::english_relation_name(headlab::EnRelation(label))))
                                       : val::null());
        }
      report.threshold = headlab::kLmEnglishLabelThreshold;
    }
    report.best_fixed_position = r.best_fixed_position;
    report.best_coreference = r.best_coreference;
    val o(report);
    if (!cricket) {
      o.delete_("bestFixedPosition");
      o.delete_("bestCoreference");
    }
    return o;
  }

  // Where JS writes a token sequence (ids) just before attention, predict and generate: [seqLen].
  val token_buffer() {
    tokens_.resize(s_->spec().seq_len);
    return val(emscripten::typed_memory_view(tokens_.size(), tokens_.data()));
  }

  // Float32Array [numLayers, numHeads, t, t] for the first t tokens of the token buffer.
  val attention(double t) {
    const std::size_t n = static_cast<std::size_t>(t);
    const headlab::LmTrainConfig& c = s_->config();
    return copy_of(s_->attention(tokens_.data(), n), c.num_layers * c.num_heads * n * n);
  }

  // Float32Array [vocab]: next-token probabilities after the first t tokens.
  val predict(double t) {
    return copy_of(s_->predict(tokens_.data(), static_cast<std::size_t>(t)), s_->spec().vocab);
  }

  // Where JS writes the heads a run() switches off just before the call: [numLayers * numHeads], 1 = off.
  val off_buffer() {
    off_.resize(s_->config().num_layers * s_->config().num_heads);
    return val(emscripten::typed_memory_view(off_.size(), off_.data()));
  }

  // One forward of the first t tokens of the token buffer with the heads of the off buffer switched off
  // for this call: { logProbs: Float32Array [t, vocab], probabilities: Float32Array [vocab] (predict's,
  // after the last token), attention?: Float32Array [numLayers, numHeads, t, t] when `maps` }.
  val run(double t, bool maps) {
    const std::size_t n = static_cast<std::size_t>(t), v = s_->spec().vocab;
    const headlab::LmTrainConfig& c = s_->config();
    val o = val::object();
    o.set("logProbs", copy_of(s_->log_probabilities(tokens_.data(), n, off_.data(), maps), n * v));
    o.set("probabilities", copy_of(s_->last_probabilities(), v));
    if (maps) o.set("attention", copy_of(s_->last_attention(), c.num_layers * c.num_heads * n * n));
    return o;
  }

  // Weights the model holds (floats).
  double parameters() { return num(s_->trainer().model().num_params()); }

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

  // A Uint8Array holding the file, or the reason it cannot be saved (a string).
  val save() const {
    std::string error;
    const std::vector<std::uint8_t> bytes = s_->save(&error);
    if (!error.empty()) return val(error);
    return copy_of(bytes.data(), bytes.size());
  }

  LmConfigJs config() const {
    const headlab::LmTrainConfig& c = s_->config();
    return {s_->spec().name, num(c.num_layers), num(c.num_heads), num(c.d_model), c.mlp,
            static_cast<double>(c.seed), c.learning_rate, num(c.batch_size)};
  }

  std::string task_name() const { return s_->spec().name; }

  bool english() const { return s_->spec().kind == headlab::LmTaskKind::english; }

 private:
  std::string adopt(headlab::LmSessionOrError r) {
    if (!r.error.empty()) return r.error;
    s_ = std::move(r.session);
    tokens_.assign(s_->spec().seq_len, 0);
    off_.assign(s_->config().num_layers * s_->config().num_heads, 0);
    return "";
  }

  std::unique_ptr<headlab::LmSession> s_;
  std::vector<std::int32_t> tokens_;
  std::vector<std::uint8_t> off_;
};

val language_task_table() {
  val a = val::array();
  for (std::size_t i = 0; i < headlab::lm_task_count(); ++i) a.set(i, task_js(headlab::lm_task_at(i)));
  return a;
}

// The grammar's sentences with their dependencies (issue 35's syntax heads): n sequences of seed, each
// { words: [..], arcs: [{ relation, dependent, head }] } without the start token (positions index words).
val english_syntax(double n, double seed) {
  headlab::Rng rng(static_cast<std::uint64_t>(seed), 35);
  val out = val::array();
  for (std::size_t k = 0; k < static_cast<std::size_t>(n); ++k) {
    headlab::EnSequence q;
    headlab::generate_english(rng, q);
    val words = val::array();
    for (std::size_t t = 1; t < q.length; ++t) words.set(t - 1, headlab::english_word(q.tokens[t]).text);
    val arcs = val::array();
    std::size_t i = 0;
    for (const headlab::EnDependencyArc& a : headlab::english_dependencies(q.tokens, q.length, q.arcs)) {
      val x = val::object();
      x.set("relation", std::string(headlab::english_dependency_name(a.relation)));
      x.set("dependent", a.dependent - 1);
      x.set("head", a.head - 1);
      arcs.set(i++, x);
    }
    val item = val::object();
    item.set("words", words);
    item.set("arcs", arcs);
    out.set(k, item);
  }
  return out;
}

}  // namespace

EMSCRIPTEN_BINDINGS(headlab_language_model) {
  using namespace emscripten;
  value_object<LmConfigJs>("LanguageModelConfig")
      .field("task", &LmConfigJs::task)
      .field("numLayers", &LmConfigJs::num_layers)
      .field("numHeads", &LmConfigJs::num_heads)
      .field("dModel", &LmConfigJs::d_model)
      .field("mlp", &LmConfigJs::mlp)
      .field("seed", &LmConfigJs::seed)
      .field("learningRate", &LmConfigJs::learning_rate)
      .field("batchSize", &LmConfigJs::batch_size);
  value_object<LmStepJs>("LanguageModelStep")
      .field("step", &LmStepJs::step)
      .field("loss", &LmStepJs::loss)
      .field("diverged", &LmStepJs::diverged);
  value_object<LmDivergenceJs>("LanguageModelDivergence")
      .field("step", &LmDivergenceJs::step)
      .field("learningRate", &LmDivergenceJs::learning_rate)
      .field("reason", &LmDivergenceJs::reason)
      .field("message", &LmDivergenceJs::message);
  value_object<LmEvalJs>("LanguageModelEvaluation")
      .field("loss", &LmEvalJs::loss)
      .field("accuracy", &LmEvalJs::accuracy)
      .field("nextTokenAccuracy", &LmEvalJs::next_token_accuracy)
      .field("examples", &LmEvalJs::examples);
  value_object<LmHeadJs>("LanguageHeadScore")
      .field("layer", &LmHeadJs::layer)
      .field("head", &LmHeadJs::head)
      .field("previousToken", &LmHeadJs::previous_token)
      .field("induction", &LmHeadJs::induction)
      .field("duplicateToken", &LmHeadJs::duplicate_token)
      .field("firstToken", &LmHeadJs::first_token)
      .field("coreference", &LmHeadJs::coreference)
      .field("positionPeak", &LmHeadJs::position_peak)
      .field("label", &LmHeadJs::label);
  value_object<LmHeadReportJs>("LanguageHeadReport")
      .field("heads", &LmHeadReportJs::heads)
      .field("threshold", &LmHeadReportJs::threshold)
      .field("bestFixedPosition", &LmHeadReportJs::best_fixed_position)
      .field("bestCoreference", &LmHeadReportJs::best_coreference);
  value_object<LmDefaultsJs>("LanguageTaskDefaults")
      .field("numLayers", &LmDefaultsJs::num_layers)
      .field("numHeads", &LmDefaultsJs::num_heads)
      .field("dModel", &LmDefaultsJs::d_model)
      .field("mlp", &LmDefaultsJs::mlp)
      .field("learningRate", &LmDefaultsJs::learning_rate)
      .field("batchSize", &LmDefaultsJs::batch_size)
      .field("steps", &LmDefaultsJs::steps)
      .field("seed", &LmDefaultsJs::seed);
  value_object<LmTaskJs>("LanguageTask")
      .field("name", &LmTaskJs::name)
      .field("description", &LmTaskJs::description)
      .field("metric", &LmTaskJs::metric)
      .field("seqLen", &LmTaskJs::seq_len)
      .field("vocabulary", &LmTaskJs::vocabulary)
      .field("startToken", &LmTaskJs::start_token)
      .field("padToken", &LmTaskJs::pad_token)
      .field("stopToken", &LmTaskJs::stop_token)
      .field("defaults", &LmTaskJs::defaults);
  class_<LanguageModelJs>("LanguageModelCore")
      .constructor<>()
      .function("init", &LanguageModelJs::init)
      .function("load", &LanguageModelJs::load)
      .function("step", &LanguageModelJs::step)
      .function("steps", &LanguageModelJs::steps)
      .function("divergence", &LanguageModelJs::divergence)
      .function("evaluate", &LanguageModelJs::evaluate)
      .function("headReport", &LanguageModelJs::head_report)
      .function("baselines", &LanguageModelJs::baselines)
      .function("relations", &LanguageModelJs::relations)
      .function("tokenBuffer", &LanguageModelJs::token_buffer)
      .function("attention", &LanguageModelJs::attention)
      .function("predict", &LanguageModelJs::predict)
      .function("generate", &LanguageModelJs::generate)
      .function("offBuffer", &LanguageModelJs::off_buffer)
      .function("run", &LanguageModelJs::run)
      .function("parameters", &LanguageModelJs::parameters)
      .function("setHeadEnabled", &LanguageModelJs::set_head_enabled)
      .function("headEnabled", &LanguageModelJs::head_enabled)
      .function("save", &LanguageModelJs::save)
      .function("config", &LanguageModelJs::config)
      .function("taskName", &LanguageModelJs::task_name)
#ifdef HEADLAB_THREADS
      .function("setThreads", &LanguageModelJs::set_threads)
#endif
      ;
  function("languageTaskTable", &language_task_table);
  function("englishSyntax", &english_syntax);
}
