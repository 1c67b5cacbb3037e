#include "headlab/mha.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>

#include "headlab/attention_fused.hpp"

namespace headlab {

namespace {

// Largest element count of any single buffer; keeps every index inside 32 bits
// on wasm32 and turns absurd requests into a clear error instead of overflow.
constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 30;

std::string dim_error(const char* name, std::size_t value) {
  return std::string(name) + " must be a positive integer, got " + std::to_string(value);
}

bool too_big(std::uint64_t a, std::uint64_t b) { return a != 0 && b > kMaxElements / a; }

// Materialising workspace layout (floats): Qp [t_q, h*d_k] | Kp [t_k, h*d_k]
// | Vp [t_k, h*d_v] | K_i^T [d_k, t_k] | S [t_q, t_k] | concat [t_q, h*d_v]
// | GEMM packing. Fused layout: Qp | Kp | Vp | concat | scratch shared by the
// GEMM packing and the fused attention of one head (never live together).
// Each part starts on a multiple of 4 floats.
struct Layout {
  std::size_t qp, kp, vp, kt, s, concat, scratch, total;
};

std::size_t round4(std::size_t n) { return (n + 3) & ~std::size_t{3}; }

// GemmArgs carrying only the dimensions, for workspace queries.
GemmArgs dims(std::size_t m, std::size_t n, std::size_t k) {
  return {m, n, k, nullptr, 0, nullptr, 0, nullptr, 0, nullptr, false};
}

// Packing scratch for the largest of the projection GEMMs (Q, K and V sharing
// one input is the largest in-projection case; packing does not depend on rows).
std::size_t gemm_pack_floats(const MhaShape& s) {
  const std::size_t hk = s.num_heads * s.d_k, hv = s.num_heads * s.d_v;
  const GemmArgs qkv[3] = {dims(s.t_q, hk, s.d_model), dims(s.t_q, hk, s.d_model),
                           dims(s.t_q, hv, s.d_model)};
  return std::max(gemm_shared_a_workspace_floats(qkv, 3),
                  gemm_packed_workspace_floats(dims(s.t_q, s.d_model, hv)));
}

AttentionArgs head_dims(const MhaShape& s) {
  AttentionArgs a;
  a.t_q = s.t_q;
  a.t_k = s.t_k;
  a.d_k = s.d_k;
  a.d_v = s.d_v;
  a.causal = s.causal;
  return a;
}

Layout layout(const MhaShape& s, bool fused) {
  Layout l{};
  const std::size_t hk = s.num_heads * s.d_k, hv = s.num_heads * s.d_v;
  l.qp = 0;
  l.kp = l.qp + round4(s.t_q * hk);
  l.vp = l.kp + round4(s.t_k * hk);
  if (fused) {
    const AttentionArgs a = head_dims(s);
    l.concat = l.vp + round4(s.t_k * hv);
    l.scratch = l.concat + round4(s.t_q * hv);
    l.total = l.scratch + round4(std::max({gemm_pack_floats(s), attention_fused_simd_workspace_floats(a),
                                           attention_fused_ref_workspace_floats(a)}));
  } else {
    l.kt = l.vp + round4(s.t_k * hv);
    l.s = l.kt + round4(s.d_k * s.t_k);
    l.concat = l.s + round4(s.t_q * s.t_k);
    l.scratch = l.concat + round4(s.t_q * hv);
    l.total = l.scratch + round4(gemm_pack_floats(s));
  }
  return l;
}

// Qp = query W^Q + b_q, Kp = key W^K + b_k, Vp = value W^V + b_v. Products that
// read the same input (self-attention: all three; encoder memory: K and V)
// share one packing of it on the SIMD path.
void project_qkv(Path path, const MhaShape& s, const MhaInputs& in, const MhaWeights& w, float* qp,
                 float* kp, float* vp, float* pack) {
  const std::size_t hk = s.num_heads * s.d_k, hv = s.num_heads * s.d_v;
  const GemmArgs gq{s.t_q, hk, s.d_model, in.query, s.d_model, w.w_q, hk, qp, hk, w.b_q, false};
  const GemmArgs gk{s.t_k, hk, s.d_model, in.key, s.d_model, w.w_k, hk, kp, hk, w.b_k, false};
  const GemmArgs gv{s.t_k, hv, s.d_model, in.value, s.d_model, w.w_v, hv, vp, hv, w.b_v, false};
  if (in.query == in.key && in.key == in.value && s.t_q == s.t_k) {
    const GemmArgs all[3] = {gq, gk, gv};
    gemm_shared_a(path, all, 3, pack);
  } else if (in.key == in.value) {
    gemm_packed(path, gq, pack);
    const GemmArgs kv[2] = {gk, gv};
    gemm_shared_a(path, kv, 2, pack);
  } else {
    for (const GemmArgs& g : {gq, gk, gv}) gemm_packed(path, g, pack);
  }
}

bool wants_intermediates(const MhaOutputs& out) {
  const MhaIntermediates& im = out.intermediates;
  return out.weights || im.q || im.k || im.v || im.scores || im.scaled_scores || im.head_outputs ||
         im.concat;
}

// Copies a [rows, cols] block with leading dimension lds into a dense buffer.
void copy_block(std::size_t rows, std::size_t cols, const float* src, std::size_t lds, float* dst) {
  for (std::size_t r = 0; r < rows; ++r) std::copy(src + r * lds, src + r * lds + cols, dst + r * cols);
}

// The dimension checks, without the size limits (parameter_count allocates nothing).
std::string resolve_dims(MhaShape& s) {
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
  return "";
}

std::string over_limit(const std::string& what, std::uint64_t a, std::uint64_t b) {
  return "request too large: " + what + " = " + std::to_string(a) + " × " + std::to_string(b) +
         " elements, over the limit of 2^30 for one buffer";
}

}  // namespace

std::string mha_resolve_shape(MhaShape& s) {
  std::string err = resolve_dims(s);
  if (!err.empty()) return err;
  const std::uint64_t hk = std::uint64_t{s.num_heads} * s.d_k, hv = std::uint64_t{s.num_heads} * s.d_v;
  const std::uint64_t tmax = std::max(s.t_q, s.t_k);
  if (too_big(s.num_heads, s.d_k)) return over_limit("numHeads × dK", s.num_heads, s.d_k);
  if (too_big(s.num_heads, s.d_v)) return over_limit("numHeads × dV", s.num_heads, s.d_v);
  if (too_big(s.d_model, hk)) return over_limit("wQ and wK would hold dModel × numHeads·dK", s.d_model, hk);
  if (too_big(s.d_model, hv)) return over_limit("wV would hold dModel × numHeads·dV", s.d_model, hv);
  if (too_big(tmax, s.d_model)) return over_limit("the query/key rows would hold T × dModel", tmax, s.d_model);
  if (too_big(tmax, hk)) return over_limit("Q and K would hold T × numHeads·dK", tmax, hk);
  if (too_big(tmax, hv)) return over_limit("V would hold T × numHeads·dV", tmax, hv);
  if (too_big(s.t_q, s.t_k))
    return over_limit("the query's rows times the key's rows, Tq × Tk,", s.t_q, s.t_k) +
           " (self-attention takes at most 32768 tokens per call)";
  return "";
}

std::size_t mha_workspace_floats(const MhaShape& s) {
  return std::max(layout(s, false).total, layout(s, true).total);
}

std::size_t mha_workspace_floats(const MhaShape& s, MhaWorkspaceFor use) {
  return use == MhaWorkspaceFor::output_only ? layout(s, true).total : mha_workspace_floats(s);
}

void mha_forward(const MhaShape& s, const MhaInputs& in, const MhaWeights& w,
                 const MhaOutputs& out, float* ws, Path path) {
  const bool fused = !wants_intermediates(out);
  const Layout l = layout(s, fused);
  const std::size_t h = s.num_heads, hk = h * s.d_k, hv = h * s.d_v;
  float* qp = ws + l.qp;
  float* kp = ws + l.kp;
  float* vp = ws + l.vp;
  float* concat = ws + l.concat;
  float* scratch = ws + l.scratch;
  const MhaIntermediates& im = out.intermediates;

  // Projections for all heads at once: X W^Q is [t, h*d_k], head i in columns i*d_k..
  project_qkv(path, s, in, w, qp, kp, vp, scratch);

  const float inv_sqrt_dk = 1.0f / std::sqrt(static_cast<float>(s.d_k));
  if (fused) {
    // head_i straight into its columns of the concatenation; no t_q x t_k buffer.
    AttentionArgs a = head_dims(s);
    a.key_mask = in.key_mask;
    a.scale = inv_sqrt_dk;
    a.ldq = a.ldk = hk;
    a.ldv = a.ldo = hv;
    for (std::size_t i = 0; i < h; ++i) {
      a.q = qp + i * s.d_k;
      a.k = kp + i * s.d_k;
      a.v = vp + i * s.d_v;
      a.o = concat + i * s.d_v;
      attention_fused(path, a, scratch);
    }
  } else {
    float* kt = ws + l.kt;
    float* sc = ws + l.s;
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
      gemm(path, {s.t_q, s.t_k, s.d_k, qi, hk, kt, s.t_k, sc, s.t_k, nullptr, false});
      if (im.scores) std::copy(sc, sc + tt, im.scores + i * tt);

      scale(path, sc, tt, inv_sqrt_dk);
      if (s.causal || in.key_mask) {
        for (std::size_t r = 0; r < s.t_q; ++r)
          for (std::size_t c = 0; c < s.t_k; ++c)
            if ((s.causal && c > r) || (in.key_mask && in.key_mask[c] == 0)) sc[r * s.t_k + c] = ninf;
      }
      if (im.scaled_scores) std::copy(sc, sc + tt, im.scaled_scores + i * tt);

      softmax_rows(path, sc, s.t_q, s.t_k, s.t_k);
      if (out.weights) std::copy(sc, sc + tt, out.weights + i * tt);

      // head_i = weights V_i, written straight into its columns of the concatenation.
      float* head = concat + i * s.d_v;
      gemm(path, {s.t_q, s.d_v, s.t_k, sc, s.t_k, vi, hv, head, hv, nullptr, false});
      if (im.head_outputs) copy_block(s.t_q, s.d_v, head, hv, im.head_outputs + i * s.t_q * s.d_v);
    }
    if (im.concat) std::copy(concat, concat + s.t_q * hv, im.concat);
  }

