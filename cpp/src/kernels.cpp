#include "headlab/kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "simd_math.hpp"

namespace headlab {

using simd::exp2_nonpositive_batch;
using simd::exp_batch;
using simd::fbatch;
using simd::W;

// ----------------------------------------------------------------------- GEMM

namespace {

inline float init_value(const GemmArgs& g, std::size_t i, std::size_t j) {
  float v = g.accumulate ? g.c[i * g.ldc + j] : 0.0f;
  if (g.bias) v += g.bias[j];
  return v;
}

inline fbatch init_batch(const GemmArgs& g, std::size_t i, std::size_t j) {
  fbatch v = g.accumulate ? fbatch::load_unaligned(g.c + i * g.ldc + j) : fbatch(0.0f);
  if (g.bias) v += fbatch::load_unaligned(g.bias + j);
  return v;
}

// Element (i, p) of op(A) and (p, j) of op(B) (GemmArgs' trans_a, trans_b).
inline float a_at(const GemmArgs& g, std::size_t i, std::size_t p) {
  return g.trans_a ? g.a[p * g.lda + i] : g.a[i * g.lda + p];
}
inline float b_at(const GemmArgs& g, std::size_t p, std::size_t j) {
  return g.trans_b ? g.b[j * g.ldb + p] : g.b[p * g.ldb + j];
}

// Register block of MR rows x NB batches of columns: MR*NB accumulators stay in
// registers for the whole k loop (at most 8, which V8 can keep in XMM registers).
// B is not transposed here (gemm_simd tiles a transposed B first); with TransA
// the MR broadcasts of each k step are one contiguous row of the stored A^T.
template <std::size_t MR, std::size_t NB, bool TransA>
inline void gemm_block(const GemmArgs& g, std::size_t i0, std::size_t j0) {
  fbatch acc[MR][NB];
  for (std::size_t r = 0; r < MR; ++r)
    for (std::size_t c = 0; c < NB; ++c) acc[r][c] = init_batch(g, i0 + r, j0 + c * W);
  const float* a = TransA ? g.a + i0 : g.a + i0 * g.lda;
  const float* b = g.b + j0;
  for (std::size_t p = 0; p < g.k; ++p) {
    fbatch bv[NB];
    for (std::size_t c = 0; c < NB; ++c) bv[c] = fbatch::load_unaligned(b + p * g.ldb + c * W);
    for (std::size_t r = 0; r < MR; ++r) {
      const fbatch av(TransA ? a[p * g.lda + r] : a[r * g.lda + p]);
      for (std::size_t c = 0; c < NB; ++c) acc[r][c] = simd::fma(av, bv[c], acc[r][c]);
    }
  }
  for (std::size_t r = 0; r < MR; ++r)
    for (std::size_t c = 0; c < NB; ++c)
      acc[r][c].store_unaligned(g.c + (i0 + r) * g.ldc + j0 + c * W);
}

template <std::size_t MR, bool TransA>
inline void gemm_rows(const GemmArgs& g, std::size_t i0) {
  std::size_t j = 0;
  for (; j + 2 * W <= g.n; j += 2 * W) gemm_block<MR, 2, TransA>(g, i0, j);
  for (; j + W <= g.n; j += W) gemm_block<MR, 1, TransA>(g, i0, j);
  // Leftover columns (n % W): scalar.
  for (; j < g.n; ++j) {
    for (std::size_t r = 0; r < MR; ++r) {
      const std::size_t i = i0 + r;
      float s = init_value(g, i, j);
      for (std::size_t p = 0; p < g.k; ++p) s += a_at(g, i, p) * g.b[p * g.ldb + j];
      g.c[i * g.ldc + j] = s;
    }
  }
}

template <bool TransA>
void gemm_simd_plain_b(const GemmArgs& g) {
  std::size_t i = 0;
  for (; i + 4 <= g.m; i += 4) gemm_rows<4, TransA>(g, i);
  for (; i < g.m; ++i) gemm_rows<1, TransA>(g, i);
}

// B stored transposed ([n, k]): tiles of op(B) [kTileK, kTileN] are copied
// row-major into a stack buffer (16 KB, L1) and multiplied there. The first k
// tile starts from C (accumulate) or 0 plus bias, later ones add to C: each
// C[i,j] still sums over p in order, so the result is that of gemm_ref.
constexpr std::size_t kTileK = 64, kTileN = 64;
static_assert(kTileN % (2 * W) == 0, "whole register blocks per tile");

void gemm_simd_trans_b(const GemmArgs& g) {
  alignas(64) float tile[kTileK * kTileN];
  for (std::size_t j0 = 0; j0 < g.n; j0 += kTileN) {
    const std::size_t nc = std::min(kTileN, g.n - j0);
    std::size_t p0 = 0;
    do {
      const std::size_t kc = std::min(kTileK, g.k - p0);
      for (std::size_t j = 0; j < nc; ++j) {
        const float* col = g.b + (j0 + j) * g.ldb + p0;
        for (std::size_t p = 0; p < kc; ++p) tile[p * kTileN + j] = col[p];
      }
      GemmArgs t = g;
      t.n = nc;
      t.k = kc;
      t.a = g.trans_a ? g.a + p0 * g.lda : g.a + p0;
      t.b = tile;
      t.ldb = kTileN;
      t.trans_b = false;
      t.c = g.c + j0;
      t.bias = p0 == 0 && g.bias ? g.bias + j0 : nullptr;
      t.accumulate = p0 == 0 ? g.accumulate : true;
      g.trans_a ? gemm_simd_plain_b<true>(t) : gemm_simd_plain_b<false>(t);
      p0 += kc;
    } while (p0 < g.k);
  }
}

}  // namespace

void gemm_ref(const GemmArgs& g) {
  for (std::size_t i = 0; i < g.m; ++i)
    for (std::size_t j = 0; j < g.n; ++j) {
      float s = init_value(g, i, j);
      for (std::size_t p = 0; p < g.k; ++p) s += a_at(g, i, p) * b_at(g, p, j);
      g.c[i * g.ldc + j] = s;
    }
}

void gemm_simd(const GemmArgs& g) {
  if (g.trans_b) return gemm_simd_trans_b(g);
  g.trans_a ? gemm_simd_plain_b<true>(g) : gemm_simd_plain_b<false>(g);
}

namespace {

// Register block of kMR rows x kNB batches (kNR = kNB * W columns): 8
// accumulators, kNB B loads and kMR broadcasts per k step, 15 XMM registers
// in V8's code (it keeps one scratch). Measured in wasm under Node against
// 4x8, 6x8, 3x8, 2x12, 3x12, 4x12, 5x8, 8x4, 8x8, 1x32 and unrolled forms
// (bench/native/bench_kernels.cpp "variants"): 2x16 was fastest, blocks of more
// than 8 accumulators spill, and unrolling the k loop by hand is slower (V8
// unrolls it already).
constexpr std::size_t kMR = 2, kNB = 4, kNR = kNB * W;
// k is cut into equal blocks of at most kKC: a packed B panel [kc][kNR] (at
// most 32 KB) stays in L1 while the micro-kernel sweeps the kMC rows of the
// packed A block (at most 256 KB, in L2). kKC = 512 in wasm; 256 and 128
// measured slower. Each B panel is packed again for every block of kMC rows:
// one 16-float copy per 2 * kMC flops, in exchange for a workspace that does
// not grow with n.
constexpr std::size_t kKC = 8192 / kNR, kMC = 128;
// Below this many rows packing B costs more than it saves.
constexpr std::size_t kPackMinRows = 8;

// dst = one panel [kc][kNR] of B[kc, nn] (leading dimension ldb, nn <= kNR),
// zero-padded past column nn.
// With `trans` the panel is read from B stored [n, k]: b points at (column 0,
// row 0) of the panel, element (p, j) at b[j * ldb + p].
void pack_b(const float* b, std::size_t ldb, std::size_t kc, std::size_t nn, float* dst, bool trans) {
  if (trans) {
    if (nn < kNR)
      for (std::size_t p = 0; p < kc; ++p) std::fill(dst + p * kNR + nn, dst + (p + 1) * kNR, 0.0f);
    transpose(nn, kc, b, ldb, dst, kNR);  // 4 x 4 blocks through registers
    return;
  }
  if (nn == kNR) {
    for (std::size_t p = 0; p < kc; ++p)
      for (std::size_t c = 0; c < kNB; ++c)
        fbatch::load_unaligned(b + p * ldb + c * W).store_unaligned(dst + p * kNR + c * W);
    return;
  }
  for (std::size_t p = 0; p < kc; ++p) {
    std::copy(b + p * ldb, b + p * ldb + nn, dst + p * kNR);
    std::fill(dst + p * kNR + nn, dst + (p + 1) * kNR, 0.0f);
  }
}

// dst = micro-panels [ceil(mc / kMR)][kc][kMR] of A[mc, kc] (leading dimension
// lda), zero-padded past row mc. With 4-lane batches (SSE, WASM) two full rows
// are interleaved a batch at a time with zip, one shuffle each; wider xsimd
// batches zip within 128-bit halves, so they take the scalar loop.
static_assert(kMR == 2, "pack_a interleaves pairs of rows");
// With `trans` the block is read from A stored [k, m]: a points at (row 0,
// column 0) of the block, element (i, p) at a[p * lda + i].
void pack_a(const float* a, std::size_t lda, std::size_t mc, std::size_t kc, float* dst, bool trans) {
  if (trans) {
    for (std::size_t i0 = 0; i0 < mc; i0 += kMR, dst += kc * kMR)
      for (std::size_t p = 0; p < kc; ++p) {
        dst[2 * p] = a[p * lda + i0];
        dst[2 * p + 1] = i0 + 1 < mc ? a[p * lda + i0 + 1] : 0.0f;
      }
    return;
  }
  for (std::size_t i0 = 0; i0 < mc; i0 += kMR, dst += kc * kMR) {
    const float* r0 = a + i0 * lda;
    if (i0 + 1 < mc) {
      const float* r1 = r0 + lda;
      std::size_t p = 0;
      for (; W == 4 && p + W <= kc; p += W) {
        const fbatch x0 = fbatch::load_unaligned(r0 + p), x1 = fbatch::load_unaligned(r1 + p);
        simd::zip_lo(x0, x1).store_unaligned(dst + 2 * p);
        simd::zip_hi(x0, x1).store_unaligned(dst + 2 * p + W);
      }
      for (; p < kc; ++p) {
        dst[2 * p] = r0[p];
        dst[2 * p + 1] = r1[p];
      }
    } else {
      for (std::size_t p = 0; p < kc; ++p) {
        dst[2 * p] = r0[p];
        dst[2 * p + 1] = 0.0f;
      }
    }
  }
}

// c[kMR, kNR] (leading dimension ldc) = (load_c ? c : 0) + (bias ? bias[0..kNR) : 0)
//                                      + ap[kc][kMR]^T-broadcast * bp[kc][kNR].
inline void micro_kernel(std::size_t kc, const float* ap, const float* bp, float* c,
                         std::size_t ldc, bool load_c, const float* bias) {
  fbatch acc[kMR][kNB];
  for (std::size_t r = 0; r < kMR; ++r)
    for (std::size_t j = 0; j < kNB; ++j) {
      acc[r][j] = load_c ? fbatch::load_unaligned(c + r * ldc + j * W) : fbatch(0.0f);
      if (bias) acc[r][j] += fbatch::load_unaligned(bias + j * W);
    }
  for (std::size_t p = 0; p < kc; ++p, ap += kMR, bp += kNR) {
    fbatch bv[kNB];
    for (std::size_t j = 0; j < kNB; ++j) bv[j] = fbatch::load_unaligned(bp + j * W);
    for (std::size_t r = 0; r < kMR; ++r) {
      const fbatch av(ap[r]);
      for (std::size_t j = 0; j < kNB; ++j) acc[r][j] = simd::fma(av, bv[j], acc[r][j]);
    }
  }
  for (std::size_t r = 0; r < kMR; ++r)
    for (std::size_t j = 0; j < kNB; ++j) acc[r][j].store_unaligned(c + r * ldc + j * W);
}

// One kMR x kNR tile of C at (i0, j0), mm x nn of it inside C. First k block
// (first) starts from C (accumulate) or 0, plus bias; later blocks add to C.
inline void tile(const GemmArgs& g, std::size_t i0, std::size_t j0, std::size_t mm, std::size_t nn,
                 std::size_t kc, const float* ap, const float* bp, bool first) {
  const bool load_c = !first || g.accumulate;
  const float* bias = first && g.bias ? g.bias + j0 : nullptr;
  if (mm == kMR && nn == kNR) {
    micro_kernel(kc, ap, bp, g.c + i0 * g.ldc + j0, g.ldc, load_c, bias);
    return;
  }
  alignas(64) float t[kMR * kNR] = {};
  alignas(64) float bpad[kNR] = {};
  for (std::size_t r = 0; r < mm && load_c; ++r)
    std::copy(g.c + (i0 + r) * g.ldc + j0, g.c + (i0 + r) * g.ldc + j0 + nn, t + r * kNR);
  if (bias) std::copy(bias, bias + nn, bpad);
  micro_kernel(kc, ap, bp, t, kNR, load_c, bias ? bpad : nullptr);
  for (std::size_t r = 0; r < mm; ++r)
    std::copy(t + r * kNR, t + r * kNR + nn, g.c + (i0 + r) * g.ldc + j0);
}

// Length of each k block: k split into ceil(k / kKC) near-equal blocks.
std::size_t k_block(std::size_t k) {
  const std::size_t blocks = (k + kKC - 1) / kKC;
  return blocks == 0 ? 0 : (k + blocks - 1) / blocks;
}
std::size_t packed_a_floats(std::size_t k) { return kMC * k_block(k); }

// gemm_pack_a's layout: the blocks pack_a makes, k blocks outermost, then blocks of kMC rows;
// the rows padded to whole micro-panels (kMC is a multiple of kMR).
static_assert(kMC % kMR == 0, "row blocks of whole micro-panels");
std::size_t a_rows(std::size_t m) {
  return (m + kMR - 1) / kMR * kMR;
}
std::size_t a_offset(std::size_t m, std::size_t pc, std::size_t ic, std::size_t kc) {
  return pc * a_rows(m) + ic * kc;
}

// Loop order: k blocks; blocks of kMC rows, whose A is packed once and reused
// for every B_s; B panels of kNR columns, each packed just before use; A
// micro-panels of kMR rows.
// custom: op(B) of g[0] (count 1) packed by custom->pack instead of pack_b.
// prepacked: g[0].b (count 1) holds B in panels already (gemm_prepacked_b_simd): full panels are
// read where they lie, the last one, unpadded, is copied into the padded panel.
// a_packed: all of op(A) packed by gemm_pack_a, block (pc, ic) at a_offset(m, pc, ic, kc).
void gemm_packed_run(const GemmArgs* g, std::size_t count, float* ws, const GemmPackB* custom = nullptr,
                     bool prepacked = false, const float* a_packed = nullptr) {
  const std::size_t m = g[0].m, k = g[0].k;
  if (m == 0) return;
  if (k == 0) {
    for (std::size_t s = 0; s < count; ++s)
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < g[s].n; ++j) g[s].c[i * g[s].ldc + j] = init_value(g[s], i, j);
    return;
  }
  float* apack = ws;
  float* bpanel = ws + packed_a_floats(k);
  const std::size_t kb = k_block(k);
  for (std::size_t pc = 0; pc < k; pc += kb) {
    const std::size_t kc = std::min(kb, k - pc);
    for (std::size_t ic = 0; ic < m; ic += kMC) {
      const std::size_t mc = std::min(kMC, m - ic);
      const GemmArgs& a = g[0];
      const float* ablock = apack;
      if (a_packed)
        ablock = a_packed + a_offset(m, pc, ic, kc);
      else
        pack_a(a.trans_a ? a.a + pc * a.lda + ic : a.a + ic * a.lda + pc, a.lda, mc, kc, apack, a.trans_a);
      for (std::size_t s = 0; s < count; ++s) {
        for (std::size_t j0 = 0; j0 < g[s].n; j0 += kNR) {
          const std::size_t nn = std::min(kNR, g[s].n - j0);
          const GemmArgs& b = g[s];
          const float* bp = bpanel;
          if (prepacked && nn == kNR)
            bp = b.b + j0 * k + pc * kNR;
          else if (prepacked)
            pack_b(b.b + j0 * k + pc * nn, nn, kc, nn, bpanel, false);
          else if (custom)
            custom->pack(custom->ctx, pc, kc, j0, nn, bpanel);
          else
            pack_b(b.trans_b ? b.b + j0 * b.ldb + pc : b.b + pc * b.ldb + j0, b.ldb, kc, nn, bpanel, b.trans_b);
          const float* ap = ablock;
          for (std::size_t i0 = 0; i0 < mc; i0 += kMR, ap += kc * kMR)
            tile(g[s], ic + i0, j0, std::min(kMR, mc - i0), nn, kc, ap, bp, pc == 0);
        }
      }
    }
  }
}

}  // namespace

