// Embind layer of the pretrained-checkpoint module (headlab_pretrained). JavaScript
// reads config.json and the tokenizer; this class holds the weights and runs the
// model. Errors come back as strings ("" = ok; methods that return data return a
// string instead on error), never aborts. Files go in through allocFile (a buffer
// the core owns, which JS fills once through HEAPU8) and addSafetensors. Token
// sequences go in through tokenBuffer(), a view JS writes just before the call that
// reads it. Arrays coming out are copies (copies.hpp), never views of the heap.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "arena.hpp"
#include "copies.hpp"
#include "headlab/pretrained.hpp"
#ifdef HEADLAB_THREADS
#include "headlab/pretrained_pool.hpp"
#endif

namespace {

using emscripten::val;
using headlab::bindings::copy_of;

double num(std::size_t x) {
  return static_cast<double>(x);
}

bool is_object(const val& v) {
  return !v.isNull() && v.typeOf().as<std::string>() == "object";
}

// A non-negative integer field of cfg, or an error naming it.
bool size_field(const val& cfg, const char* name, std::size_t* out, std::string* error) {
  const val v = cfg[name];
  if (!v.isNumber()) {
    *error = std::string(name) + " must be a number";
    return false;
  }
  const double d = v.as<double>();
  if (!(d >= 0) || d != std::floor(d) || d > 1e12) {
    *error = std::string(name) + " must be a non-negative integer";
    return false;
  }
  *out = static_cast<std::size_t>(d);
  return true;
}

class PretrainedCoreJs {
 public:
  // cfg: { architecture: 'gpt2' | 'gpt_neo' | a class name (LlamaForCausalLM, ...), numLayers,
  //        numHeads, dModel, dFF, vocabSize, contextLength, layerNormEps, scaleScores,
  //        windows: number[], activation: 'gelu_new' (GPT-2, GPT-Neo), dtype?: 'F32' | 'F16' | 'BF16',
  //        numKeyValueHeads?, headDim?, ropeTheta?, rotaryFraction?, attentionBias?, mlpBias?,
  //        tieEmbeddings?, ropeScaling?: { factor, lowFreqFactor, highFreqFactor, originalContext },
  //        typeVocabSize?, positionOffset? (the encoders) }
  std::string configure(val cfg) {
    if (model_) return "configure: already configured";
    if (!is_object(cfg)) return "configure: cfg must be an object";
    headlab::PretrainedConfig c;
    const val arch = cfg["architecture"];
    const std::string a = arch.isString() ? arch.as<std::string>() : "";
    if (a == "gpt2")
      c.architecture = headlab::PretrainedArch::gpt2;
    else if (a == "gpt_neo")
      c.architecture = headlab::PretrainedArch::gpt_neo;
    else if (!headlab::pretrained_arch_from_name(a, &c.architecture))
      return "architecture must be 'gpt2' or 'gpt_neo' or one of " + headlab::pretrained_arch_names() +
             ", not '" + a + "'";
    const bool gpt = c.architecture == headlab::PretrainedArch::gpt2 ||
                     c.architecture == headlab::PretrainedArch::gpt_neo;
    std::string error;
    if (!size_field(cfg, "numLayers", &c.num_layers, &error) ||
        !size_field(cfg, "numHeads", &c.num_heads, &error) ||
        !size_field(cfg, "dModel", &c.d_model, &error) || !size_field(cfg, "dFF", &c.d_ff, &error) ||
        !size_field(cfg, "vocabSize", &c.vocab, &error) ||
        !size_field(cfg, "contextLength", &c.context, &error))
      return error;
    const val eps = cfg["layerNormEps"];
    if (!eps.isNumber()) return "layerNormEps must be a number";
    c.ln_eps = eps.as<float>();
    const val scale = cfg["scaleScores"];
    if (!scale.isTrue() && !scale.isFalse()) return "scaleScores must be a boolean";
    c.scale_scores = scale.isTrue();
    const val windows = cfg["windows"];
    if (!windows.isArray()) return "windows must be an array with one number per layer";
    const std::size_t n = windows["length"].as<std::size_t>();
    for (std::size_t i = 0; i < n; ++i) {
      const val w = windows[i];
      if (!w.isNumber() || !(w.as<double>() >= 0) || w.as<double>() != std::floor(w.as<double>()))
        return "windows[" + std::to_string(i) + "] must be a non-negative integer (0 = global)";
      c.windows.push_back(w.as<std::size_t>());
    }
    const val act = cfg["activation"];
    if (gpt && (!act.isString() || act.as<std::string>() != "gelu_new"))
      return "activation must be 'gelu_new' (the only one GPT-2 and GPT-Neo checkpoints use here)";
    // The rotary families (each optional, defaults as PretrainedConfig's).
    if (!cfg["numKeyValueHeads"].isUndefined() && !size_field(cfg, "numKeyValueHeads", &c.num_kv_heads, &error))
      return error;
    if (!cfg["headDim"].isUndefined() && !size_field(cfg, "headDim", &c.head_dim, &error)) return error;
    if (!cfg["typeVocabSize"].isUndefined() && !size_field(cfg, "typeVocabSize", &c.type_vocab, &error))
      return error;
    double offset = 0;
    auto number = [&](const char* name, double* out) {
      const val x = cfg[name];
      if (x.isUndefined()) return true;
      if (!x.isNumber()) {
        error = std::string(name) + " must be a number";
        return false;
      }
      *out = x.as<double>();
      return true;
    };
    auto flag = [&](const char* name, bool* out) {
      const val x = cfg[name];
      if (x.isUndefined()) return true;
      if (!x.isTrue() && !x.isFalse()) {
        error = std::string(name) + " must be a boolean";
        return false;
      }
      *out = x.isTrue();
      return true;
    };
    if (!number("positionOffset", &offset)) return error;
    if (!(offset >= 0 && offset < 65536) || offset != std::floor(offset))
      return "positionOffset must be a non-negative integer";
    c.position_offset = static_cast<std::size_t>(offset);
    if (!number("ropeTheta", &c.rope_theta) || !number("rotaryFraction", &c.rotary_fraction) ||
        !flag("attentionBias", &c.attention_bias) || !flag("mlpBias", &c.mlp_bias) ||
        !flag("tieEmbeddings", &c.tie_embeddings))
      return error;
    const val rs = cfg["ropeScaling"];
    if (!rs.isUndefined() && !rs.isNull()) {
      if (!is_object(rs)) return "ropeScaling must be an object { factor, lowFreqFactor, highFreqFactor, originalContext }";
      const val f = rs["factor"], lo = rs["lowFreqFactor"], hi = rs["highFreqFactor"], oc = rs["originalContext"];
      if (!f.isNumber() || !lo.isNumber() || !hi.isNumber() || !oc.isNumber())
        return "ropeScaling must have numbers factor, lowFreqFactor, highFreqFactor, originalContext";
      c.rope_factor = f.as<double>(), c.rope_low_freq_factor = lo.as<double>();
      c.rope_high_freq_factor = hi.as<double>(), c.rope_original_context = oc.as<double>();
    }
    const val dtype = cfg["dtype"];
    if (dtype.isString())
      c.dtype = dtype.as<std::string>();
    else if (!dtype.isUndefined() && !dtype.isNull())
      return "dtype must be 'F32', 'F16', 'BF16' or absent";
    error = headlab::pretrained_config_error(c);
    if (!error.empty()) return error;
    model_ = std::make_unique<headlab::PretrainedModel>(c);
    return "";
  }

