// Double-precision reference of the language model in lm.hpp, written for
// reading rather than speed: plain loops over one sequence at a time, every
// intermediate a fresh vector. Parameters are read through lm_layout(), so the
// reference and the model share only the parameter layout (no kernels).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "headlab/lm.hpp"

namespace reflm {

using Mat = std::vector<std::vector<double>>;  // [rows][cols]

inline Mat zeros(std::size_t r, std::size_t c) {
  return Mat(r, std::vector<double>(c, 0.0));
}

// y = x W + b, W row-major [in, out] at p[w], b at p[b] (no bias when b is npos).
inline Mat linear(const Mat& x, const std::vector<double>& p, std::size_t w, std::size_t b, std::size_t in,
                  std::size_t out) {
  Mat y = zeros(x.size(), out);
  for (std::size_t r = 0; r < x.size(); ++r)
    for (std::size_t j = 0; j < out; ++j) {
      double s = p[b + j];
      for (std::size_t k = 0; k < in; ++k) s += x[r][k] * p[w + k * out + j];
      y[r][j] = s;
    }
  return y;
}

inline Mat layernorm(const Mat& x, const std::vector<double>& p, std::size_t g, std::size_t b, double eps) {
  Mat y = x;
  for (std::size_t r = 0; r < x.size(); ++r) {
    const std::size_t d = x[r].size();
    double mean = 0, var = 0;
    for (double v : x[r]) mean += v;
    mean /= double(d);
    for (double v : x[r]) var += (v - mean) * (v - mean);
    var /= double(d);
    for (std::size_t c = 0; c < d; ++c)
      y[r][c] = (x[r][c] - mean) / std::sqrt(var + eps) * p[g + c] + p[b + c];
  }
  return y;
}

inline double gelu(double x) {
  const double k = std::sqrt(2.0 / 3.14159265358979323846);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

// Causal multi-head self-attention of one sequence x [T, d]. weights_out, when
// given, receives [h][T][T].
inline Mat attention(const Mat& x, const std::vector<double>& p, const headlab::LmLayerLayout& y,
                     std::size_t d, std::size_t h, const std::uint8_t* enabled,
                     std::vector<Mat>* weights_out) {
  const std::size_t t_len = x.size(), dk = d / h;
  const Mat q = linear(x, p, y.w_q, y.b_q, d, d);
  const Mat k = linear(x, p, y.w_k, y.b_k, d, d);
  const Mat v = linear(x, p, y.w_v, y.b_v, d, d);
  Mat concat = zeros(t_len, d);
  if (weights_out) weights_out->assign(h, zeros(t_len, t_len));
  for (std::size_t i = 0; i < h; ++i) {
    for (std::size_t a = 0; a < t_len; ++a) {
      std::vector<double> w(a + 1);
      double mx = -1e300;
      for (std::size_t b = 0; b <= a; ++b) {
        double s = 0;
        for (std::size_t c = 0; c < dk; ++c) s += q[a][i * dk + c] * k[b][i * dk + c];
        w[b] = s / std::sqrt(double(dk));
        mx = std::max(mx, w[b]);
      }
      double z = 0;
      for (double& e : w) z += (e = std::exp(e - mx));
      for (double& e : w) e /= z;
      if (weights_out)
        for (std::size_t b = 0; b <= a; ++b) (*weights_out)[i][a][b] = w[b];
      if (enabled && !enabled[i]) continue;
      for (std::size_t c = 0; c < dk; ++c) {
        double s = 0;
        for (std::size_t b = 0; b <= a; ++b) s += w[b] * v[b][i * dk + c];
        concat[a][i * dk + c] = s;
      }
    }
  }
  return linear(concat, p, y.w_o, y.b_o, d, d);
}

// Mean next-token cross-entropy over the n sequences (targets -1 ignored).
// logits_out, when given, receives [n*T][vocab]; weights_out [n][L][h][T][T].
inline double loss(const headlab::LmConfig& c, const std::vector<double>& p, const std::int32_t* tokens,
                   const std::int32_t* targets, std::size_t n, const std::uint8_t* head_enabled = nullptr,
                   Mat* logits_out = nullptr,
                   std::vector<std::vector<std::vector<Mat>>>* weights_out = nullptr) {
  const headlab::LmLayout lay = headlab::lm_layout(c);
  const std::size_t d = c.d_model, t_len = c.seq_len, v = c.vocab, f = 4 * d;
  double total = 0;
  std::size_t count = 0;
  if (logits_out) logits_out->clear();
  if (weights_out) weights_out->assign(n, {});
  for (std::size_t s = 0; s < n; ++s) {
    Mat x = zeros(t_len, d);
    for (std::size_t t = 0; t < t_len; ++t)
      for (std::size_t j = 0; j < d; ++j)
        x[t][j] = p[lay.tok_emb + std::size_t(tokens[s * t_len + t]) * d + j] + p[lay.pos_emb + t * d + j];
    for (std::size_t l = 0; l < c.num_layers; ++l) {
      const headlab::LmLayerLayout& y = lay.layers[l];
      std::vector<Mat> w;
      const Mat a = attention(layernorm(x, p, y.ln1_g, y.ln1_b, c.ln_eps), p, y, d, c.num_heads,
                              head_enabled ? head_enabled + l * c.num_heads : nullptr, &w);
      if (weights_out) (*weights_out)[s].push_back(w);
      for (std::size_t t = 0; t < t_len; ++t)
        for (std::size_t j = 0; j < d; ++j) x[t][j] += a[t][j];
      if (!c.mlp) continue;
      Mat hdn = linear(layernorm(x, p, y.ln2_g, y.ln2_b, c.ln_eps), p, y.w_fc, y.b_fc, d, f);
      for (auto& row : hdn)
        for (double& e : row) e = gelu(e);
      const Mat m = linear(hdn, p, y.w_proj, y.b_proj, f, d);
      for (std::size_t t = 0; t < t_len; ++t)
        for (std::size_t j = 0; j < d; ++j) x[t][j] += m[t][j];
    }
    const Mat logits =
        linear(layernorm(x, p, lay.lnf_g, lay.lnf_b, c.ln_eps), p, lay.w_unembed, lay.b_unembed, d, v);
    for (std::size_t t = 0; t < t_len; ++t) {
      if (logits_out) logits_out->push_back(logits[t]);
      const std::int32_t target = targets[s * t_len + t];
      if (target < 0) continue;
      double mx = -1e300, z = 0;
      for (double e : logits[t]) mx = std::max(mx, e);
      for (double e : logits[t]) z += std::exp(e - mx);
      total += std::log(z) + mx - logits[t][std::size_t(target)];
      ++count;
    }
  }
  return count ? total / double(count) : 0.0;
}

}  // namespace reflm
