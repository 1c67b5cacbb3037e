// Register-block shapes for the packed GEMM micro-kernel, for measuring only:
// the library keeps the winner (cpp/src/kernels.cpp). Same packing scheme as
// the library: A in [MR-row micro-panels][k][MR], B in [NR-column panels][k][NR]
// with NR = NB * batch width.
#pragma once

#include <algorithm>
#include <cstddef>

#include <xsimd/xsimd.hpp>

#include "headlab/kernels.hpp"

namespace bench {

using fbatch = xsimd::batch<float>;
constexpr std::size_t W = fbatch::size;

template <std::size_t MR, std::size_t NB, std::size_t U = 1, std::size_t KC = 256, std::size_t MC = 64>
struct Variant {
  static constexpr std::size_t NR = NB * W;

  // acc[MR][NB] += Ap[kc][MR] * Bp[kc][NR]; then stored to a dense tile.
  static void kernel(std::size_t kc, const float* ap, const float* bp, float* tile) {
    fbatch acc[MR][NB];
    for (std::size_t r = 0; r < MR; ++r)
      for (std::size_t c = 0; c < NB; ++c) acc[r][c] = fbatch::load_aligned(tile + r * NR + c * W);
    auto step = [&](const float* a, const float* b) {
      fbatch bv[NB];
      for (std::size_t c = 0; c < NB; ++c) bv[c] = fbatch::load_aligned(b + c * W);
      for (std::size_t r = 0; r < MR; ++r) {
        const fbatch av(a[r]);
        for (std::size_t c = 0; c < NB; ++c) acc[r][c] += av * bv[c];
      }
    };
    std::size_t p = 0;
    for (; p + U <= kc; p += U, ap += U * MR, bp += U * NR)
      for (std::size_t u = 0; u < U; ++u) step(ap + u * MR, bp + u * NR);
    for (; p < kc; ++p, ap += MR, bp += NR) step(ap, bp);
    for (std::size_t r = 0; r < MR; ++r)
      for (std::size_t c = 0; c < NB; ++c) acc[r][c].store_aligned(tile + r * NR + c * W);
  }

  static std::size_t workspace_floats(std::size_t n) {
    const std::size_t np = (n + NR - 1) / NR;
    return np * NR * KC + (MC + MR) * KC;
  }

  // C = A B (no bias, no accumulate), ws from workspace_floats.
  static void run(const headlab::GemmArgs& g, float* ws) {
    const std::size_t np = (g.n + NR - 1) / NR;
    float* bpack = ws;
    float* apack = ws + np * NR * KC;
    alignas(64) float tile[MR * NR];
    for (std::size_t pc = 0; pc < g.k; pc += KC) {
      const std::size_t kc = std::min(KC, g.k - pc);
      for (std::size_t jp = 0; jp < np; ++jp) {
        float* dst = bpack + jp * NR * kc;
        const std::size_t j0 = jp * NR, nn = std::min(NR, g.n - j0);
        for (std::size_t p = 0; p < kc; ++p) {
          const float* src = g.b + (pc + p) * g.ldb + j0;
          for (std::size_t c = 0; c < nn; ++c) dst[p * NR + c] = src[c];
          for (std::size_t c = nn; c < NR; ++c) dst[p * NR + c] = 0.0f;
        }
      }
      for (std::size_t ic = 0; ic < g.m; ic += MC) {
        const std::size_t mc = std::min(MC, g.m - ic);
        const std::size_t mp = (mc + MR - 1) / MR;
        for (std::size_t ip = 0; ip < mp; ++ip) {
          float* dst = apack + ip * MR * kc;
          const std::size_t i0 = ic + ip * MR, mm = std::min(MR, ic + mc - i0);
          for (std::size_t p = 0; p < kc; ++p) {
            for (std::size_t r = 0; r < mm; ++r) dst[p * MR + r] = g.a[(i0 + r) * g.lda + pc + p];
            for (std::size_t r = mm; r < MR; ++r) dst[p * MR + r] = 0.0f;
          }
        }
        for (std::size_t jp = 0; jp < np; ++jp) {
          const std::size_t j0 = jp * NR, nn = std::min(NR, g.n - j0);
          for (std::size_t ip = 0; ip < mp; ++ip) {
            const std::size_t i0 = ic + ip * MR, mm = std::min(MR, ic + mc - i0);
            for (std::size_t r = 0; r < MR; ++r)
              for (std::size_t c = 0; c < NR; ++c)
                tile[r * NR + c] = (pc == 0 || r >= mm || c >= nn) ? 0.0f : g.c[(i0 + r) * g.ldc + j0 + c];
            kernel(kc, apack + ip * MR * kc, bpack + jp * NR * kc, tile);
            for (std::size_t r = 0; r < mm; ++r)
              std::copy(tile + r * NR, tile + r * NR + nn, g.c + (i0 + r) * g.ldc + j0);
          }
        }
      }
    }
  }
};

}  // namespace bench