std::size_t gemm_packed_workspace_floats(const GemmArgs& g) { return gemm_shared_a_workspace_floats(&g, 1); }

void gemm_packed_simd(const GemmArgs& g, float* workspace) { gemm_shared_a_simd(&g, 1, workspace); }

std::size_t gemm_packed_panel_cols() { return kNR; }
std::size_t gemm_packed_panel_rows() { return kKC; }

void gemm_packed_b_simd(const GemmArgs& g, const GemmPackB& b, float* workspace) {
  gemm_packed_run(&g, 1, workspace, &b);
}

void gemm_prepacked_b_simd(const GemmArgs& g, float* workspace) {
  gemm_packed_run(&g, 1, workspace, nullptr, true);
}

std::size_t gemm_packed_a_floats(std::size_t m, std::size_t k) {
  return a_rows(m) * k;
}

void gemm_pack_a(const GemmArgs& a, float* dst) {
  const std::size_t kb = k_block(a.k);
  for (std::size_t pc = 0; pc < a.k; pc += kb) {
    const std::size_t kc = std::min(kb, a.k - pc);
    for (std::size_t ic = 0; ic < a.m; ic += kMC)
      pack_a(a.trans_a ? a.a + pc * a.lda + ic : a.a + ic * a.lda + pc, a.lda, std::min(kMC, a.m - ic), kc,
             dst + a_offset(a.m, pc, ic, kc), a.trans_a);
  }
}

