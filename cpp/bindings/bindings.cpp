// The only file that knows Embind. JavaScript (web/lib/headlab.js) copies typed
// arrays into one reusable arena in the wasm heap, passes their addresses here,
// and copies results out; no emscripten::val crosses the boundary, so no
// handle can leak. Errors come back as strings, never as aborts.
#include <emscripten/bind.h>

#include <malloc.h>

#include <cstdint>
#include <string>

#include "arena.hpp"
#include "forward_call.hpp"
#include "headlab/experiments.hpp"
#include "headlab/mha.hpp"

namespace {

using headlab::bindings::at;
using headlab::bindings::ForwardJs;
using headlab::bindings::ShapeJs;
using headlab::bindings::to_shape;

headlab::bindings::Buffer g_arena;      // inputs and outputs, laid out by the JS side
headlab::bindings::Buffer g_workspace;  // mha_forward scratch

struct ResolvedShape {
  std::string error;
  double d_k = 0, d_v = 0, workspace_bytes = 0;
};

struct ParamsJs {
  std::string error;
  double w_q = 0, w_k = 0, w_v = 0, w_o = 0, bias = 0, weights = 0, total = 0;
};

struct InfoJs {
  std::string version;
  bool simd = false;
  std::string isa;
  double heap_in_use = 0;  // bytes malloc has handed out and not taken back
};

// Only the output wanted: the fused path needs no t_q x t_k buffer.
headlab::MhaWorkspaceFor workspace_use(bool output_only) {
  return output_only ? headlab::MhaWorkspaceFor::output_only : headlab::MhaWorkspaceFor::any;
}

ResolvedShape resolve_shape(const ShapeJs& js, bool output_only) {
  ResolvedShape r;
  headlab::MhaShape s = to_shape(js);
  r.error = headlab::mha_resolve_shape(s);
  if (r.error.empty()) {
    r.d_k = static_cast<double>(s.d_k);
    r.d_v = static_cast<double>(s.d_v);
    r.workspace_bytes =
        static_cast<double>(headlab::mha_workspace_floats(s, workspace_use(output_only))) * sizeof(float);
  }
  return r;
}

// A block that outlives calls (an AttentionLayer's weights); 0 when the heap cannot grow.
double allocate(double bytes) {
  void* p = headlab::bindings::aligned_block(static_cast<std::size_t>(bytes));
  return static_cast<double>(reinterpret_cast<std::uintptr_t>(p));
}

void release(double address) { std::free(reinterpret_cast<void*>(static_cast<std::uintptr_t>(address))); }

// Returns the arena's address, or 0 when the heap cannot hold `bytes` more.
double reserve_arena(double bytes) {
  return static_cast<double>(reinterpret_cast<std::uintptr_t>(g_arena.reserve(static_cast<std::size_t>(bytes))));
}

std::string forward(const ForwardJs& f) {
  headlab::MhaShape s = to_shape(f.shape);
  std::string err = headlab::mha_resolve_shape(s);
  if (!err.empty()) return err;
  const std::size_t floats = headlab::mha_workspace_floats(s, workspace_use(headlab::bindings::output_only(f)));
  float* ws = static_cast<float*>(g_workspace.reserve(floats * sizeof(float)));
  if (!ws) return "out of memory: the workspace for this shape does not fit in the wasm heap";
  const headlab::MhaInputs in = headlab::bindings::inputs_of(f);
  const headlab::MhaWeights w = headlab::bindings::weights_of(f);
  const headlab::MhaOutputs out = headlab::bindings::outputs_of(f);
  headlab::mha_forward(s, in, w, out, ws);
  return "";
}

ParamsJs parameter_count(double d_model, double num_heads, double d_k, double d_v, bool bias) {
  ParamsJs r;
  headlab::ParameterCount c;
  r.error = headlab::parameter_count(static_cast<std::size_t>(d_model), static_cast<std::size_t>(num_heads),
                                     static_cast<std::size_t>(d_k), static_cast<std::size_t>(d_v), bias, c);
  r.w_q = static_cast<double>(c.w_q);
  r.w_k = static_cast<double>(c.w_k);
  r.w_v = static_cast<double>(c.w_v);
  r.w_o = static_cast<double>(c.w_o);
  r.bias = static_cast<double>(c.bias);
  r.weights = static_cast<double>(c.weights);
  r.total = static_cast<double>(c.total);
  return r;
}

struct ScalingJs {
  std::string error;
  double variance_raw = 0, variance_scaled = 0, entropy_scaled = 0, entropy_unscaled = 0;
  double max_weight_scaled = 0, max_weight_unscaled = 0;
};

// Outputs go to three [n_q, n_k] arrays in the arena, laid out by JS.
ScalingJs scaling_experiment(double d_k, double n_q, double n_k, double seed, double dot,
                             double weights_scaled, double weights_unscaled) {
  ScalingJs r;
  const auto dk = static_cast<std::size_t>(d_k), nq = static_cast<std::size_t>(n_q),
             nk = static_cast<std::size_t>(n_k);
  float* ws = static_cast<float*>(g_workspace.reserve(headlab::scaling_workspace_floats(dk, nq, nk) * sizeof(float)));
  if (!ws) {
    r.error = "out of memory: the workspace does not fit in the wasm heap";
    return r;
  }
  const headlab::ScalingStats s = headlab::scaling_experiment(
      dk, nq, nk, static_cast<std::uint64_t>(seed), at<float>(dot), at<float>(weights_scaled),
      at<float>(weights_unscaled), ws);
  r.variance_raw = s.variance_raw;
  r.variance_scaled = s.variance_scaled;
  r.entropy_scaled = s.entropy_scaled;
  r.entropy_unscaled = s.entropy_unscaled;
  r.max_weight_scaled = s.max_weight_scaled;
  r.max_weight_unscaled = s.max_weight_unscaled;
  return r;
}

InfoJs info() {
  InfoJs i;
  i.version = HEADLAB_VERSION;
#ifdef __wasm_simd128__
  i.simd = true;
  i.isa = "wasm-simd128 (xsimd sse4.1 lowering)";
#else
  i.simd = false;
  i.isa = "wasm scalar";
#endif
  i.heap_in_use = static_cast<double>(mallinfo().uordblks);
  return i;
}

}  // namespace

