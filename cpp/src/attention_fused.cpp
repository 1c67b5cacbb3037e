#include "headlab/attention_fused.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "simd_exp.hpp"

namespace headlab {

namespace {

using simd::exp2_nonpositive_batch;
using simd::fbatch;
using simd::W;

constexpr float kLog2e = 1.44269504088896341f;

// The reference stays scalar (clang would vectorise its loops), so that the
// tests compare two independent computations.
#if defined(__clang__)
#define HEADLAB_SCALAR_LOOP _Pragma("clang loop vectorize(disable) interleave(disable)")
#else
#define HEADLAB_SCALAR_LOOP
#endif

// Running maximum before any key has been seen. Finite, so that for a row with
// nothing attended yet, masked scores (-inf) minus it stay -inf (weight 0) and
// no -inf - -inf = NaN appears; a real score replaces it at once, and
// 2^(kNoMax - m) underflows to exactly 0.
constexpr float kNoMax = -1e30f;

// Register blocks: scores kQR query rows x kSB batches of keys, P V kQR rows
// x kVB batches of the value width (8 accumulators each). Query block kBR
// rows, key tile kBC keys. In wasm under Node (bench/native "attention"),
// 2x16 micro-tiles, blocks of 16 or 64 rows and tiles of 128 keys all came
// within noise (about 5%) of this choice; most of the time is in the two
// micro-kernels, the rest in the row maxima and 2^x.
constexpr std::size_t kQR = 4, kSB = 2, kKN = kSB * W;
constexpr std::size_t kVB = 2, kVN = kVB * W;
constexpr std::size_t kBR = 32, kBC = 64;
constexpr std::size_t kQRW = (kQR + W - 1) / W * W;  // kQR rounded up to whole batches
static_assert(kBR % kQR == 0 && kBC % kKN == 0, "tiles hold whole micro-tiles");

constexpr std::size_t round_up(std::size_t n, std::size_t m) {
  return (n + m - 1) / m * m;
}

// Workspace layout (floats), each part a multiple of 16 floats:
//   kt [ceil(t_k / kKN)][d_k][kKN]  K^T of the attended keys in panels of kKN keys
//   vp [t_k][dvp]                   attended rows of V, width padded to dvp
//   qp [kBR / kQR][d_k][kQR]        the query block, times scale * log2(e)
//   s  [kBR][kBC]                   a tile of scores, then of probabilities
//   ob [kBR][dvp]                   unnormalised outputs of the query block
//   m, l [kBR]                      running maximum and running sum per row
struct Layout {
  std::size_t dvp, kt, vp, qp, s, ob, m, l, total;
};

Layout layout(const AttentionArgs& a) {
  Layout l{};
  l.dvp = round_up(std::max<std::size_t>(a.d_v, 1), kVN);
  l.kt = 0;
  l.vp = l.kt + round_up(round_up(a.t_k, kKN) * a.d_k, 16);
  l.qp = l.vp + round_up(a.t_k * l.dvp, 16);
  l.s = l.qp + round_up(kBR * a.d_k, 16);
  l.ob = l.s + kBR * kBC;
  l.m = l.ob + kBR * l.dvp;
  l.l = l.m + kBR;
  l.total = l.l + kBR;
  return l;
}

// s[kQR][kKN] (row stride kBC) = qp[d_k][kQR] broadcast x kt[d_k][kKN].
inline void score_tile(std::size_t d_k, const float* qp, const float* kt, float* s) {
  fbatch acc[kQR][kSB];
  for (std::size_t r = 0; r < kQR; ++r)
    for (std::size_t c = 0; c < kSB; ++c) acc[r][c] = fbatch(0.0f);
  for (std::size_t p = 0; p < d_k; ++p, qp += kQR, kt += kKN) {
    fbatch kv[kSB];
    for (std::size_t c = 0; c < kSB; ++c) kv[c] = fbatch::load_unaligned(kt + c * W);
    for (std::size_t r = 0; r < kQR; ++r) {
      const fbatch qv(qp[r]);
      for (std::size_t c = 0; c < kSB; ++c) acc[r][c] = simd::fma(qv, kv[c], acc[r][c]);
    }
  }
  for (std::size_t r = 0; r < kQR; ++r)
    for (std::size_t c = 0; c < kSB; ++c) acc[r][c].store_unaligned(s + r * kBC + c * W);
}

// ob[kQR][kVN] (row stride dvp) = ob * alpha[r] + p[kQR][keys] (row stride kBC)
// broadcast x v[keys][kVN] (row stride dvp).
inline void pv_tile(std::size_t keys, const float* p, const float* v, std::size_t dvp, const float* alpha,
                    float* ob) {
  fbatch acc[kQR][kVB];
  for (std::size_t r = 0; r < kQR; ++r) {
    const fbatch al(alpha[r]);
    for (std::size_t c = 0; c < kVB; ++c) acc[r][c] = fbatch::load_unaligned(ob + r * dvp + c * W) * al;
  }
  for (std::size_t j = 0; j < keys; ++j, ++p, v += dvp) {
    fbatch vv[kVB];
    for (std::size_t c = 0; c < kVB; ++c) vv[c] = fbatch::load_unaligned(v + c * W);
    for (std::size_t r = 0; r < kQR; ++r) {
      const fbatch pr(p[r * kBC]);
      for (std::size_t c = 0; c < kVB; ++c) acc[r][c] = simd::fma(pr, vv[c], acc[r][c]);
    }
  }
  for (std::size_t r = 0; r < kQR; ++r)
    for (std::size_t c = 0; c < kVB; ++c) acc[r][c].store_unaligned(ob + r * dvp + c * W);
}

// Maximum of row[0..n), n a multiple of W.
inline float row_max(const float* row, std::size_t n) {
  fbatch m0(-std::numeric_limits<float>::infinity()), m1 = m0;
  std::size_t c = 0;
  for (; c + 2 * W <= n; c += 2 * W) {
    m0 = simd::max(m0, fbatch::load_unaligned(row + c));
    m1 = simd::max(m1, fbatch::load_unaligned(row + c + W));
  }
  for (; c < n; c += W) m0 = simd::max(m0, fbatch::load_unaligned(row + c));
  return simd::lanes_max(simd::max(m0, m1));
}

// row[c] = 2^(row[c] - m) for c < n (a multiple of W); returns the sum.
inline float row_exp2_sum(float* row, std::size_t n, float m) {
  const fbatch mb(m);
  fbatch s0(0.0f), s1(0.0f);
  std::size_t c = 0;
  for (; c + 2 * W <= n; c += 2 * W) {
    const fbatch e0 = exp2_nonpositive_batch(fbatch::load_unaligned(row + c) - mb);
    const fbatch e1 = exp2_nonpositive_batch(fbatch::load_unaligned(row + c + W) - mb);
    e0.store_unaligned(row + c);
    e1.store_unaligned(row + c + W);
    s0 += e0;
    s1 += e1;
  }
  for (; c < n; c += W) {
    const fbatch e = exp2_nonpositive_batch(fbatch::load_unaligned(row + c) - mb);
    e.store_unaligned(row + c);
    s0 += e;
  }
  return simd::lanes_sum(s0 + s1);
}

}  // namespace

std::size_t attention_fused_ref_workspace_floats(const AttentionArgs& a) {
  return a.d_v;
}

std::size_t attention_fused_simd_workspace_floats(const AttentionArgs& a) {
  return layout(a).total;
}

void attention_fused_ref(const AttentionArgs& a, float* acc) {
  const float ninf = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < a.t_q; ++i) {
    const float* q = a.q + i * a.ldq;
    float m = ninf, l = 0.0f;
    std::fill(acc, acc + a.d_v, 0.0f);
    for (std::size_t j = 0; j < a.t_k; ++j) {
      if ((a.causal && j > i) || (a.key_mask && a.key_mask[j] == 0)) continue;
      const float* k = a.k + j * a.ldk;
      float s = 0.0f;
      for (std::size_t c = 0; c < a.d_k; ++c) s += q[c] * k[c];
      s *= a.scale;
      const float m_new = std::max(m, s);
      const float alpha = std::exp(m - m_new);  // 0 for the first key (m = -inf)
      const float p = std::exp(s - m_new);
      l = l * alpha + p;
      const float* v = a.v + j * a.ldv;
      HEADLAB_SCALAR_LOOP
      for (std::size_t c = 0; c < a.d_v; ++c) acc[c] = acc[c] * alpha + p * v[c];
      m = m_new;
    }
    float* o = a.o + i * a.ldo;
    HEADLAB_SCALAR_LOOP
    for (std::size_t c = 0; c < a.d_v; ++c) o[c] = l > 0.0f ? acc[c] / l : 0.0f;
  }
}