void gemm_prepacked_ab_simd(const GemmArgs& g, const float* a_packed, float* workspace) {
  gemm_packed_run(&g, 1, workspace, nullptr, true, a_packed);
}

void pack_b_panels_ref(const float* b, std::size_t ldb, bool trans, std::size_t k, std::size_t n,
                       float* dst) {
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t p = 0; p < k; ++p)
      dst[packed_b_index(k, n, p, j)] = trans ? b[j * ldb + p] : b[p * ldb + j];
}

namespace {

// Rows of [k][P] blocks transposed at a time by pack_b_panels_in_place: the largest divisor
// of k up to 16, so the cycles then move runs of group * kNR floats.
std::size_t row_group(std::size_t k) {
  std::size_t g = std::min<std::size_t>(k, 16);
  while (k % g) --g;
  return g;
}

std::size_t round4(std::size_t n) {
  return (n + 3) & ~std::size_t{3};
}

}  // namespace

std::size_t pack_b_panels_in_place_scratch_bytes(bool trans, std::size_t k, std::size_t n) {
  if (trans) return sizeof(float) * std::min(n, kNR) * k;
  const std::size_t blocks = n / kNR, tail = k * (n % kNR), group = row_group(k);
  const std::size_t moved = blocks * group * kNR, runs = k / group * blocks;
  return sizeof(float) * (std::max(round4(tail), moved)) + sizeof(std::uint32_t) * ((runs + 31) / 32);
}