  // Address of a buffer of byteLength bytes, or 0 when memory runs out (or not configured).
  double alloc_file(double bytes) {
    if (!model_ || !(bytes >= 0)) return 0;
    return static_cast<double>(
        reinterpret_cast<std::uintptr_t>(model_->alloc_file(static_cast<std::size_t>(bytes))));
  }

  std::string add_safetensors(std::string file, double address, double bytes) {
    if (!model_) return file + ": configure() first";
    auto* p = reinterpret_cast<std::uint8_t*>(static_cast<std::uintptr_t>(address));
    return model_->add_safetensors(file, p, static_cast<std::size_t>(bytes));
  }

  std::string finish() { return model_ ? model_->finish() : "configure() first"; }

  val info() const {
    val o = val::object();
    o.set("parameters", model_ ? num(model_->parameters()) : 0.0);
    o.set("bytes", model_ ? num(model_->weight_bytes()) : 0.0);
    o.set("dtype", model_ ? model_->dtype() : std::string());
    o.set("numKeyValueHeads", model_ ? num(model_->block().kv_heads) : 0.0);
    o.set("headDim", model_ ? num(model_->block().head_dim) : 0.0);
    o.set("encoder", model_ ? !model_->block().causal : false);
    o.set("hiddenOutput", model_ ? model_->block().hidden_output : false);
    return o;
  }

