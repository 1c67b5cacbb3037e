#include "headlab/mha_backward.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace headlab {

namespace {

std::size_t round4(std::size_t n) {
  return (n + 3) & ~std::size_t{3};
}

void zero_block(std::size_t rows, std::size_t cols, float* x, std::size_t ld) {
  for (std::size_t r = 0; r < rows; ++r) std::fill(x + r * ld, x + r * ld + cols, 0.0f);
}

bool enabled(const std::uint8_t* head_enabled, std::size_t i) {
  return head_enabled == nullptr || head_enabled[i] != 0;
}

// Cache layout: q | k | v | weights | concat, each a multiple of 4 floats.
struct CacheLayout {
  std::size_t q, k, v, weights, concat, total;
};

CacheLayout cache_layout(const MhaShape& s, std::size_t batch) {
  const std::size_t hk = s.num_heads * s.d_k, hv = s.num_heads * s.d_v;
  CacheLayout l{};
  l.q = 0;
  l.k = l.q + round4(batch * s.t_q * hk);
  l.v = l.k + round4(batch * s.t_k * hk);
  l.weights = l.v + round4(batch * s.t_k * hv);
  l.concat = l.weights + round4(batch * s.num_heads * s.t_q * s.t_k);
  l.total = l.concat + round4(batch * s.t_q * hv);
  return l;
}

// Backward workspace: dconcat [B*t_q, hv] | dq [B*t_q, hk] | dk [B*t_k, hk] |
// dv [B*t_k, hv] | per-head dp [t_q, t_k]. Transposed operands are read in
// place (GemmArgs' trans_a / trans_b), never copied.
struct BackwardLayout {
  std::size_t dconcat, dq, dk, dv, dp, total;
};

BackwardLayout backward_layout(const MhaShape& s, std::size_t batch) {
  const std::size_t hk = s.num_heads * s.d_k, hv = s.num_heads * s.d_v;
  const std::size_t rq = batch * s.t_q, rk = batch * s.t_k;
  BackwardLayout l{};
  l.dconcat = 0;
  l.dq = l.dconcat + round4(rq * hv);
  l.dk = l.dq + round4(rq * hk);
  l.dv = l.dk + round4(rk * hk);
  l.dp = l.dv + round4(rk * hv);
  l.total = l.dp + round4(s.t_q * s.t_k);
  return l;
}

// Gradients of one input projection Y = X W + b, given dY [rows, cols]:
// dW = X^T dY, db = column sums of dY, dX (+)= dY W^T.
void projection_backward(Path path, std::size_t rows, std::size_t d_model, std::size_t cols, const float* x,
                         const float* w, const float* dy, float* dw, float* db, float* dx, bool accumulate_dx) {
  if (dw) gemm(path, {d_model, cols, rows, x, d_model, dy, cols, dw, cols, nullptr, false, true, false});
  if (db) column_sums(path, dy, rows, cols, cols, db, false);
  if (dx) gemm(path, {rows, d_model, cols, dy, cols, w, cols, dx, d_model, nullptr, accumulate_dx, false, true});
}

}  // namespace

std::size_t mha_cache_floats(const MhaShape& s, std::size_t batch) {
  return cache_layout(s, batch).total;
}

MhaCache mha_cache_view(const MhaShape& s, std::size_t batch, float* storage) {
  const CacheLayout l = cache_layout(s, batch);
  MhaCache c;
  c.q = storage + l.q;
  c.k = storage + l.k;
  c.v = storage + l.v;
  c.weights = storage + l.weights;
  c.concat = storage + l.concat;
  return c;
}

std::size_t mha_forward_cached_workspace_floats(const MhaShape&) {
  return 0;
}

void mha_forward_cached(const MhaShape& s, std::size_t batch, const MhaInputs& in, const MhaWeights& w,
                        const std::uint8_t* head_enabled, const MhaCache& cache, float* output, float*,
                        Path path) {
  const std::size_t h = s.num_heads, hk = h * s.d_k, hv = h * s.d_v;
  const std::size_t rq = batch * s.t_q, rk = batch * s.t_k, tt = s.t_q * s.t_k;

  gemm(path, {rq, hk, s.d_model, in.query, s.d_model, w.w_q, hk, cache.q, hk, w.b_q, false});
  gemm(path, {rk, hk, s.d_model, in.key, s.d_model, w.w_k, hk, cache.k, hk, w.b_k, false});
  gemm(path, {rk, hv, s.d_model, in.value, s.d_model, w.w_v, hv, cache.v, hv, w.b_v, false});

  const float inv_sqrt_dk = 1.0f / std::sqrt(static_cast<float>(s.d_k));
  const float ninf = -std::numeric_limits<float>::infinity();
  for (std::size_t b = 0; b < batch; ++b) {
    const std::uint8_t* mask = in.key_mask ? in.key_mask + b * s.t_k : nullptr;
    for (std::size_t i = 0; i < h; ++i) {
      const float* qi = cache.q + b * s.t_q * hk + i * s.d_k;   // [t_q, d_k], ld hk
      const float* ki = cache.k + b * s.t_k * hk + i * s.d_k;   // [t_k, d_k], ld hk
      const float* vi = cache.v + b * s.t_k * hv + i * s.d_v;   // [t_k, d_v], ld hv
      float* p = cache.weights + (b * h + i) * tt;              // [t_q, t_k]
      float* head = cache.concat + b * s.t_q * hv + i * s.d_v;  // [t_q, d_v], ld hv

      gemm(path, {s.t_q, s.t_k, s.d_k, qi, hk, ki, hk, p, s.t_k, nullptr, false, false, true});
      scale(path, p, tt, inv_sqrt_dk);
      if (s.causal || mask) {
        for (std::size_t r = 0; r < s.t_q; ++r)
          for (std::size_t c = 0; c < s.t_k; ++c)
            if ((s.causal && c > r) || (mask && mask[c] == 0)) p[r * s.t_k + c] = ninf;
      }
      softmax_rows(path, p, s.t_q, s.t_k, s.t_k);
      if (enabled(head_enabled, i))
        gemm(path, {s.t_q, s.d_v, s.t_k, p, s.t_k, vi, hv, head, hv, nullptr, false});
      else
        zero_block(s.t_q, s.d_v, head, hv);
    }
  }
  gemm(path, {rq, s.d_model, hv, cache.concat, hv, w.w_o, s.d_model, output, s.d_model, w.b_o, false});
}

