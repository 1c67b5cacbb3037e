#include "headlab/attention_fused.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "simd_math.hpp"

namespace headlab {

namespace {

using simd::exp2_nonpositive_batch;
using simd::fbatch;
using simd::kLog2e;
using simd::W;

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

// ---------------------------------------------------------------- SIMD stages
// attention_fused_simd runs: pack_keys once; then per block of kBR query rows
// attended_prefixes, pack_queries, online_softmax (every key tile) and
// normalise.

// Stage 1. K^T of the attended keys in panels of kKN keys (zero past the
// last) and their V rows padded to dvp columns; packed key j' is the j'-th
// key with key_mask != 0. Returns how many keys were packed.
std::size_t pack_keys(const AttentionArgs& a, std::size_t dvp, float* kt, float* vp) {
  const std::size_t d_k = a.d_k, d_v = a.d_v;
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
  return nk;
}

// Where the causal prefix has got to: keys 0..next_key-1 of the input have been
// looked at, `seen` of them attended. Blocks are visited in order of rows.
struct CausalCursor {
  std::size_t next_key = 0, seen = 0;
};

// Stage 2. nrow[r] = how many packed keys row r0 + r attends (a prefix of
// them: all nk without causal, the attended keys among 0..r0+r with it); 0 for
// r >= br. Returns the largest.
std::size_t attended_prefixes(const AttentionArgs& a, std::size_t r0, std::size_t br, std::size_t nk,
                              CausalCursor& cursor, std::size_t* nrow) {
  std::size_t kmax = 0;
  for (std::size_t r = 0; r < kBR; ++r) {
    if (r >= br) {
      nrow[r] = 0;
      continue;
    }
    if (!a.causal) {
      nrow[r] = nk;
    } else {
      for (; cursor.next_key <= r0 + r && cursor.next_key < a.t_k; ++cursor.next_key)
        cursor.seen += (!a.key_mask || a.key_mask[cursor.next_key] != 0) ? 1 : 0;
      nrow[r] = cursor.seen;
    }
    kmax = std::max(kmax, nrow[r]);
  }
  return kmax;
}

// Stage 3. qp [groups][d_k][kQR] = rows r0..r0+br-1 of q times qscale
// (scale * log2(e), so that scores are exponents of 2), in groups of kQR rows
// interleaved for score_tile's broadcasts; rows past br are 0.
void pack_queries(const AttentionArgs& a, std::size_t r0, std::size_t br, float qscale, float* qp) {
  const std::size_t groups = (br + kQR - 1) / kQR;
  for (std::size_t g = 0; g < groups; ++g)
    for (std::size_t p = 0; p < a.d_k; ++p)
      for (std::size_t r = 0; r < kQR; ++r) {
        const std::size_t row = g * kQR + r;
        qp[(g * a.d_k + p) * kQR + r] = row < br ? a.q[(r0 + row) * a.ldq + p] * qscale : 0.0f;
      }
}

// What online_softmax reads and updates for one block of query rows.
struct Block {
  std::size_t br, d_k, dvp;
  const std::size_t* nrow;  // [kBR] from attended_prefixes
  const float* qp;          // packed queries (pack_queries)
  const float* kt;          // packed K^T (pack_keys)
  const float* vp;          // packed V rows (pack_keys)
  float* s;                 // [kBR][kBC] scratch tile
  float* ob;                // [kBR][dvp] unnormalised outputs
  float* m;                 // [kBR] running maxima (log2 units)
  float* l;                 // [kBR] running sums
};

// One group of kQR rows against keys j0..j0+bc-1 of the packed keys: scores,
// new running maxima m', the old sums and outputs rescaled by 2^(m - m'), and
// the tile's 2^(s - m') added to the sums and, times V, to the outputs.
void online_softmax_group(const Block& b, std::size_t g, std::size_t j0, std::size_t bc) {
  const float ninf = -std::numeric_limits<float>::infinity();
  // Keys this group of rows can see in the tile: 0..gk-1.
  std::size_t gmax = 0;
  for (std::size_t r = 0; r < kQR; ++r) gmax = std::max(gmax, b.nrow[g * kQR + r]);
  const std::size_t gk = gmax > j0 ? std::min(bc, gmax - j0) : 0;
  if (gk == 0) return;  // every key of the tile is masked for these rows
  const std::size_t gkp = round_up(gk, kKN);
  float* sg = b.s + g * kQR * kBC;
  for (std::size_t c = 0; c < gkp; c += kKN)
    score_tile(b.d_k, b.qp + g * b.d_k * kQR, b.kt + (j0 + c) * b.d_k, sg + c);
  // New running maxima, and the factors 2^(m_old - m_new) for the old sums.
  alignas(64) float m_new[kQRW], scale_old[kQRW] = {};
  for (std::size_t r = 0; r < kQR; ++r) {
    const std::size_t row = g * kQR + r;
    // Mask keys past the row's prefix (and the zero padding of the tile).
    const std::size_t seen_here = b.nrow[row] > j0 ? std::min(gkp, b.nrow[row] - j0) : 0;
    std::fill(sg + r * kBC + seen_here, sg + r * kBC + gkp, ninf);
    m_new[r] = std::max(b.m[row], simd::row_max(sg + r * kBC, gkp));
    scale_old[r] = b.m[row] - m_new[r];
  }
  for (std::size_t r = 0; r < kQRW; r += W)
    exp2_nonpositive_batch(fbatch::load_aligned(scale_old + r)).store_aligned(scale_old + r);
  for (std::size_t r = 0; r < kQR; ++r) {
    const std::size_t row = g * kQR + r;
    b.l[row] = b.l[row] * scale_old[r] + simd::row_exp2_sum(sg + r * kBC, gkp, m_new[r]);
    b.m[row] = m_new[r];
  }
  for (std::size_t c = 0; c < b.dvp; c += kVN)
    pv_tile(gk, sg, b.vp + j0 * b.dvp + c, b.dvp, scale_old, b.ob + g * kQR * b.dvp + c);
}

// Stage 4. The online softmax over the block's keys, kBC keys at a time: every
// row starts with m = kNoMax, l = 0 and a zero output, and each tile updates
// them (online_softmax_group). Keys past kmax are attended by no row.
void online_softmax(const Block& b, std::size_t kmax) {
  std::fill(b.ob, b.ob + kBR * b.dvp, 0.0f);
  std::fill(b.m, b.m + kBR, kNoMax);
  std::fill(b.l, b.l + kBR, 0.0f);
  const std::size_t groups = (b.br + kQR - 1) / kQR;
  for (std::size_t j0 = 0; j0 < kmax; j0 += kBC) {
    const std::size_t bc = std::min(kBC, kmax - j0);
    for (std::size_t g = 0; g < groups; ++g) online_softmax_group(b, g, j0, bc);
  }
}

// Stage 5. o = ob / l for the block's rows; a row that attended nothing
// (l = 0) gets zeros.
void normalise(const AttentionArgs& a, const Block& b, std::size_t r0) {
  for (std::size_t r = 0; r < b.br; ++r) {
    float* o = a.o + (r0 + r) * a.ldo;
    const float inv = b.l[r] > 0.0f ? 1.0f / b.l[r] : 0.0f;
    for (std::size_t c = 0; c < a.d_v; ++c) o[c] = b.ob[r * b.dvp + c] * inv;
  }
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
  float* kt = ws + L.kt;
  float* vp = ws + L.vp;
  float* qp = ws + L.qp;
  const std::size_t nk = pack_keys(a, L.dvp, kt, vp);
  const float qscale = a.scale * kLog2e;
  CausalCursor cursor;
  for (std::size_t r0 = 0; r0 < a.t_q; r0 += kBR) {
    const std::size_t br = std::min(kBR, a.t_q - r0);
    std::size_t nrow[kBR];
    const std::size_t kmax = attended_prefixes(a, r0, br, nk, cursor, nrow);
    pack_queries(a, r0, br, qscale, qp);
    const Block b{br, a.d_k, L.dvp, nrow, qp, kt, vp, ws + L.s, ws + L.ob, ws + L.m, ws + L.l};
    online_softmax(b, kmax);
    normalise(a, b, r0);
  }
}

void attention_fused(Path path, const AttentionArgs& a, float* workspace) {
  path == Path::simd ? attention_fused_simd(a, workspace) : attention_fused_ref(a, workspace);
}

}  // namespace headlab