void pack_b_panels_in_place(float* b, bool trans, std::size_t k, std::size_t n, void* scratch) {
  float* spare = static_cast<float*>(scratch);
  if (trans) {
    for (std::size_t j0 = 0; j0 < n; j0 += kNR) {
      const std::size_t nn = std::min(kNR, n - j0);
      float* panel = b + j0 * k;
      std::copy(panel, panel + nn * k, spare);
      transpose(nn, k, spare, k, panel, nn);
    }
    return;
  }
  // Row r = [P blocks of kNR floats | t tail columns]: the tails move to the end (through
  // scratch) as the last panel [k][t], leaving [k][P] blocks.
  const std::size_t blocks = n / kNR, t = n % kNR, full = blocks * kNR;
  if (t > 0) {
    for (std::size_t r = 0; r < k; ++r) std::copy(b + r * n + full, b + (r + 1) * n, spare + r * t);
    for (std::size_t r = 1; r < k; ++r) std::copy(b + r * n, b + r * n + full, b + r * full);  // dst <= src
    std::copy(spare, spare + k * t, b + k * full);
  }
  if (blocks < 2 || k < 2) return;  // [k][1] or [1][P] blocks: already in panel order
  // [k][P] -> [P][k] in two steps: each group of G rows [G][P] -> [P][G] through scratch; then
  // the [k/G][P] runs of G blocks -> [P][k/G] by following the permutation's cycles: position
  // c * (k/G) + g takes the run from g * P + c; a bit per run marks those in place.
  const std::size_t group = row_group(k), groups = k / group, run = group * kNR;
  for (std::size_t g = 0; g < groups; ++g) {
    float* rows = b + g * run * blocks;
    std::copy(rows, rows + run * blocks, spare);
    for (std::size_t r = 0; r < group; ++r)
      for (std::size_t c = 0; c < blocks; ++c)
        std::copy(spare + (r * blocks + c) * kNR, spare + (r * blocks + c + 1) * kNR,
                  rows + (c * group + r) * kNR);
  }
  if (groups < 2) return;
  const std::size_t count = groups * blocks;
  auto* done = reinterpret_cast<std::uint32_t*>(spare + std::max(round4(k * t), blocks * run));
  std::fill(done, done + (count + 31) / 32, 0u);
  for (std::size_t start = 1; start + 1 < count; ++start) {
    if (done[start / 32] >> (start % 32) & 1u) continue;
    std::copy(b + start * run, b + (start + 1) * run, spare);
    std::size_t at = start;
    for (;;) {
      done[at / 32] |= 1u << (at % 32);
      const std::size_t from = (at % groups) * blocks + at / groups;
      if (from == start) break;
      std::copy(b + from * run, b + (from + 1) * run, b + at * run);
      at = from;
    }
    std::copy(spare, spare + run, b + at * run);
  }
}

