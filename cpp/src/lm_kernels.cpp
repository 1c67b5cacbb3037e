#include "headlab/lm_kernels.hpp"

#include <algorithm>
#include <cmath>

#include "simd.hpp"
#include "simd_math.hpp"

namespace headlab {

namespace {

using simd::fbatch;
using simd::W;

constexpr float kGeluK0 = 0.7978845608028654f;  // sqrt(2/pi)
constexpr float kGeluK1 = 0.044715f;

}  // namespace

// ---- LayerNorm ---------------------------------------------------------------

void layernorm_forward_ref(const LayerNormArgs& a) {
  for (std::size_t r = 0; r < a.rows; ++r) {
    const float* x = a.x + r * a.d;
    float* y = a.y + r * a.d;
    float mean = 0.0f;
    for (std::size_t c = 0; c < a.d; ++c) mean += x[c];
    mean /= float(a.d);
    float var = 0.0f;
    for (std::size_t c = 0; c < a.d; ++c) var += (x[c] - mean) * (x[c] - mean);
    var /= float(a.d);
    const float rstd = 1.0f / std::sqrt(var + a.eps);
    a.mean[r] = mean;
    a.rstd[r] = rstd;
    for (std::size_t c = 0; c < a.d; ++c) y[c] = (x[c] - mean) * rstd * a.gamma[c] + a.beta[c];
  }
}

void layernorm_forward_simd(const LayerNormArgs& a) {
  const std::size_t d = a.d, main = d - d % W;
  for (std::size_t r = 0; r < a.rows; ++r) {
    const float* x = a.x + r * d;
    float* y = a.y + r * d;
    fbatch acc(0.0f);
    for (std::size_t c = 0; c < main; c += W) acc += fbatch::load_unaligned(x + c);
    float sum = simd::lanes_sum(acc);
    for (std::size_t c = main; c < d; ++c) sum += x[c];
    const float mean = sum / float(d);
    const fbatch mb(mean);
    fbatch vacc(0.0f);
    for (std::size_t c = 0; c < main; c += W) {
      const fbatch e = fbatch::load_unaligned(x + c) - mb;
      vacc = simd::fma(e, e, vacc);
    }
    float var = simd::lanes_sum(vacc);
    for (std::size_t c = main; c < d; ++c) var += (x[c] - mean) * (x[c] - mean);
    const float rstd = 1.0f / std::sqrt(var / float(d) + a.eps);
    a.mean[r] = mean;
    a.rstd[r] = rstd;
    const fbatch rb(rstd);
    for (std::size_t c = 0; c < main; c += W) {
      const fbatch xh = (fbatch::load_unaligned(x + c) - mb) * rb;
      simd::fma(xh, fbatch::load_unaligned(a.gamma + c), fbatch::load_unaligned(a.beta + c))
          .store_unaligned(y + c);
    }
    for (std::size_t c = main; c < d; ++c) y[c] = (x[c] - mean) * rstd * a.gamma[c] + a.beta[c];
  }
}

void layernorm_backward_ref(const LayerNormBackwardArgs& a) {
  const std::size_t d = a.d;
  std::fill(a.dgamma, a.dgamma + d, 0.0f);
  std::fill(a.dbeta, a.dbeta + d, 0.0f);
  for (std::size_t r = 0; r < a.rows; ++r) {
    const float* x = a.x + r * d;
    const float* dy = a.dy + r * d;
    float* dx = a.dx + r * d;
    const float mean = a.mean[r], rstd = a.rstd[r];
    float sum_g = 0.0f, sum_gx = 0.0f;
    for (std::size_t c = 0; c < d; ++c) {
      const float xhat = (x[c] - mean) * rstd;
      const float g = dy[c] * a.gamma[c];
      sum_g += g;
      sum_gx += g * xhat;
      a.dgamma[c] += dy[c] * xhat;
      a.dbeta[c] += dy[c];
    }
    const float mg = sum_g / float(d), mgx = sum_gx / float(d);
    for (std::size_t c = 0; c < d; ++c) {
      const float xhat = (x[c] - mean) * rstd;
      const float v = rstd * (dy[c] * a.gamma[c] - mg - xhat * mgx);
      dx[c] = a.accumulate_dx ? dx[c] + v : v;
    }
  }
}

void layernorm_backward_simd(const LayerNormBackwardArgs& a) {
  const std::size_t d = a.d, main = d - d % W;
  std::fill(a.dgamma, a.dgamma + d, 0.0f);
  std::fill(a.dbeta, a.dbeta + d, 0.0f);
  for (std::size_t r = 0; r < a.rows; ++r) {
    const float* x = a.x + r * d;
    const float* dy = a.dy + r * d;
    float* dx = a.dx + r * d;
    const float mean = a.mean[r], rstd = a.rstd[r];
    const fbatch mb(mean), rb(rstd);
    fbatch acc_g(0.0f), acc_gx(0.0f);
    for (std::size_t c = 0; c < main; c += W) {
      const fbatch xhat = (fbatch::load_unaligned(x + c) - mb) * rb;
      const fbatch dyb = fbatch::load_unaligned(dy + c);
      const fbatch g = dyb * fbatch::load_unaligned(a.gamma + c);
      acc_g += g;
      acc_gx = simd::fma(g, xhat, acc_gx);
      simd::fma(dyb, xhat, fbatch::load_unaligned(a.dgamma + c)).store_unaligned(a.dgamma + c);
      (fbatch::load_unaligned(a.dbeta + c) + dyb).store_unaligned(a.dbeta + c);
    }
    float sum_g = simd::lanes_sum(acc_g), sum_gx = simd::lanes_sum(acc_gx);
    for (std::size_t c = main; c < d; ++c) {
      const float xhat = (x[c] - mean) * rstd;
      const float g = dy[c] * a.gamma[c];
      sum_g += g;
      sum_gx += g * xhat;
      a.dgamma[c] += dy[c] * xhat;
      a.dbeta[c] += dy[c];
    }
    const float mg = sum_g / float(d), mgx = sum_gx / float(d);
    const fbatch mgb(mg), mgxb(mgx);
    for (std::size_t c = 0; c < main; c += W) {
      const fbatch xhat = (fbatch::load_unaligned(x + c) - mb) * rb;
      const fbatch g = fbatch::load_unaligned(dy + c) * fbatch::load_unaligned(a.gamma + c);
      fbatch v = rb * simd::fnma(xhat, mgxb, g - mgb);
      if (a.accumulate_dx) v += fbatch::load_unaligned(dx + c);
      v.store_unaligned(dx + c);
    }
    for (std::size_t c = main; c < d; ++c) {
      const float xhat = (x[c] - mean) * rstd;
      const float v = rstd * (dy[c] * a.gamma[c] - mg - xhat * mgx);
      dx[c] = a.accumulate_dx ? dx[c] + v : v;
    }
  }
}

// ---- GELU (tanh approximation) -----------------------------------------------

namespace {

// tanh(u) = 1 - 2 / (exp(2u) + 1): exp saturates to 0 or clamps at e^88, so
// the result saturates cleanly to -1 or 1.
inline fbatch tanh_batch(fbatch u) {
  const fbatch one(1.0f);
  return one - fbatch(2.0f) / (simd::exp_batch(u + u) + one);
}

}  // namespace

void gelu_forward_ref(const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + std::tanh(kGeluK0 * (v + kGeluK1 * v * v * v)));
  }
}