  val token_buffer(double n) {
    tokens_.resize(std::max<std::size_t>(static_cast<std::size_t>(n), 1));
    return val(emscripten::typed_memory_view(tokens_.size(), tokens_.data()));
  }

  // options: { attention, allLogits, ablate /* L*H, 1 = off */, lens, lensTopK, tokenTypes /* T */,
  //            patchSource /* ids */, patchHeads /* L*H, 1 = from patchSource's run */ }
  val run(double t_in, val options) {
    std::string error;
    const std::size_t t = tokens_length(t_in, &error);
    if (!error.empty()) return val(error);
    headlab::PretrainedRunOptions o;
    std::vector<std::uint8_t> ablate;
    std::vector<std::int32_t> types, patch_source;
    std::vector<std::uint8_t> patch;
    if (is_object(options)) {
      o.attention = options["attention"].isTrue();
      o.all_logits = options["allLogits"].isTrue();
      o.lens = options["lens"].isTrue();
      const val k = options["lensTopK"];
      if (k.isNumber()) o.lens_top_k = k.as<std::size_t>();
      const val a = options["ablate"];
      if (!a.isUndefined() && !a.isNull()) {
        error = head_mask(a, "ablate", &ablate);
        if (!error.empty()) return val(error);
        o.ablate = ablate.data();
      }
      const val ps = options["patchSource"];
      if (!ps.isUndefined() && !ps.isNull()) {
        patch_source = emscripten::convertJSArrayToNumberVector<std::int32_t>(ps);
        error = head_mask(options["patchHeads"], "patchHeads", &patch);
        if (!error.empty()) return val(error);
        o.patch_source = patch_source.data();
        o.patch_source_length = patch_source.size();
        o.patch_heads = patch.data();
      }
      const val tt = options["tokenTypes"];
      if (!tt.isUndefined() && !tt.isNull()) {
        types = emscripten::convertJSArrayToNumberVector<std::int32_t>(tt);
        if (types.size() != t)
          return val("tokenTypes must have one entry per token (" + std::to_string(t) + "), not " +
                     std::to_string(types.size()));
        o.token_types = types.data();
      }
    }
    error = model_->run(tokens_.data(), t, o, &result_);
    if (!error.empty()) return val(error);
    val r = val::object();
    if (model_->block().hidden_output)
      r.set("hidden", copy_of(result_.hidden.data(), result_.hidden.size()));
    else
      r.set("logits", copy_of(result_.logits.data(), result_.logits.size()));
    if (o.attention) r.set("attention", copy_of(result_.attention.data(), result_.attention.size()));
    if (o.lens) {
      r.set("lensIds", copy_of(result_.lens_ids.data(), result_.lens_ids.size()));
      r.set("lensProbs", copy_of(result_.lens_probs.data(), result_.lens_probs.size()));
    }
    return r;
  }

  // patchHeads, a layer at a time: begin with the clean ids in the token buffer ({ metricClean,
  // metricCorrupted } or an error), then patchHeadsLayer(l) for each layer (Float32Array [H]: each head's
  // effect), then patchHeadsEnd(). naive: each head by a whole patched run (the benchmark's comparison).
  // Two overloads by argument count: with a sixth, tokenTypes (one per token, both runs'; encoders).
  val patch_heads_begin(double t_in, val corrupted, double answer, double wrong, double at) {
    return patch_heads_begin_types(t_in, corrupted, answer, wrong, at, val::undefined());
  }