  // Heads switched off: their columns of the concatenation are zeroed (after the intermediate
  // was copied out), which is what zeroing their rows of W^O does to the output.
  if (in.head_mask) {
    for (std::size_t i = 0; i < s.num_heads; ++i) {
      if (in.head_mask[i] != 0) continue;
      for (std::size_t r = 0; r < s.t_q; ++r) std::fill_n(concat + r * hv + i * s.d_v, s.d_v, 0.0f);
    }
  }

  gemm_packed(path, {s.t_q, s.d_model, hv, concat, hv, w.w_o, s.d_model, out.output, s.d_model, w.b_o, false},
           scratch);
}

std::string parameter_count(std::size_t d_model, std::size_t num_heads, std::size_t d_k,
                            std::size_t d_v, bool bias, ParameterCount& c) {
  MhaShape s;
  s.t_q = s.t_k = 1;
  s.d_model = d_model;
  s.num_heads = num_heads;
  s.d_k = d_k;
  s.d_v = d_v;
  const std::string err = resolve_dims(s);
  if (!err.empty()) return err;
  // Counts are exact up to 2^53 (what a JavaScript number holds exactly).
  constexpr std::uint64_t kExact = std::uint64_t{1} << 53;
  auto over = [&](std::uint64_t a, std::uint64_t b) { return a != 0 && b > kExact / a; };
  const std::uint64_t widest = std::max(s.d_k, s.d_v);
  if (over(s.num_heads, widest) || over(s.d_model, s.num_heads * widest) ||
      over(4, s.d_model * s.num_heads * widest))
    return "dModel too large: the parameter count would exceed 2^53, beyond exact counting";
  const std::uint64_t hk = std::uint64_t{s.num_heads} * s.d_k, hv = std::uint64_t{s.num_heads} * s.d_v;
  c.w_q = c.w_k = std::uint64_t{s.d_model} * hk;
  c.w_v = std::uint64_t{s.d_model} * hv;
  c.w_o = hv * s.d_model;
  c.weights = c.w_q + c.w_k + c.w_v + c.w_o;
  c.bias = bias ? 2 * hk + hv + s.d_model : 0;
  c.total = c.weights + c.bias;
  return "";
}

}  // namespace headlab