void attention_fused_simd(const AttentionArgs& a, float* ws) {
  const Layout L = layout(a);
  const std::size_t d_k = a.d_k, d_v = a.d_v, dvp = L.dvp;
  float* kt = ws + L.kt;
  float* vp = ws + L.vp;
  float* qp = ws + L.qp;
  float* s = ws + L.s;
  float* ob = ws + L.ob;
  float* mrow = ws + L.m;
  float* lrow = ws + L.l;
  const float ninf = -std::numeric_limits<float>::infinity();

  // Pack the attended keys: K^T in panels of kKN keys (zero past the last) and
  // V rows padded to dvp columns. Packed key j' is the j'-th attended key.
  std::size_t nk = 0;
  for (std::size_t j = 0; j < a.t_k; ++j) {
    if (a.key_mask && a.key_mask[j] == 0) continue;
    const float* k = a.k + j * a.ldk;
    float* dst = kt + (nk / kKN) * d_k * kKN + nk % kKN;
    for (std::size_t c = 0; c < d_k; ++c) dst[c * kKN] = k[c];
    const float* v = a.v + j * a.ldv;
    std::copy(v, v + d_v, vp + nk * dvp);
    std::fill(vp + nk * dvp + d_v, vp + (nk + 1) * dvp, 0.0f);
    ++nk;
  }
  for (std::size_t j = nk; j < round_up(nk, kKN); ++j) {
    float* dst = kt + (j / kKN) * d_k * kKN + j % kKN;
    for (std::size_t c = 0; c < d_k; ++c) dst[c * kKN] = 0.0f;
  }

  // Causal: row i attends the attended keys among 0..i, a prefix of the packed
  // keys; seen counts them as i advances (rows are visited in order).
  std::size_t next_key = 0, seen = 0;
  const float qscale = a.scale * kLog2e;
  for (std::size_t r0 = 0; r0 < a.t_q; r0 += kBR) {
    const std::size_t br = std::min(kBR, a.t_q - r0);
    const std::size_t groups = (br + kQR - 1) / kQR;
    std::size_t nrow[kBR];  // packed keys row r0 + r attends: 0..nrow[r]-1
    for (std::size_t r = 0; r < kBR; ++r) {
      if (r >= br) {
        nrow[r] = 0;
        continue;
      }
      if (!a.causal) {
        nrow[r] = nk;
        continue;
      }
      for (; next_key <= r0 + r && next_key < a.t_k; ++next_key)
        seen += (!a.key_mask || a.key_mask[next_key] != 0) ? 1 : 0;
      nrow[r] = seen;
    }
    std::size_t kmax = 0;
    for (std::size_t r = 0; r < br; ++r) kmax = std::max(kmax, nrow[r]);

    for (std::size_t g = 0; g < groups; ++g)
      for (std::size_t p = 0; p < d_k; ++p)
        for (std::size_t r = 0; r < kQR; ++r) {
          const std::size_t row = g * kQR + r;
          qp[(g * d_k + p) * kQR + r] = row < br ? a.q[(r0 + row) * a.ldq + p] * qscale : 0.0f;
        }
    std::fill(ob, ob + kBR * dvp, 0.0f);
    std::fill(mrow, mrow + kBR, kNoMax);
    std::fill(lrow, lrow + kBR, 0.0f);

    for (std::size_t j0 = 0; j0 < kmax; j0 += kBC) {
      const std::size_t bc = std::min(kBC, kmax - j0);
      for (std::size_t g = 0; g < groups; ++g) {
        // Keys this group of rows can see in the tile: 0..gk-1.
        std::size_t gmax = 0;
        for (std::size_t r = 0; r < kQR; ++r) gmax = std::max(gmax, nrow[g * kQR + r]);
        const std::size_t gk = gmax > j0 ? std::min(bc, gmax - j0) : 0;
        if (gk == 0) continue;  // every key of the tile is masked for these rows
        const std::size_t gkp = round_up(gk, kKN);
        float* sg = s + g * kQR * kBC;
        for (std::size_t c = 0; c < gkp; c += kKN)
          score_tile(d_k, qp + g * d_k * kQR, kt + (j0 + c) * d_k, sg + c);
        // New running maxima, and the factors 2^(m_old - m_new) for the old sums.
        alignas(64) float m_new[kQRW], scale_old[kQRW] = {};
        for (std::size_t r = 0; r < kQR; ++r) {
          const std::size_t row = g * kQR + r;
          // Mask keys past the row's prefix (and the zero padding of the tile).
          const std::size_t seen_here = nrow[row] > j0 ? std::min(gkp, nrow[row] - j0) : 0;
          std::fill(sg + r * kBC + seen_here, sg + r * kBC + gkp, ninf);
          m_new[r] = std::max(mrow[row], row_max(sg + r * kBC, gkp));
          scale_old[r] = mrow[row] - m_new[r];
        }
        for (std::size_t r = 0; r < kQRW; r += W)
          exp2_nonpositive_batch(fbatch::load_aligned(scale_old + r)).store_aligned(scale_old + r);
        for (std::size_t r = 0; r < kQR; ++r) {
          const std::size_t row = g * kQR + r;
          lrow[row] = lrow[row] * scale_old[r] + row_exp2_sum(sg + r * kBC, gkp, m_new[r]);
          mrow[row] = m_new[r];
        }
        for (std::size_t c = 0; c < dvp; c += kVN)
          pv_tile(gk, sg, vp + j0 * dvp + c, dvp, scale_old, ob + g * kQR * dvp + c);
      }
    }

    for (std::size_t r = 0; r < br; ++r) {
      float* o = a.o + (r0 + r) * a.ldo;
      const float inv = lrow[r] > 0.0f ? 1.0f / lrow[r] : 0.0f;
      for (std::size_t c = 0; c < d_v; ++c) o[c] = ob[r * dvp + c] * inv;
    }
  }
}

}  // namespace headlab