EMSCRIPTEN_BINDINGS(headlab) {
  using namespace emscripten;
  value_object<ShapeJs>("Shape")
      .field("tQ", &ShapeJs::t_q)
      .field("tK", &ShapeJs::t_k)
      .field("dModel", &ShapeJs::d_model)
      .field("numHeads", &ShapeJs::num_heads)
      .field("dK", &ShapeJs::d_k)
      .field("dV", &ShapeJs::d_v)
      .field("causal", &ShapeJs::causal);
  value_object<ForwardJs>("ForwardCall")
      .field("shape", &ForwardJs::shape)
      .field("query", &ForwardJs::query)
      .field("key", &ForwardJs::key)
      .field("value", &ForwardJs::value)
      .field("keyMask", &ForwardJs::key_mask)
      .field("headMask", &ForwardJs::head_mask)
      .field("wQ", &ForwardJs::w_q)
      .field("wK", &ForwardJs::w_k)
      .field("wV", &ForwardJs::w_v)
      .field("wO", &ForwardJs::w_o)
      .field("bQ", &ForwardJs::b_q)
      .field("bK", &ForwardJs::b_k)
      .field("bV", &ForwardJs::b_v)
      .field("bO", &ForwardJs::b_o)
      .field("output", &ForwardJs::output)
      .field("weights", &ForwardJs::weights)
      .field("q", &ForwardJs::q)
      .field("k", &ForwardJs::k)
      .field("v", &ForwardJs::v)
      .field("scores", &ForwardJs::scores)
      .field("scaledScores", &ForwardJs::scaled_scores)
      .field("headOutputs", &ForwardJs::head_outputs)
      .field("concat", &ForwardJs::concat);
  value_object<ResolvedShape>("ResolvedShape")
      .field("error", &ResolvedShape::error)
      .field("dK", &ResolvedShape::d_k)
      .field("dV", &ResolvedShape::d_v)
      .field("workspaceBytes", &ResolvedShape::workspace_bytes);
  value_object<ParamsJs>("ParameterCount")
      .field("error", &ParamsJs::error)
      .field("wQ", &ParamsJs::w_q)
      .field("wK", &ParamsJs::w_k)
      .field("wV", &ParamsJs::w_v)
      .field("wO", &ParamsJs::w_o)
      .field("bias", &ParamsJs::bias)
      .field("weights", &ParamsJs::weights)
      .field("total", &ParamsJs::total);
  value_object<InfoJs>("Info")
      .field("version", &InfoJs::version)
      .field("simd", &InfoJs::simd)
      .field("isa", &InfoJs::isa)
      .field("heapInUse", &InfoJs::heap_in_use);
  value_object<ScalingJs>("ScalingStats")
      .field("error", &ScalingJs::error)
      .field("varianceRaw", &ScalingJs::variance_raw)
      .field("varianceScaled", &ScalingJs::variance_scaled)
      .field("entropyScaled", &ScalingJs::entropy_scaled)
      .field("entropyUnscaled", &ScalingJs::entropy_unscaled)
      .field("maxWeightScaled", &ScalingJs::max_weight_scaled)
      .field("maxWeightUnscaled", &ScalingJs::max_weight_unscaled);
  function("scalingExperiment", &scaling_experiment);
  function("resolveShape", &resolve_shape);
  function("reserveArena", &reserve_arena);
  function("allocate", &allocate);
  function("release", &release);
  function("forward", &forward);
  function("parameterCount", &parameter_count);
  function("info", &info);
  function("heapMax", &headlab::bindings::heap_max);
}