  val patch_heads_begin_types(double t_in, val corrupted, double answer, double wrong, double at,
                              val token_types) {
    std::string error;
    const std::size_t t = tokens_length(t_in, &error);
    if (!error.empty()) return val(error);
    corrupted_ = emscripten::convertJSArrayToNumberVector<std::int32_t>(corrupted);
    if (corrupted_.size() != t)
      return val("corrupted is " + std::to_string(corrupted_.size()) + " tokens long and clean " +
                 std::to_string(t) + ": patching takes a head's output at every position, so both must have "
                 "the same length");
    headlab::PatchHeadsArgs a;
    a.clean = tokens_.data(), a.corrupted = corrupted_.data(), a.t = t;
    a.answer = static_cast<std::int32_t>(answer), a.wrong = static_cast<std::int32_t>(wrong);
    a.at = static_cast<std::size_t>(at);
    std::vector<std::int32_t> types;  // patch_heads_begin keeps its own copy
    if (!token_types.isUndefined() && !token_types.isNull()) {
      types = emscripten::convertJSArrayToNumberVector<std::int32_t>(token_types);
      if (types.size() != t)
        return val("tokenTypes must have one entry per token (" + std::to_string(t) + "), not " +
                   std::to_string(types.size()));
      a.token_types = types.data();
    }
    error = model_->patch_heads_begin(a, &patch_);
    if (!error.empty()) return val(error);
    val r = val::object();
    r.set("metricClean", patch_.metric_clean);
    r.set("metricCorrupted", patch_.metric_corrupted);
    return r;
  }

  val patch_heads_layer(double layer, bool naive) {
    if (!model_) return val(std::string("the model is not ready"));
    const std::size_t l = static_cast<std::size_t>(layer), nh = model_->config().num_heads;
    const std::string error = model_->patch_heads_layer(l, &patch_, headlab::Path::simd, naive);
    if (!error.empty()) return val(error);
    return copy_of(patch_.effects.data() + l * nh, nh);
  }

  void patch_heads_end() {
    if (model_) model_->patch_heads_end();
    std::vector<std::int32_t>().swap(corrupted_);
  }

  // { heads: Float32Array [L * H], mlps: Float32Array [L], scale, logitDiff } or an error.
  val direct_logit_attribution(double t_in, double answer, double wrong, double at) {
    std::string error;
    const std::size_t t = tokens_length(t_in, &error);
    if (!error.empty()) return val(error);
    headlab::LogitAttribution d;
    error = model_->direct_logit_attribution(tokens_.data(), t, static_cast<std::int32_t>(answer),
                                             static_cast<std::int32_t>(wrong), static_cast<std::size_t>(at), &d);
    if (!error.empty()) return val(error);
    val r = val::object();
    r.set("heads", copy_of(d.heads.data(), d.heads.size()));
    r.set("mlps", copy_of(d.mlps.data(), d.mlps.size()));
    r.set("scale", d.scale);
    r.set("logitDiff", d.logit_diff);
    return r;
  }

  // Float32Array [L * H * 4]: previousToken, duplicateToken, induction, firstToken per head.
  val head_scores(double t_in, double n) {
    std::string error;
    const std::size_t t = tokens_length(t_in, &error);
    if (!error.empty()) return val(error);
    std::vector<float> scores;
    error = model_->head_scores(tokens_.data(), t, static_cast<std::size_t>(n), &scores);
    if (!error.empty()) return val(error);
    return copy_of(scores.data(), scores.size());
  }

  // Int32Array of the new ids (the stop token not included).
  // options: { ablate /* L*H, 1 = off, every step */, cached /* default true; false: each token by a
  // whole run, for comparisons */ }
  val generate(double t_in, double max_tokens, double temperature, double seed, double stop_id, val options) {
    std::string error;
    const std::size_t t = tokens_length(t_in, &error);
    if (!error.empty()) return val(error);
    if (!(max_tokens >= 0)) return val(std::string("maxTokens must be >= 0"));
    headlab::PretrainedGenerateOptions g;
    std::vector<std::uint8_t> ablate;
    if (is_object(options)) {
      const val a = options["ablate"];
      if (!a.isUndefined() && !a.isNull()) {
        error = head_mask(a, "ablate", &ablate);
        if (!error.empty()) return val(error);
        g.ablate = ablate.data();
      }
      g.cached = !options["cached"].isFalse();
    }
    std::vector<std::int32_t> ids;
    error = model_->generate(tokens_.data(), t, static_cast<std::size_t>(max_tokens),
                             static_cast<float>(temperature), static_cast<std::uint64_t>(seed),
                             static_cast<std::int32_t>(stop_id), &ids, headlab::Path::simd, g);
    if (!error.empty()) return val(error);
    return copy_of(ids.data(), ids.size());
  }

#ifdef HEADLAB_THREADS
  // Threads later calls split their work over (1..64; the module's pool must hold threads - 1
  // Workers): "" or an error. Set before the weights are added, so the activations counted
  // by activationBytes include every thread's workspace.
  std::string set_threads(double threads) {
    if (!model_) return "setThreads: configure() first";
    if (!(threads >= 1 && threads <= 64) || threads != std::floor(threads))
      return "threads must be an integer in 1..64";
    const auto n = static_cast<std::size_t>(threads);
    try {
      model_->set_pool(n == 1 ? nullptr : headlab::make_pretrained_pool(n));
    } catch (const std::exception& e) {
      return std::string("threads: ") + std::to_string(n) + " threads could not start: " + e.what();
    }
    return "";
  }
#endif

