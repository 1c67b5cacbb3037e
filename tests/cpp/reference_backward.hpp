// Independent reference for multi-head attention forward and backward, one
// sequence at a time, templated on the scalar type, written from the formulas
// with plain loops (no code shared with cpp/src):
//   q_i = X_q W_i^Q + b_i^Q,  k_i = X_k W_i^K + b_i^K,  v_i = X_v W_i^V + b_i^V
//   P_i = softmax(q_i k_i^T / sqrt(d_k)) (masked entries 0),  head_i = P_i v_i
//   Y = Concat(head_i, 0 for disabled heads) W^O + b^O
// and, for a given dY, every gradient by the chain rule:
//   dConcat = dY W^O^T, dW^O = Concat^T dY, db^O = sum_rows dY
//   dv_i = P_i^T dhead_i, dP_i = dhead_i v_i^T
//   dS_i = P_i * (dP_i - rowsum(dP_i * P_i)) / sqrt(d_k)
//   dq_i = dS_i k_i, dk_i = dS_i^T q_i, then dW = X^T d(proj), dX = d(proj) W^T.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "headlab/mha.hpp"

namespace refb {

// Inputs and parameters of one problem (or their gradients), in scalar type T.
// Layouts as in mha.hpp; query [t_q, d_model], key/value [t_k, d_model].
template <class T>
struct Tensors {
  std::vector<T> query, key, value, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o;

