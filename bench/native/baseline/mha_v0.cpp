// Snapshot of cpp/src/mha.cpp before the performance work (git f1ddeee), kept in
// headlab::v0 so the benchmark can time old and new code side by side in one run.
#include "headlab/mha.hpp"
#include "baseline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace headlab {
namespace v0 {

namespace {

// Largest element count of any single buffer; keeps every index inside 32 bits
// on wasm32 and turns absurd requests into a clear error instead of overflow.
constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 30;

std::string dim_error(const char* name, std::size_t value) {
  return std::string(name) + " must be a positive integer, got " + std::to_string(value);
}

bool too_big(std::uint64_t a, std::uint64_t b) { return a != 0 && b > kMaxElements / a; }

// Workspace layout (floats): Qp [t_q, h*d_k] | Kp [t_k, h*d_k] | Vp [t_k, h*d_v]
// | K_i^T [d_k, t_k] | S [t_q, t_k] | concat [t_q, h*d_v]. Each part starts on a
// multiple of 4 floats.
struct Layout {
  std::size_t qp, kp, vp, kt, s, concat, total;
};

std::size_t round4(std::size_t n) { return (n + 3) & ~std::size_t{3}; }

Layout layout(const MhaShape& s) {
  Layout l{};
  const std::size_t hk = s.num_heads * s.d_k, hv = s.num_heads * s.d_v;
  l.qp = 0;
  l.kp = l.qp + round4(s.t_q * hk);
  l.vp = l.kp + round4(s.t_k * hk);
  l.kt = l.vp + round4(s.t_k * hv);
  l.s = l.kt + round4(s.d_k * s.t_k);
  l.concat = l.s + round4(s.t_q * s.t_k);
  l.total = l.concat + round4(s.t_q * hv);
  return l;
}

void gemm_v0(Path path, const GemmArgs& g) { path == Path::simd ? v0::gemm_simd(g) : v0::gemm_ref(g); }

// Copies a [rows, cols] block with leading dimension lds into a dense buffer.
void copy_block(std::size_t rows, std::size_t cols, const float* src, std::size_t lds, float* dst) {
  for (std::size_t r = 0; r < rows; ++r) std::copy(src + r * lds, src + r * lds + cols, dst + r * cols);
}

}  // namespace

std::string mha_resolve_shape(MhaShape& s) {
  if (s.t_q == 0) return "query must have at least one row (Tq >= 1), got 0 rows";
  if (s.t_k == 0) return "key/value must have at least one row (Tk >= 1), got 0 rows";
  if (s.d_model == 0) return dim_error("dModel", s.d_model);
  if (s.num_heads == 0) return dim_error("numHeads", s.num_heads);
  if (s.d_k == 0 || s.d_v == 0) {
    if (s.d_model % s.num_heads != 0)
      return "numHeads must divide dModel when dK/dV are not given: dModel " +
             std::to_string(s.d_model) + " / numHeads " + std::to_string(s.num_heads) +
             " is not an integer";
    if (s.d_k == 0) s.d_k = s.d_model / s.num_heads;
    if (s.d_v == 0) s.d_v = s.d_model / s.num_heads;
  }
  if (s.causal && s.t_q != s.t_k)
    return "causal requires as many query rows as key rows (Tq == Tk), got Tq " +
           std::to_string(s.t_q) + " and Tk " + std::to_string(s.t_k);
  const std::uint64_t hk = std::uint64_t{s.num_heads} * s.d_k, hv = std::uint64_t{s.num_heads} * s.d_v;
  const std::uint64_t tmax = std::max(s.t_q, s.t_k);
  if (too_big(s.num_heads, s.d_k) || too_big(s.num_heads, s.d_v) || too_big(s.d_model, hk) ||
      too_big(s.d_model, hv) || too_big(tmax, hk) || too_big(tmax, hv) || too_big(s.t_q, s.t_k) ||
      too_big(tmax, s.d_model))
    return "request too large: some buffer would exceed 2^30 elements";
  return "";
}

std::size_t mha_workspace_floats(const MhaShape& s) { return layout(s).total; }

void mha_forward(const MhaShape& s, const MhaInputs& in, const MhaWeights& w,
                 const MhaOutputs& out, float* ws, Path path) {
  const Layout l = layout(s);
  const std::size_t h = s.num_heads, hk = h * s.d_k, hv = h * s.d_v;
  float* qp = ws + l.qp;
  float* kp = ws + l.kp;
  float* vp = ws + l.vp;
  float* kt = ws + l.kt;
  float* sc = ws + l.s;
  float* concat = ws + l.concat;
  const MhaIntermediates& im = out.intermediates;

  // Projections for all heads at once: X W^Q is [t, h*d_k], head i in columns i*d_k..
  gemm_v0(path, {s.t_q, hk, s.d_model, in.query, s.d_model, w.w_q, hk, qp, hk, w.b_q, false});
  gemm_v0(path, {s.t_k, hk, s.d_model, in.key, s.d_model, w.w_k, hk, kp, hk, w.b_k, false});
  gemm_v0(path, {s.t_k, hv, s.d_model, in.value, s.d_model, w.w_v, hv, vp, hv, w.b_v, false});

  const float inv_sqrt_dk = 1.0f / std::sqrt(static_cast<float>(s.d_k));
  const float ninf = -std::numeric_limits<float>::infinity();
  const std::size_t tt = s.t_q * s.t_k;

  for (std::size_t i = 0; i < h; ++i) {
    const float* qi = qp + i * s.d_k;  // [t_q, d_k], leading dimension hk
    const float* ki = kp + i * s.d_k;  // [t_k, d_k], leading dimension hk
    const float* vi = vp + i * s.d_v;  // [t_k, d_v], leading dimension hv
    if (im.q) copy_block(s.t_q, s.d_k, qi, hk, im.q + i * s.t_q * s.d_k);
    if (im.k) copy_block(s.t_k, s.d_k, ki, hk, im.k + i * s.t_k * s.d_k);
    if (im.v) copy_block(s.t_k, s.d_v, vi, hv, im.v + i * s.t_k * s.d_v);

    // Scores Q_i K_i^T: pack K_i^T [d_k, t_k] so each score row is a broadcast GEMM.
    transpose(s.t_k, s.d_k, ki, hk, kt, s.t_k);
    gemm_v0(path, {s.t_q, s.t_k, s.d_k, qi, hk, kt, s.t_k, sc, s.t_k, nullptr, false});
    if (im.scores) std::copy(sc, sc + tt, im.scores + i * tt);

    path == Path::simd ? scale_simd(sc, tt, inv_sqrt_dk) : scale_ref(sc, tt, inv_sqrt_dk);
    if (s.causal || in.key_mask) {
      for (std::size_t r = 0; r < s.t_q; ++r)
        for (std::size_t c = 0; c < s.t_k; ++c)
          if ((s.causal && c > r) || (in.key_mask && in.key_mask[c] == 0)) sc[r * s.t_k + c] = ninf;
    }
    if (im.scaled_scores) std::copy(sc, sc + tt, im.scaled_scores + i * tt);

    path == Path::simd ? softmax_rows_simd(sc, s.t_q, s.t_k, s.t_k)
                       : softmax_rows_ref(sc, s.t_q, s.t_k, s.t_k);
    if (out.weights) std::copy(sc, sc + tt, out.weights + i * tt);

    // head_i = weights V_i, written straight into its columns of the concatenation.
    float* head = concat + i * s.d_v;
    gemm_v0(path, {s.t_q, s.d_v, s.t_k, sc, s.t_k, vi, hv, head, hv, nullptr, false});
    if (im.head_outputs) copy_block(s.t_q, s.d_v, head, hv, im.head_outputs + i * s.t_q * s.d_v);
  }
  if (im.concat) std::copy(concat, concat + s.t_q * hv, im.concat);

  gemm_v0(path, {s.t_q, s.d_model, hv, concat, hv, w.w_o, s.d_model, out.output, s.d_model, w.b_o, false});
}

std::string parameter_count(std::size_t d_model, std::size_t num_heads, std::size_t d_k,
                            std::size_t d_v, bool bias, ParameterCount& c) {
  MhaShape s;
  s.t_q = s.t_k = 1;
  s.d_model = d_model;
  s.num_heads = num_heads;
  s.d_k = d_k;
  s.d_v = d_v;
  const std::string err = v0::mha_resolve_shape(s);
  if (!err.empty()) return err;
  const std::uint64_t hk = std::uint64_t{s.num_heads} * s.d_k, hv = std::uint64_t{s.num_heads} * s.d_v;
  c.w_q = c.w_k = std::uint64_t{s.d_model} * hk;
  c.w_v = std::uint64_t{s.d_model} * hv;
  c.w_o = hv * s.d_model;
  c.weights = c.w_q + c.w_k + c.w_v + c.w_o;
  c.bias = bias ? 2 * hk + hv + s.d_model : 0;
  c.total = c.weights + c.bias;
  return "";
}

}  // namespace v0
}  // namespace headlab