  double threads() const { return model_ ? num(model_->threads()) : 1.0; }

  double memory_bytes() const { return model_ ? num(model_->memory_bytes()) : 0.0; }

  // Bytes one run over t tokens needs beyond the weights (activations, workspace, attention out).
  double activation_bytes(double t, bool attention, bool all_logits, bool lens) const {
    return model_ ? num(model_->activation_bytes(static_cast<std::size_t>(t), attention, all_logits, lens))
                  : 0.0;
  }

 private:
  // A mask with one entry per head [numLayers * numHeads] from JS into *out; an error naming `name`
  // when its length is another.
  std::string head_mask(const val& a, const char* name, std::vector<std::uint8_t>* out) const {
    *out = emscripten::convertJSArrayToNumberVector<std::uint8_t>(a);
    const std::size_t lh = model_->config().num_layers * model_->config().num_heads;
    if (out->size() == lh) return "";
    return std::string(name) + " must have numLayers * numHeads = " + std::to_string(lh) + " entries, not " +
           std::to_string(out->size());
  }

  std::size_t tokens_length(double t, std::string* error) const {
    if (!model_ || !model_->ready()) {
      *error = "the model is not ready (configure, addSafetensors, finish first)";
      return 0;
    }
    if (!(t >= 1) || t > num(tokens_.size())) {
      const bool whole = t == std::floor(t) && std::abs(t) < 1e15;
      *error = "length " + (whole ? std::to_string(static_cast<long long>(t)) : std::to_string(t)) +
               " is outside 1.." + std::to_string(tokens_.size()) + " (the token buffer's size)";
      return 0;
    }
    return static_cast<std::size_t>(t);
  }

  std::unique_ptr<headlab::PretrainedModel> model_;
  std::vector<std::int32_t> tokens_;
  headlab::PretrainedRunResult result_;
  headlab::PatchHeadsResult patch_;
  std::vector<std::int32_t> corrupted_;  // patchHeadsBegin's argument
};

}  // namespace

EMSCRIPTEN_BINDINGS(headlab_pretrained) {
  using namespace emscripten;
  class_<PretrainedCoreJs>("PretrainedCore")
      .constructor<>()
      .function("configure", &PretrainedCoreJs::configure)
      .function("allocFile", &PretrainedCoreJs::alloc_file)
      .function("addSafetensors", &PretrainedCoreJs::add_safetensors)
      .function("finish", &PretrainedCoreJs::finish)
      .function("info", &PretrainedCoreJs::info)
      .function("tokenBuffer", &PretrainedCoreJs::token_buffer)
      .function("run", &PretrainedCoreJs::run)
      .function("headScores", &PretrainedCoreJs::head_scores)
      .function("patchHeadsBegin", &PretrainedCoreJs::patch_heads_begin)
      .function("patchHeadsBegin", &PretrainedCoreJs::patch_heads_begin_types)
      .function("patchHeadsLayer", &PretrainedCoreJs::patch_heads_layer)
      .function("patchHeadsEnd", &PretrainedCoreJs::patch_heads_end)
      .function("directLogitAttribution", &PretrainedCoreJs::direct_logit_attribution)
      .function("generate", &PretrainedCoreJs::generate)
      .function("memoryBytes", &PretrainedCoreJs::memory_bytes)
#ifdef HEADLAB_THREADS
      .function("setThreads", &PretrainedCoreJs::set_threads)
#endif
      .function("threads", &PretrainedCoreJs::threads)
      .function("activationBytes", &PretrainedCoreJs::activation_bytes);
  function("heapMax", &headlab::bindings::heap_max);
}