void gelu_forward_simd(const float* x, float* y, std::size_t n) {
  const fbatch k0(kGeluK0), k1(kGeluK1), half(0.5f), one(1.0f);
  std::size_t i = 0;
  for (; i + W <= n; i += W) {
    const fbatch v = fbatch::load_unaligned(x + i);
    const fbatch t = tanh_batch(k0 * simd::fma(k1 * v, v * v, v));
    (half * v * (one + t)).store_unaligned(y + i);
  }
  gelu_forward_ref(x + i, y + i, n - i);
}

void gelu_backward_ref(const float* x, const float* dy, float* dx, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float t = std::tanh(kGeluK0 * (v + kGeluK1 * v * v * v));
    const float du = kGeluK0 * (1.0f + 3.0f * kGeluK1 * v * v);
    dx[i] = dy[i] * (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du);
  }
}

void gelu_backward_simd(const float* x, const float* dy, float* dx, std::size_t n) {
  const fbatch k0(kGeluK0), k1(kGeluK1), k3(3.0f * kGeluK1), half(0.5f), one(1.0f);
  std::size_t i = 0;
  for (; i + W <= n; i += W) {
    const fbatch v = fbatch::load_unaligned(x + i);
    const fbatch v2 = v * v;
    const fbatch t = tanh_batch(k0 * simd::fma(k1 * v, v2, v));
    const fbatch du = k0 * simd::fma(k3, v2, one);
    const fbatch g = half * ((one + t) + v * simd::fnma(t, t, one) * du);
    (fbatch::load_unaligned(dy + i) * g).store_unaligned(dx + i);
  }
  gelu_backward_ref(x + i, dy + i, dx + i, n - i);
}

// ---- Softmax cross-entropy ---------------------------------------------------