std::size_t mha_backward_workspace_floats(const MhaShape& s, std::size_t batch) {
  return backward_layout(s, batch).total;
}

void mha_backward(const MhaShape& s, std::size_t batch, const MhaInputs& in, const MhaWeights& w,
                  const std::uint8_t* head_enabled, const MhaCache& cache, const float* d_output,
                  const MhaGrads& g, float* ws, Path path) {
  const BackwardLayout l = backward_layout(s, batch);
  const std::size_t h = s.num_heads, hk = h * s.d_k, hv = h * s.d_v, dm = s.d_model;
  const std::size_t rq = batch * s.t_q, rk = batch * s.t_k, tt = s.t_q * s.t_k;
  float* dconcat = ws + l.dconcat;
  float* dq = ws + l.dq;
  float* dk = ws + l.dk;
  float* dv = ws + l.dv;
  float* dp = ws + l.dp;

  // Output projection: Y = concat W^O + b^O.
  if (g.w_o) gemm(path, {hv, dm, rq, cache.concat, hv, d_output, dm, g.w_o, dm, nullptr, false, true, false});
  if (g.b_o) column_sums(path, d_output, rq, dm, dm, g.b_o, false);
  gemm(path, {rq, hv, dm, d_output, dm, w.w_o, dm, dconcat, hv, nullptr, false, false, true});

  const float inv_sqrt_dk = 1.0f / std::sqrt(static_cast<float>(s.d_k));
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t i = 0; i < h; ++i) {
      const float* qi = cache.q + b * s.t_q * hk + i * s.d_k;
      const float* ki = cache.k + b * s.t_k * hk + i * s.d_k;
      const float* vi = cache.v + b * s.t_k * hv + i * s.d_v;
      const float* p = cache.weights + (b * h + i) * tt;
      const float* dout = dconcat + b * s.t_q * hv + i * s.d_v;  // [t_q, d_v], ld hv
      float* dqi = dq + b * s.t_q * hk + i * s.d_k;
      float* dki = dk + b * s.t_k * hk + i * s.d_k;
      float* dvi = dv + b * s.t_k * hv + i * s.d_v;
      if (!enabled(head_enabled, i)) {
        zero_block(s.t_q, s.d_k, dqi, hk);
        zero_block(s.t_k, s.d_k, dki, hk);
        zero_block(s.t_k, s.d_v, dvi, hv);
        continue;
      }
      // head_i = P V_i:  dV_i = P^T dhead,  dP = dhead V_i^T.
      gemm(path, {s.t_k, s.d_v, s.t_q, p, s.t_k, dout, hv, dvi, hv, nullptr, false, true, false});
      gemm(path, {s.t_q, s.t_k, s.d_v, dout, hv, vi, hv, dp, s.t_k, nullptr, false, false, true});
      // P = softmax(Q_i K_i^T / sqrt(d_k)): dS, already divided by sqrt(d_k).
      softmax_backward_rows(path, p, dp, dp, s.t_q, s.t_k, s.t_k, inv_sqrt_dk);
      // dQ_i = dS K_i,  dK_i = dS^T Q_i.
      gemm(path, {s.t_q, s.d_k, s.t_k, dp, s.t_k, ki, hk, dqi, hk, nullptr, false});
      gemm(path, {s.t_k, s.d_k, s.t_q, dp, s.t_k, qi, hk, dki, hk, nullptr, false, true, false});
    }
  }

  // Input projections. Aliased input gradients add up (self-attention).
  const bool key_acc = g.key && g.key == g.query;
  const bool value_acc = g.value && (g.value == g.query || g.value == g.key);
  projection_backward(path, rq, dm, hk, in.query, w.w_q, dq, g.w_q, g.b_q, g.query, false);
  projection_backward(path, rk, dm, hk, in.key, w.w_k, dk, g.w_k, g.b_k, g.key, key_acc);
  projection_backward(path, rk, dm, hv, in.value, w.w_v, dv, g.w_v, g.b_v, g.value, value_acc);
}

}  // namespace headlab