std::size_t gemm_shared_a_workspace_floats(const GemmArgs* g, std::size_t count) {
  // One packed A block and one packed B panel, whatever n and count are.
  return count == 0 ? 0 : packed_a_floats(g[0].k) + kNR * k_block(g[0].k);
}

void gemm_shared_a_simd(const GemmArgs* g, std::size_t count, float* workspace) {
  if (count == 0) return;
  if (g[0].m < kPackMinRows) {
    for (std::size_t s = 0; s < count; ++s) gemm_simd(g[s]);
    return;
  }
  gemm_packed_run(g, count, workspace);
}

// ------------------------------------------------------------------ transpose

namespace {

#if !defined(HEADLAB_SCALAR_BUILD)
// dst[4 x 4] = src[4 x 4]^T with two rounds of unpacks (32-bit, then 64-bit
// lanes): each is one shuffle instruction on SSE and in WebAssembly SIMD128.
[[maybe_unused]] inline void transpose4x4(const float* src, std::size_t lds, float* dst, std::size_t ldd) {
  using dbatch = xsimd::batch<double, fbatch::arch_type>;
  const fbatch r0 = fbatch::load_unaligned(src), r1 = fbatch::load_unaligned(src + lds);
  const fbatch r2 = fbatch::load_unaligned(src + 2 * lds), r3 = fbatch::load_unaligned(src + 3 * lds);
  const dbatch t0 = xsimd::bitwise_cast<dbatch>(xsimd::zip_lo(r0, r1));  // r0[0] r1[0] | r0[1] r1[1]
  const dbatch t1 = xsimd::bitwise_cast<dbatch>(xsimd::zip_hi(r0, r1));  // r0[2] r1[2] | r0[3] r1[3]
  const dbatch t2 = xsimd::bitwise_cast<dbatch>(xsimd::zip_lo(r2, r3));
  const dbatch t3 = xsimd::bitwise_cast<dbatch>(xsimd::zip_hi(r2, r3));
  xsimd::bitwise_cast<fbatch>(xsimd::zip_lo(t0, t2)).store_unaligned(dst);
  xsimd::bitwise_cast<fbatch>(xsimd::zip_hi(t0, t2)).store_unaligned(dst + ldd);
  xsimd::bitwise_cast<fbatch>(xsimd::zip_lo(t1, t3)).store_unaligned(dst + 2 * ldd);
  xsimd::bitwise_cast<fbatch>(xsimd::zip_hi(t1, t3)).store_unaligned(dst + 3 * ldd);
}
#endif

}  // namespace

// In tiles of 16 x 16: a row-by-row sweep writes one cache line per column of
// src for each row, and when ldd is a multiple of a large power of two (e.g.
// 1536 floats) those lines share a few L1 sets and evict each other. With
// 4-lane batches (SSE, WebAssembly SIMD128) full 4 x 4 blocks go through
// registers.
void transpose(std::size_t rows, std::size_t cols, const float* src, std::size_t lds,
               float* dst, std::size_t ldd) {
  constexpr std::size_t kTile = 16;
  for (std::size_t r0 = 0; r0 < rows; r0 += kTile) {
    const std::size_t r1 = std::min(rows, r0 + kTile);
    for (std::size_t c0 = 0; c0 < cols; c0 += kTile) {
      const std::size_t c1 = std::min(cols, c0 + kTile);
      std::size_t r = r0;
#if !defined(HEADLAB_SCALAR_BUILD)
      if constexpr (W == 4) {
        for (; r + 4 <= r1; r += 4) {
          std::size_t c = c0;
          for (; c + 4 <= c1; c += 4) transpose4x4(src + r * lds + c, lds, dst + c * ldd + r, ldd);
          for (; c < c1; ++c)
            for (std::size_t i = r; i < r + 4; ++i) dst[c * ldd + i] = src[i * lds + c];
        }
      }
#endif
      for (; r < r1; ++r)
        for (std::size_t c = c0; c < c1; ++c) dst[c * ldd + r] = src[r * lds + c];
    }
  }
}