namespace {

// After softmax the arg-max entry is 1/sum(exp(z - z_max)), so
// -log p[t] = -log p[best] - (z[t] - z[best]), without a separate log-sum-exp
// pass and without log of an underflowed p[t].
template <bool Simd>
double cross_entropy_rows(const CrossEntropyArgs& a) {
  const std::size_t v = a.vocab, main = v - v % W;
  double total = 0;
  for (std::size_t r = 0; r < a.rows; ++r) {
    float* z = a.logits + r * v;
    const std::int32_t target = a.targets[r];
    const std::size_t best = std::size_t(std::max_element(z, z + v) - z);
    const float margin = target >= 0 ? z[target] - z[best] : 0.0f;
    Simd ? softmax_rows_simd(z, 1, v, v) : softmax_rows_ref(z, 1, v, v);
    if (a.argmax) a.argmax[r] = std::int32_t(best);
    const float loss = target >= 0 ? -std::log(z[best]) - margin : 0.0f;
    if (a.loss) a.loss[r] = loss;
    total += double(loss);
    if (!a.dlogits) continue;
    float* dz = a.dlogits + r * v;
    const float s = target >= 0 ? a.grad_scale : 0.0f;
    std::size_t c = 0;
    if (Simd) {
      const fbatch sb(s);
      for (; c < main; c += W) (fbatch::load_unaligned(z + c) * sb).store_unaligned(dz + c);
    }
    for (; c < v; ++c) dz[c] = z[c] * s;
    if (target >= 0) dz[target] -= s;
  }
  return total;
}

}  // namespace

double cross_entropy_rows_ref(const CrossEntropyArgs& a) {
  return cross_entropy_rows<false>(a);
}
double cross_entropy_rows_simd(const CrossEntropyArgs& a) {
  return cross_entropy_rows<true>(a);
}

// ---- Embeddings --------------------------------------------

namespace {

template <bool Simd>
void embedding_forward(const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                       const float* tok_emb, const float* pos_emb, float* x) {
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t t = 0; t < t_len; ++t) {
      const std::size_t row = b * t_len + t;
      const float* e = tok_emb + std::size_t(tokens[row]) * d;
      Simd ? add_simd(e, pos_emb + t * d, x + row * d, d) : add_ref(e, pos_emb + t * d, x + row * d, d);
    }
}

template <bool Simd>
void embedding_backward(const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                        std::size_t vocab, const float* dx, float* g_tok, float* g_pos) {
  std::fill(g_tok, g_tok + vocab * d, 0.0f);
  std::fill(g_pos, g_pos + t_len * d, 0.0f);
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t t = 0; t < t_len; ++t) {
      const std::size_t row = b * t_len + t;
      const float* src = dx + row * d;
      float* gt = g_tok + std::size_t(tokens[row]) * d;
      float* gp = g_pos + t * d;
      if (Simd) {
        add_simd(gt, src, gt, d);
        add_simd(gp, src, gp, d);
      } else {
        add_ref(gt, src, gt, d);
        add_ref(gp, src, gp, d);
      }
    }
}

}  // namespace

void embedding_forward_ref(const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                           const float* tok_emb, const float* pos_emb, float* x) {
  embedding_forward<false>(tokens, batch, t_len, d, tok_emb, pos_emb, x);
}
void embedding_forward_simd(const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                            const float* tok_emb, const float* pos_emb, float* x) {
  embedding_forward<true>(tokens, batch, t_len, d, tok_emb, pos_emb, x);
}
void embedding_backward_ref(const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                            std::size_t vocab, const float* dx, float* g_tok, float* g_pos) {
  embedding_backward<false>(tokens, batch, t_len, d, vocab, dx, g_tok, g_pos);
}
void embedding_backward_simd(const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                             std::size_t vocab, const float* dx, float* g_tok, float* g_pos) {
  embedding_backward<true>(tokens, batch, t_len, d, vocab, dx, g_tok, g_pos);
}

// ---- Dispatch ----------------------------------------------

void layernorm_forward(Path path, const LayerNormArgs& a) {
  path == Path::simd ? layernorm_forward_simd(a) : layernorm_forward_ref(a);
}
void layernorm_backward(Path path, const LayerNormBackwardArgs& a) {
  path == Path::simd ? layernorm_backward_simd(a) : layernorm_backward_ref(a);
}
void gelu_forward(Path path, const float* x, float* y, std::size_t n) {
  path == Path::simd ? gelu_forward_simd(x, y, n) : gelu_forward_ref(x, y, n);
}
void gelu_backward(Path path, const float* x, const float* dy, float* dx, std::size_t n) {
  path == Path::simd ? gelu_backward_simd(x, dy, dx, n) : gelu_backward_ref(x, dy, dx, n);
}
double cross_entropy_rows(Path path, const CrossEntropyArgs& a) {
  return path == Path::simd ? cross_entropy_rows_simd(a) : cross_entropy_rows_ref(a);
}
void embedding_forward(Path path, const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                       const float* tok_emb, const float* pos_emb, float* x) {
  path == Path::simd ? embedding_forward_simd(tokens, batch, t_len, d, tok_emb, pos_emb, x)
                     : embedding_forward_ref(tokens, batch, t_len, d, tok_emb, pos_emb, x);
}
void embedding_backward(Path path, const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                        std::size_t vocab, const float* dx, float* g_tok, float* g_pos) {
  path == Path::simd ? embedding_backward_simd(tokens, batch, t_len, d, vocab, dx, g_tok, g_pos)
                     : embedding_backward_ref(tokens, batch, t_len, d, vocab, dx, g_tok, g_pos);
}

}  // namespace headlab