  static constexpr int count = 11;
  static const char* name(int i) {
    static const char* names[] = {"query", "key", "value", "w_q", "w_k", "w_v",
                                  "w_o",   "b_q", "b_k",   "b_v", "b_o"};
    return names[i];
  }
  std::vector<T>& at(int i) {
    std::vector<T>* t[] = {&query, &key, &value, &w_q, &w_k, &w_v, &w_o, &b_q, &b_k, &b_v, &b_o};
    return *t[i];
  }
  const std::vector<T>& at(int i) const { return const_cast<Tensors*>(this)->at(i); }
};

struct Config {
  headlab::MhaShape shape;             // resolved
  std::vector<std::uint8_t> key_mask;  // [t_k] or empty
  std::vector<std::uint8_t> head_on;   // [h] or empty (all on)
  bool bias = false;
};

template <class T>
struct Forward {
  std::vector<T> q, k, v, p, concat, y;  // q [h][t_q][d_k], k [h][t_k][d_k], v [h][t_k][d_v],
                                         // p [h][t_q][t_k], concat [t_q][h*d_v], y [t_q][d_model]
};

template <class T>
Forward<T> forward(const Config& c, const Tensors<T>& x) {
  const auto& s = c.shape;
  const std::size_t h = s.num_heads, hk = h * s.d_k, hv = h * s.d_v, dm = s.d_model;
  Forward<T> f;
  f.q.assign(h * s.t_q * s.d_k, T(0));
  f.k.assign(h * s.t_k * s.d_k, T(0));
  f.v.assign(h * s.t_k * s.d_v, T(0));
  f.p.assign(h * s.t_q * s.t_k, T(0));
  f.concat.assign(s.t_q * hv, T(0));
  f.y.assign(s.t_q * dm, T(0));
  for (std::size_t i = 0; i < h; ++i) {
    for (std::size_t t = 0; t < s.t_q; ++t)
      for (std::size_t a = 0; a < s.d_k; ++a) {
        T acc = c.bias ? x.b_q[i * s.d_k + a] : T(0);
        for (std::size_t m = 0; m < dm; ++m) acc += x.query[t * dm + m] * x.w_q[m * hk + i * s.d_k + a];
        f.q[(i * s.t_q + t) * s.d_k + a] = acc;
      }
    for (std::size_t t = 0; t < s.t_k; ++t) {
      for (std::size_t a = 0; a < s.d_k; ++a) {
        T acc = c.bias ? x.b_k[i * s.d_k + a] : T(0);
        for (std::size_t m = 0; m < dm; ++m) acc += x.key[t * dm + m] * x.w_k[m * hk + i * s.d_k + a];
        f.k[(i * s.t_k + t) * s.d_k + a] = acc;
      }
      for (std::size_t a = 0; a < s.d_v; ++a) {
        T acc = c.bias ? x.b_v[i * s.d_v + a] : T(0);
        for (std::size_t m = 0; m < dm; ++m) acc += x.value[t * dm + m] * x.w_v[m * hv + i * s.d_v + a];
        f.v[(i * s.t_k + t) * s.d_v + a] = acc;
      }
    }
    const bool on = c.head_on.empty() || c.head_on[i] != 0;
    for (std::size_t r = 0; r < s.t_q; ++r) {
      std::vector<T> sc(s.t_k);
      std::vector<bool> seen(s.t_k);
      bool any = false;
      T mx = T(0);
      for (std::size_t j = 0; j < s.t_k; ++j) {
        T dot = T(0);
        for (std::size_t a = 0; a < s.d_k; ++a)
          dot += f.q[(i * s.t_q + r) * s.d_k + a] * f.k[(i * s.t_k + j) * s.d_k + a];
        sc[j] = dot / std::sqrt(T(s.d_k));
        seen[j] = !(s.causal && j > r) && (c.key_mask.empty() || c.key_mask[j] != 0);
        if (seen[j] && (!any || sc[j] > mx)) mx = sc[j];
        any = any || seen[j];
      }
      T sum = T(0);
      for (std::size_t j = 0; j < s.t_k; ++j) sum += seen[j] ? std::exp(sc[j] - mx) : T(0);
      for (std::size_t j = 0; j < s.t_k; ++j) {
        const T pw = seen[j] ? std::exp(sc[j] - mx) / sum : T(0);
        f.p[(i * s.t_q + r) * s.t_k + j] = pw;
        if (on)
          for (std::size_t a = 0; a < s.d_v; ++a)
            f.concat[r * hv + i * s.d_v + a] += pw * f.v[(i * s.t_k + j) * s.d_v + a];
      }
    }
  }
  for (std::size_t t = 0; t < s.t_q; ++t)
    for (std::size_t m = 0; m < dm; ++m) {
      T acc = c.bias ? x.b_o[m] : T(0);
      for (std::size_t a = 0; a < hv; ++a) acc += f.concat[t * hv + a] * x.w_o[a * dm + m];
      f.y[t * dm + m] = acc;
    }
  return f;
}

// Gradients of sum(dy * Y) with respect to every tensor (bias gradients are
// filled even when the forward has no bias: they are d/db at b = 0).
template <class T>
Tensors<T> backward(const Config& c, const Tensors<T>& x, const std::vector<T>& dy) {
  const auto& s = c.shape;
  const std::size_t h = s.num_heads, hk = h * s.d_k, hv = h * s.d_v, dm = s.d_model;
  const Forward<T> f = forward(c, x);
  Tensors<T> g;
  for (int i = 0; i < Tensors<T>::count; ++i) g.at(i).assign(x.at(i).size(), T(0));
  g.b_q.assign(hk, T(0));
  g.b_k.assign(hk, T(0));
  g.b_v.assign(hv, T(0));
  g.b_o.assign(dm, T(0));

  std::vector<T> dconcat(s.t_q * hv, T(0));
  for (std::size_t t = 0; t < s.t_q; ++t)
    for (std::size_t m = 0; m < dm; ++m) {
      g.b_o[m] += dy[t * dm + m];
      for (std::size_t a = 0; a < hv; ++a) {
        g.w_o[a * dm + m] += f.concat[t * hv + a] * dy[t * dm + m];
        dconcat[t * hv + a] += dy[t * dm + m] * x.w_o[a * dm + m];
      }
    }
  for (std::size_t i = 0; i < h; ++i) {
    if (!(c.head_on.empty() || c.head_on[i] != 0)) continue;
    std::vector<T> dq(s.t_q * s.d_k, T(0)), dk(s.t_k * s.d_k, T(0)), dv(s.t_k * s.d_v, T(0));
    for (std::size_t r = 0; r < s.t_q; ++r) {
      const T* p = &f.p[(i * s.t_q + r) * s.t_k];
      const T* dh = &dconcat[r * hv + i * s.d_v];
      std::vector<T> dp(s.t_k, T(0));
      for (std::size_t j = 0; j < s.t_k; ++j)
        for (std::size_t a = 0; a < s.d_v; ++a) {
          dv[j * s.d_v + a] += p[j] * dh[a];
          dp[j] += dh[a] * f.v[(i * s.t_k + j) * s.d_v + a];
        }
      T dot = T(0);
      for (std::size_t j = 0; j < s.t_k; ++j) dot += dp[j] * p[j];
      for (std::size_t j = 0; j < s.t_k; ++j) {
        const T ds = p[j] * (dp[j] - dot) / std::sqrt(T(s.d_k));
        for (std::size_t a = 0; a < s.d_k; ++a) {
          dq[r * s.d_k + a] += ds * f.k[(i * s.t_k + j) * s.d_k + a];
          dk[j * s.d_k + a] += ds * f.q[(i * s.t_q + r) * s.d_k + a];
        }
      }
    }
    auto project = [&](std::size_t rows, std::size_t width, std::size_t ld, std::size_t col0,
                       const std::vector<T>& xin, const std::vector<T>& wm, const std::vector<T>& d,
                       std::vector<T>& gw, std::vector<T>& gb, std::vector<T>& gx) {
      for (std::size_t t = 0; t < rows; ++t)
        for (std::size_t a = 0; a < width; ++a) {
          const T da = d[t * width + a];
          gb[col0 + a] += da;
          for (std::size_t m = 0; m < dm; ++m) {
            gw[m * ld + col0 + a] += xin[t * dm + m] * da;
            gx[t * dm + m] += da * wm[m * ld + col0 + a];
          }
        }
    };
    project(s.t_q, s.d_k, hk, i * s.d_k, x.query, x.w_q, dq, g.w_q, g.b_q, g.query);
    project(s.t_k, s.d_k, hk, i * s.d_k, x.key, x.w_k, dk, g.w_k, g.b_k, g.key);
    project(s.t_k, s.d_v, hv, i * s.d_v, x.value, x.w_v, dv, g.w_v, g.b_v, g.value);
  }
  return g;
}

}  // namespace refb