// ---------------------------------------------------------------- elementwise

void exp_ref(const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}

void exp_simd(const float* x, float* y, std::size_t n) {
  std::size_t i = 0;
  for (; i + W <= n; i += W) exp_batch(fbatch::load_unaligned(x + i)).store_unaligned(y + i);
  if (i < n) {
    // Tail through the same polynomial so results do not depend on position.
    alignas(64) float buf[W] = {};
    std::copy(x + i, x + n, buf);
    exp_batch(fbatch::load_aligned(buf)).store_aligned(buf);
    std::copy(buf, buf + (n - i), y + i);
  }
}

void exp2_nonpositive_ref(const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = std::exp2(x[i]);
}

void exp2_nonpositive_simd(const float* x, float* y, std::size_t n) {
  std::size_t i = 0;
  for (; i + W <= n; i += W)
    exp2_nonpositive_batch(fbatch::load_unaligned(x + i)).store_unaligned(y + i);
  if (i < n) {
    alignas(64) float buf[W] = {};
    std::copy(x + i, x + n, buf);
    exp2_nonpositive_batch(fbatch::load_aligned(buf)).store_aligned(buf);
    std::copy(buf, buf + (n - i), y + i);
  }
}

void add_ref(const float* a, const float* b, float* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = a[i] + b[i];
}

void add_simd(const float* a, const float* b, float* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + W <= n; i += W)
    (fbatch::load_unaligned(a + i) + fbatch::load_unaligned(b + i)).store_unaligned(dst + i);
  for (; i < n; ++i) dst[i] = a[i] + b[i];
}

void scale_ref(float* x, std::size_t n, float s) {
  for (std::size_t i = 0; i < n; ++i) x[i] *= s;
}

void scale_simd(float* x, std::size_t n, float s) {
  const fbatch sv(s);
  std::size_t i = 0;
  for (; i + W <= n; i += W) (fbatch::load_unaligned(x + i) * sv).store_unaligned(x + i);
  for (; i < n; ++i) x[i] *= s;
}

// --------------------------------------------------------------- softmax rows

void softmax_rows_ref(float* x, std::size_t rows, std::size_t cols, std::size_t ld) {
  const float ninf = -std::numeric_limits<float>::infinity();
  for (std::size_t r = 0; r < rows; ++r) {
    float* row = x + r * ld;
    float mx = ninf;
    for (std::size_t c = 0; c < cols; ++c) mx = std::max(mx, row[c]);
    if (mx == ninf) {  // nothing to attend to
      std::fill(row, row + cols, 0.0f);
      continue;
    }
    float sum = 0.0f;
    for (std::size_t c = 0; c < cols; ++c) {
      row[c] = row[c] == ninf ? 0.0f : std::exp(row[c] - mx);
      sum += row[c];
    }
    for (std::size_t c = 0; c < cols; ++c) row[c] /= sum;
  }
}

// Three passes over each row: the maximum, the exponentials and their sum
// (simd::row_exp_sum: e^(x - max) as 2^((x - max) log2(e))), scaling by 1/sum.
// The last cols % W entries go through the same polynomial, padded with
// -infinity (weight 0).
void softmax_rows_simd(float* x, std::size_t rows, std::size_t cols, std::size_t ld) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const std::size_t main = cols - cols % W;
  for (std::size_t r = 0; r < rows; ++r) {
    float* row = x + r * ld;
    float mx = simd::row_max(row, main);
    for (std::size_t c = main; c < cols; ++c) mx = std::max(mx, row[c]);
    if (mx == ninf) {  // nothing to attend to
      std::fill(row, row + cols, 0.0f);
      continue;
    }
    float sum = simd::row_exp_sum(row, main, mx);
    if (main < cols) {
      alignas(64) float buf[W];
      std::fill(buf, buf + W, ninf);
      std::copy(row + main, row + cols, buf);
      const fbatch e =
          exp2_nonpositive_batch((fbatch::load_aligned(buf) - fbatch(mx)) * fbatch(simd::kLog2e));
      e.store_aligned(buf);
      for (std::size_t c = main; c < cols; ++c) {
        row[c] = buf[c - main];
        sum += row[c];
      }
    }
    scale_simd(row, cols, 1.0f / sum);
  }
}

void softmax_backward_rows_ref(const float* p, const float* dp, float* ds, std::size_t rows, std::size_t cols,
                               std::size_t ld, float scale) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* pr = p + r * ld;
    const float* dpr = dp + r * ld;
    float* dsr = ds + r * ld;
    float dot = 0.0f;
    for (std::size_t c = 0; c < cols; ++c) dot += dpr[c] * pr[c];
    for (std::size_t c = 0; c < cols; ++c) dsr[c] = (dpr[c] - dot) * pr[c] * scale;
  }
}

void softmax_backward_rows_simd(const float* p, const float* dp, float* ds, std::size_t rows,
                                std::size_t cols, std::size_t ld, float scale) {
  const std::size_t main = cols - cols % W;
  const fbatch sv(scale);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* pr = p + r * ld;
    const float* dpr = dp + r * ld;
    float* dsr = ds + r * ld;
    fbatch acc(0.0f);
    for (std::size_t c = 0; c < main; c += W)
      acc = simd::fma(fbatch::load_unaligned(dpr + c), fbatch::load_unaligned(pr + c), acc);
    float dot = simd::hadd(acc);
    for (std::size_t c = main; c < cols; ++c) dot += dpr[c] * pr[c];
    const fbatch dv(dot);
    for (std::size_t c = 0; c < main; c += W)
      ((fbatch::load_unaligned(dpr + c) - dv) * fbatch::load_unaligned(pr + c) * sv).store_unaligned(dsr + c);
    for (std::size_t c = main; c < cols; ++c) dsr[c] = (dpr[c] - dot) * pr[c] * scale;
  }
}

// ---------------------------------------------------------------- column sums

void column_sums_ref(const float* x, std::size_t rows, std::size_t cols, std::size_t ld, float* out,
                     bool accumulate) {
  for (std::size_t c = 0; c < cols; ++c) {
    float s = accumulate ? out[c] : 0.0f;
    for (std::size_t r = 0; r < rows; ++r) s += x[r * ld + c];
    out[c] = s;
  }
}

void column_sums_simd(const float* x, std::size_t rows, std::size_t cols, std::size_t ld, float* out,
                      bool accumulate) {
  const std::size_t main = cols - cols % W;
  for (std::size_t c = 0; c < main; c += W) {
    fbatch s = accumulate ? fbatch::load_unaligned(out + c) : fbatch(0.0f);
    for (std::size_t r = 0; r < rows; ++r) s += fbatch::load_unaligned(x + r * ld + c);
    s.store_unaligned(out + c);
  }
  for (std::size_t c = main; c < cols; ++c) {
    float s = accumulate ? out[c] : 0.0f;
    for (std::size_t r = 0; r < rows; ++r) s += x[r * ld + c];
    out[c] = s;
  }
}

// ---------------------------------------------------------- optimiser updates

namespace {

// One Adam update of a float or of a batch of lanes: the update and its check
// both go through this, so the check sees exactly what would be stored.
template <class T>
struct AdamNext {
  T m, v, p;
};

inline float sqrt_of(float x) { return std::sqrt(x); }
inline fbatch sqrt_of(const fbatch& x) { return simd::sqrt(x); }

template <class T>
struct AdamConsts {
  T b1, b2, ob1, ob2, lr, eps, c1, c2;
  explicit AdamConsts(const AdamArgs& a)
      : b1(a.beta1), b2(a.beta2), ob1(1.0f - a.beta1), ob2(1.0f - a.beta2), lr(a.lr), eps(a.eps), c1(a.c1),
        c2(a.c2) {}
};

template <class T>
AdamNext<T> adam_next(const AdamConsts<T>& k, T p, T g, T m, T v) {
  AdamNext<T> r;
  r.m = k.b1 * m + k.ob1 * g;
  r.v = k.b2 * v + k.ob2 * g * g;
  r.p = p - k.lr * (r.m * k.c1) / (sqrt_of(r.v * k.c2) + k.eps);
  return r;
}

constexpr float kInf = std::numeric_limits<float>::infinity();

// |x| < limit, false for NaN.
inline bool below(float x, float limit) { return std::fabs(x) < limit; }

// Lanes of ok that stay 1 where |x| < limit (NaN fails), 0 elsewhere.
inline fbatch keep_below(fbatch ok, fbatch x, fbatch limit) { return simd::select(simd::abs(x) < limit, ok, fbatch(0.0f)); }

}  // namespace

void adam_update_ref(const AdamArgs& a) {
  const AdamConsts<float> k(a);
  for (std::size_t i = 0; i < a.n; ++i) {
    const AdamNext<float> x = adam_next(k, a.p[i], a.g[i], a.m[i], a.v[i]);
    a.m[i] = x.m;
    a.v[i] = x.v;
    a.p[i] = x.p;
  }
}

void adam_update_simd(const AdamArgs& a) {
  const AdamConsts<fbatch> k(a);
  const AdamConsts<float> ks(a);
  std::size_t i = 0;
  for (; i + W <= a.n; i += W) {
    const AdamNext<fbatch> x = adam_next(k, fbatch::load_unaligned(a.p + i), fbatch::load_unaligned(a.g + i),
                                         fbatch::load_unaligned(a.m + i), fbatch::load_unaligned(a.v + i));
    x.m.store_unaligned(a.m + i);
    x.v.store_unaligned(a.v + i);
    x.p.store_unaligned(a.p + i);
  }
  for (; i < a.n; ++i) {
    const AdamNext<float> x = adam_next(ks, a.p[i], a.g[i], a.m[i], a.v[i]);
    a.m[i] = x.m;
    a.v[i] = x.v;
    a.p[i] = x.p;
  }
}

bool adam_update_ok_ref(const AdamArgs& a, float max_abs) {
  const AdamConsts<float> k(a);
  bool ok = true;
  for (std::size_t i = 0; i < a.n; ++i) {
    const AdamNext<float> x = adam_next(k, a.p[i], a.g[i], a.m[i], a.v[i]);
    ok = ok && below(x.p, max_abs) && below(x.m, kInf) && below(x.v, kInf);
  }
  return ok;
}

bool adam_update_ok_simd(const AdamArgs& a, float max_abs) {
  const AdamConsts<fbatch> k(a);
  const AdamConsts<float> ks(a);
  const fbatch limit(max_abs), inf(kInf);
  fbatch ok(1.0f);
  std::size_t i = 0;
  for (; i + W <= a.n; i += W) {
    const AdamNext<fbatch> x = adam_next(k, fbatch::load_unaligned(a.p + i), fbatch::load_unaligned(a.g + i),
                                         fbatch::load_unaligned(a.m + i), fbatch::load_unaligned(a.v + i));
    ok = keep_below(keep_below(keep_below(ok, x.p, limit), x.m, inf), x.v, inf);
  }
  bool tail = true;
  for (; i < a.n; ++i) {
    const AdamNext<float> x = adam_next(ks, a.p[i], a.g[i], a.m[i], a.v[i]);
    tail = tail && below(x.p, max_abs) && below(x.m, kInf) && below(x.v, kInf);
  }
  return tail && simd::hadd(ok) == float(W);
}

void sgd_update_ref(float* p, const float* g, std::size_t n, float lr) {
  for (std::size_t i = 0; i < n; ++i) p[i] -= lr * g[i];
}

void sgd_update_simd(float* p, const float* g, std::size_t n, float lr) {
  const fbatch l(lr);
  std::size_t i = 0;
  for (; i + W <= n; i += W)
    (fbatch::load_unaligned(p + i) - l * fbatch::load_unaligned(g + i)).store_unaligned(p + i);
  for (; i < n; ++i) p[i] -= lr * g[i];
}

bool sgd_update_ok_ref(const float* p, const float* g, std::size_t n, float lr, float max_abs) {
  bool ok = true;
  for (std::size_t i = 0; i < n; ++i) ok = ok && below(p[i] - lr * g[i], max_abs);
  return ok;
}

bool sgd_update_ok_simd(const float* p, const float* g, std::size_t n, float lr, float max_abs) {
  const fbatch l(lr), limit(max_abs);
  fbatch ok(1.0f);
  std::size_t i = 0;
  for (; i + W <= n; i += W)
    ok = keep_below(ok, fbatch::load_unaligned(p + i) - l * fbatch::load_unaligned(g + i), limit);
  bool tail = true;
  for (; i < n; ++i) tail = tail && below(p[i] - lr * g[i], max_abs);
  return tail && simd::hadd(ok) == float(W);
}

// ------------------------------------------------------------------- dispatch

void gemm(Path path, const GemmArgs& g) { path == Path::simd ? gemm_simd(g) : gemm_ref(g); }

void gemm_packed(Path path, const GemmArgs& g, float* workspace) {
  path == Path::simd ? gemm_packed_simd(g, workspace) : gemm_ref(g);
}

void gemm_shared_a(Path path, const GemmArgs* g, std::size_t count, float* workspace) {
  if (path == Path::simd) return gemm_shared_a_simd(g, count, workspace);
  for (std::size_t s = 0; s < count; ++s) gemm_ref(g[s]);
}

void add(Path path, const float* a, const float* b, float* dst, std::size_t n) {
  path == Path::simd ? add_simd(a, b, dst, n) : add_ref(a, b, dst, n);
}

void scale(Path path, float* x, std::size_t n, float s) {
  path == Path::simd ? scale_simd(x, n, s) : scale_ref(x, n, s);
}

void softmax_rows(Path path, float* x, std::size_t rows, std::size_t cols, std::size_t ld) {
  path == Path::simd ? softmax_rows_simd(x, rows, cols, ld) : softmax_rows_ref(x, rows, cols, ld);
}

void softmax_backward_rows(Path path, const float* p, const float* dp, float* ds, std::size_t rows,
                           std::size_t cols, std::size_t ld, float scale) {
  path == Path::simd ? softmax_backward_rows_simd(p, dp, ds, rows, cols, ld, scale)
                     : softmax_backward_rows_ref(p, dp, ds, rows, cols, ld, scale);
}

void column_sums(Path path, const float* x, std::size_t rows, std::size_t cols, std::size_t ld, float* out,
                 bool accumulate) {
  path == Path::simd ? column_sums_simd(x, rows, cols, ld, out, accumulate)
                     : column_sums_ref(x, rows, cols, ld, out, accumulate);
}

void adam_update(Path path, const AdamArgs& a) { path == Path::simd ? adam_update_simd(a) : adam_update_ref(a); }

bool adam_update_ok(Path path, const AdamArgs& a, float max_abs) {
  return path == Path::simd ? adam_update_ok_simd(a, max_abs) : adam_update_ok_ref(a, max_abs);
}

void sgd_update(Path path, float* p, const float* g, std::size_t n, float lr) {
  path == Path::simd ? sgd_update_simd(p, g, n, lr) : sgd_update_ref(p, g, n, lr);
}

bool sgd_update_ok(Path path, const float* p, const float* g, std::size_t n, float lr, float max_abs) {
  return path == Path::simd ? sgd_update_ok_simd(p, g, n, lr, max_abs) : sgd_update_ok_ref(p, g, n, lr, max_abs);
}

}  // namespace headlab
