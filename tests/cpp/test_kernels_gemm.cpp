// GEMM family and transpose (kernels.hpp): gemm_simd, the packed and shared-A
// GEMMs against gemm_ref and a double product, over sizes at and around the
// SIMD width and the packing tiles; transpose against a plain loop. Each
// workspace is checked for writes past its advertised size.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

#include "headlab/kernels.hpp"
#include "reference.hpp"
#include "checks.hpp"

using namespace headlab;
using namespace headlab::test;

namespace {

const std::size_t kSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 64, 129};

}  // namespace

TEST_CASE("gemm_simd matches gemm_ref and a double product, with strides, bias and accumulate") {
  std::mt19937 rng(1);
  for (std::size_t m : {1, 3, 4, 5, 9}) {
    for (std::size_t n : kSizes) {
      for (std::size_t k : {1, 2, 4, 5, 17, 64}) {
        for (int variant = 0; variant < 3; ++variant) {
          CAPTURE(m);
          CAPTURE(n);
          CAPTURE(k);
          CAPTURE(variant);
          const std::size_t lda = k + 3, ldb = n + 1, ldc = n + 2;
          auto a = ref::random_vec(rng, m * lda), b = ref::random_vec(rng, k * ldb);
          auto bias = ref::random_vec(rng, n);
          auto c0 = ref::random_vec(rng, m * ldc);
          const bool with_bias = variant >= 1, accumulate = variant == 2;
          std::vector<double> want(m * ldc);
          for (std::size_t i = 0; i < m * ldc; ++i) want[i] = c0[i];
          for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
              double s = accumulate ? c0[i * ldc + j] : 0.0;
              if (with_bias) s += bias[j];
              for (std::size_t p = 0; p < k; ++p) s += double(a[i * lda + p]) * b[p * ldb + j];
              want[i * ldc + j] = s;
            }
          auto c_ref = c0, c_simd = c0;
          GemmArgs g{m, n, k, a.data(), lda, b.data(), ldb, c_ref.data(), ldc,
                     with_bias ? bias.data() : nullptr, accumulate};
          gemm_ref(g);
          g.c = c_simd.data();
          gemm_simd(g);
          const double tol = 1e-5 * std::sqrt(double(k));
          CHECK(ref::allclose(c_ref, want, tol, 1e-5, "gemm_ref vs double"));
          CHECK(ref::allclose(c_simd, want, tol, 1e-5, "gemm_simd vs double"));
          CHECK(ref::allclose(c_simd, c_ref, tol, 1e-5, "gemm_simd vs gemm_ref"));
        }
      }
    }
  }
}

TEST_CASE("gemm_packed_simd and gemm_shared_a_simd match gemm_ref over odd sizes") {
  std::mt19937 rng(12);
  for (std::size_t m : {1, 2, 3, 7, 8, 9, 31, 64, 65, 130})
    for (std::size_t n : {1, 3, 4, 5, 15, 16, 17, 33, 70})
      for (std::size_t k : {1, 2, 5, 16, 17, 300, 513, 1100}) {
        if (m * n * k > 3000000) continue;
        const int variant = int((m + n + k) % 3);  // plain, bias, bias + accumulate
        CAPTURE(m);
        CAPTURE(n);
        CAPTURE(k);
        CAPTURE(variant);
        const std::size_t lda = k + 2, ldb = n + 3, ldc = n + 1;
        auto a = ref::random_vec(rng, m * lda), b = ref::random_vec(rng, k * ldb);
        auto bias = ref::random_vec(rng, n), c0 = ref::random_vec(rng, m * ldc);
        auto c_ref = c0, c_packed = c0;
        GemmArgs g{m,           n,
                   k,           a.data(),
                   lda,         b.data(),
                   ldb,         c_ref.data(),
                   ldc,         variant >= 1 ? bias.data() : nullptr,
                   variant == 2};
        gemm_ref(g);
        g.c = c_packed.data();
        Guarded ws(gemm_packed_workspace_floats(g));
        gemm_packed_simd(g, ws.data());
        CHECK(ws.intact());
        const double tol = 1e-5 * std::sqrt(double(k));
        CHECK(ref::allclose(c_packed, c_ref, tol, 1e-5, "gemm_packed_simd vs gemm_ref"));
      }
  // Three products sharing A with different widths, outputs and biases.
  for (std::size_t m : {5, 9, 64, 67, 200})
    for (std::size_t k : {3, 64, 600}) {
      CAPTURE(m);
      CAPTURE(k);
      const std::size_t ns[3] = {16, 7, 37};
      auto a = ref::random_vec(rng, m * k);
      std::vector<std::vector<float>> b, bias, c_ref, c_sh;
      GemmArgs g[3];
      for (int s = 0; s < 3; ++s) {
        b.push_back(ref::random_vec(rng, k * ns[s]));
        bias.push_back(ref::random_vec(rng, ns[s]));
        c_ref.emplace_back(m * ns[s], 0.0f);
        c_sh.emplace_back(m * ns[s], 0.0f);
        g[s] = {m,     ns[s],
                k,     a.data(),
                k,     b[s].data(),
                ns[s], c_ref[s].data(),
                ns[s], s == 1 ? nullptr : bias[s].data(),
                false};
        gemm_ref(g[s]);
        g[s].c = c_sh[s].data();
      }
      Guarded ws(gemm_shared_a_workspace_floats(g, 3));
      gemm_shared_a_simd(g, 3, ws.data());
      CHECK(ws.intact());
      for (int s = 0; s < 3; ++s)
        CHECK(ref::allclose(c_sh[s], c_ref[s], 1e-5 * std::sqrt(double(k)), 1e-5, "shared-A vs gemm_ref"));
    }
}

// op(A) op(B) with trans_a / trans_b: gemm_ref, gemm_simd and gemm_packed_simd
// against a double product, and each bit for bit against itself on the
// operands transposed by hand (what the backward passes did before the flags;
// the models' training must not change). Sizes around the SIMD width (4 in
// wasm, 8 with AVX2), gemm_simd's transposed-B tile (64 x 64) and the packing
// thresholds; leading dimensions wider than the rows.
TEST_CASE("gemm with trans_a / trans_b matches a double product and the transposed operands exactly") {
  std::mt19937 rng(31);
  const std::size_t ms[] = {1, 3, 4, 5, 8, 9, 17, 33};
  const std::size_t ns[] = {1, 3, 4, 5, 7, 8, 9, 16, 17, 63, 64, 65, 129};
  const std::size_t ks[] = {0, 1, 3, 4, 5, 9, 33, 63, 64, 65, 130};
  for (int trans = 1; trans < 4; ++trans)
    for (std::size_t m : ms)
      for (std::size_t n : ns)
        for (std::size_t k : ks) {
          const bool ta = trans & 1, tb = trans & 2;
          const int variant = int((m + 2 * n + k) % 3);  // plain, bias, bias + accumulate
          CAPTURE(ta);
          CAPTURE(tb);
          CAPTURE(m);
          CAPTURE(n);
          CAPTURE(k);
          CAPTURE(variant);
          // Stored operands: A [m, k] or [k, m], B [k, n] or [n, k], with padding.
          const std::size_t a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
          const std::size_t lda = a_cols + 2, ldb = b_cols + 3, ldc = n + 1;
          const auto a = ref::random_vec(rng, a_rows * lda + 1), b = ref::random_vec(rng, b_rows * ldb + 1);
          const auto bias = ref::random_vec(rng, n), c0 = ref::random_vec(rng, m * ldc + 1);
          // The same operands transposed by hand: A' [m, k], B' [k, n].
          std::vector<float> a_plain(m * k + 1), b_plain(k * n + 1);
          for (std::size_t i = 0; i < m; ++i)
            for (std::size_t p = 0; p < k; ++p) a_plain[i * k + p] = ta ? a[p * lda + i] : a[i * lda + p];
          for (std::size_t p = 0; p < k; ++p)
            for (std::size_t j = 0; j < n; ++j) b_plain[p * n + j] = tb ? b[j * ldb + p] : b[p * ldb + j];
          const bool with_bias = variant >= 1, accumulate = variant == 2;
          std::vector<double> want(c0.begin(), c0.end());
          for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
              double s = accumulate ? c0[i * ldc + j] : 0.0;
              if (with_bias) s += bias[j];
              for (std::size_t p = 0; p < k; ++p) s += double(a_plain[i * k + p]) * b_plain[p * n + j];
              want[i * ldc + j] = s;
            }
          GemmArgs g{m, n, k, a.data(), lda, b.data(), ldb, nullptr, ldc, with_bias ? bias.data() : nullptr, accumulate};
          g.trans_a = ta;
          g.trans_b = tb;
          GemmArgs plain{m, n, k, a_plain.data(), k, b_plain.data(), n, nullptr, ldc,
                         with_bias ? bias.data() : nullptr, accumulate};
          const double tol = 1e-5 * std::sqrt(double(k) + 1);
          for (int kernel = 0; kernel < 3; ++kernel) {
            CAPTURE(kernel);  // 0 gemm_ref, 1 gemm_simd, 2 gemm_packed_simd
            auto c_t = c0, c_p = c0;
            g.c = c_t.data();
            plain.c = c_p.data();
            if (kernel == 0) {
              gemm_ref(g);
              gemm_ref(plain);
            } else if (kernel == 1) {
              gemm_simd(g);
              gemm_simd(plain);
            } else {
              Guarded ws(gemm_packed_workspace_floats(g));
              gemm_packed_simd(g, ws.data());
              CHECK(ws.intact());
              gemm_packed_simd(plain, ws.data());
            }
            CHECK(ref::allclose(c_t, want, tol, 1e-5, "transposed gemm vs double"));
            CHECK(c_t == c_p);  // bit for bit, padding included
          }
        }
}

TEST_CASE("kernels: transpose over shapes around the tile and SIMD widths, with leading dimensions") {
  for (std::size_t rows : {1, 3, 4, 5, 8, 15, 16, 17, 33})
    for (std::size_t cols : {1, 3, 4, 5, 7, 16, 17, 40}) {
      const std::size_t lds = cols + 3, ldd = rows + 2;
      std::vector<float> src(rows * lds), dst(cols * ldd, -1.0f);
      for (std::size_t i = 0; i < src.size(); ++i) src[i] = float(i);
      transpose(rows, cols, src.data(), lds, dst.data(), ldd);
      bool ok = true;
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) ok &= dst[c * ldd + r] == src[r * lds + c];
      for (std::size_t c = 0; c < cols; ++c)
        for (std::size_t r = rows; r < ldd; ++r) ok &= dst[c * ldd + r] == -1.0f;  // padding untouched
      CAPTURE(rows);
      CAPTURE(cols);
      CHECK(ok);
    }
}

TEST_CASE("transpose matches a plain loop on random values, 16 x 16 tiles cut anywhere, wide strides") {
  std::mt19937 rng(21);
  struct Shape {
    std::size_t rows, cols, lds, ldd;
  };
  // Non-multiples of the 16 x 16 tile and of 4 on either side; ldd = 1536 is
  // the power-of-two-ish stride the tiling is there for.
  for (const Shape& s :
       {Shape{18, 35, 35, 18}, Shape{31, 47, 50, 33}, Shape{64, 48, 48, 64}, Shape{100, 37, 40, 101},
        Shape{2, 130, 131, 5}, Shape{130, 2, 2, 1536}, Shape{48, 96, 1536, 1536}}) {
    CAPTURE(s.rows);
    CAPTURE(s.cols);
    CAPTURE(s.lds);
    CAPTURE(s.ldd);
    const auto src = ref::random_vec(rng, s.rows * s.lds);
    std::vector<float> got(s.cols * s.ldd, 7.0f), want = got;
    for (std::size_t r = 0; r < s.rows; ++r)
      for (std::size_t c = 0; c < s.cols; ++c) want[c * s.ldd + r] = src[r * s.lds + c];
    transpose(s.rows, s.cols, src.data(), s.lds, got.data(), s.ldd);
    CHECK(got == want);  // a copy: exact, and nothing written past row length rows
  }
}

// B packed ahead of time (gemm.hpp's packed_b_index): the layout by its definition (panel q at
// q*NR*k, [k][nn], the last panel unpadded), the in-place packing against the reference packing
// for both stored layouts, and the product against a double one and, bit for bit, against the
// packed GEMM that packs on every call. Sizes around the panel width NR (16 in wasm, 32 with
// AVX2) and the k block (kKC: one or several), the last panel from 1 to NR - 1 columns.
TEST_CASE("packed B: layout, in-place packing, and the product on it") {
  const std::size_t nr = gemm_packed_panel_cols();
  std::mt19937 rng(21);
  for (std::size_t k : {1, 2, 3, 17, 64, 600})
    for (std::size_t n : {std::size_t(1), nr - 1, nr, nr + 1, 2 * nr, 3 * nr + 5, 7 * nr, 5 * nr + nr - 1}) {
      CAPTURE(k);
      CAPTURE(n);
      // Layout: every index used once, and where the definition puts it.
      std::vector<int> hits(k * n, 0);
      bool placed = true;
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t p = 0; p < k; ++p) {
          const std::size_t q = j / nr, nn = std::min(nr, n - q * nr), at = packed_b_index(k, n, p, j);
          placed = placed && at == q * nr * k + p * nn + j % nr;
          if (at < k * n) ++hits[at];
        }
      CHECK(placed);
      CHECK(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
      for (bool trans : {false, true}) {
        CAPTURE(trans);
        const auto b = ref::random_vec(rng, k * n);  // [k, n], or [n, k] with trans
        std::vector<float> want(k * n), got = b;
        pack_b_panels_ref(b.data(), trans ? k : n, trans, k, n, want.data());
        bool ok = true;
        for (std::size_t j = 0; j < n; ++j)
          for (std::size_t p = 0; p < k; ++p)
            ok = ok && want[packed_b_index(k, n, p, j)] == (trans ? b[j * k + p] : b[p * n + j]);
        CHECK(ok);
        const std::size_t bytes = pack_b_panels_in_place_scratch_bytes(trans, k, n);
        Guarded scratch((bytes + 3) / 4);
        pack_b_panels_in_place(got.data(), trans, k, n, scratch.data());
        CHECK(scratch.intact());
        CHECK(got == want);
        for (std::size_t m : {1, 2, 3, 7, 8, 9, 33, 130}) {
          if (m == 130 && k * n > 20000) continue;
          CAPTURE(m);
          const int variant = int((m + n + k) % 3);  // plain, bias, bias + accumulate
          const std::size_t ldc = n + 1;
          auto a = ref::random_vec(rng, m * k), bias = ref::random_vec(rng, n),
               c0 = ref::random_vec(rng, m * ldc);
          std::vector<double> exact(m * ldc);
          for (std::size_t i = 0; i < m * ldc; ++i) exact[i] = c0[i];
          for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
              double s = variant == 2 ? c0[i * ldc + j] : 0.0;
              if (variant >= 1) s += bias[j];
              for (std::size_t p = 0; p < k; ++p)
                s += double(a[i * k + p]) * (trans ? b[j * k + p] : b[p * n + j]);
              exact[i * ldc + j] = s;
            }
          auto c_pre = c0, c_packed = c0;
          GemmArgs g{m,           n,
                     k,           a.data(),
                     k,           got.data(),
                     0,           c_pre.data(),
                     ldc,         variant >= 1 ? bias.data() : nullptr,
                     variant == 2};
          Guarded ws(gemm_packed_workspace_floats(g));
          gemm_prepacked_b_simd(g, ws.data());
          CHECK(ws.intact());
          CHECK(worst(c_pre, exact, 1e-5 * std::sqrt(double(k)), 1e-5) <= 1);
          if (m >= 8) {  // the packed path on both sides: the same sums in the same order
            g = {m,
                 n,
                 k,
                 a.data(),
                 k,
                 b.data(),
                 trans ? k : n,
                 c_packed.data(),
                 ldc,
                 variant >= 1 ? bias.data() : nullptr,
                 variant == 2,
                 false,
                 trans};
            gemm_packed_simd(g, ws.data());
            CHECK(c_pre == c_packed);
          }
          // A packed once, the columns made by two calls split at a multiple of NR: the same bits.
          std::vector<float> a_packed(gemm_packed_a_floats(m, k));
          gemm_pack_a({m, 0, k, a.data(), k, nullptr, 0, nullptr, 0, nullptr, false}, a_packed.data());
          auto c_split = c0;
          const std::size_t j1 = n > nr ? nr * (n / nr / 2 + 1) : n;
          for (const auto& [j0, cols] : {std::pair<std::size_t, std::size_t>{0, j1}, {j1, n - j1}}) {
            if (cols == 0) continue;
            const GemmArgs part{m,           cols,
                                k,           nullptr,
                                0,           got.data() + j0 * k,
                                0,           c_split.data() + j0,
                                ldc,         variant >= 1 ? bias.data() + j0 : nullptr,
                                variant == 2};
            gemm_prepacked_ab_simd(part, a_packed.data(), ws.data());
          }
          CHECK(ws.intact());
          CHECK(c_split == c_pre);
        }
      }
    }
  // gemm_pack_a reads A transposed too ([k, m] stored).
  for (std::size_t m : {3, 130})
    for (std::size_t k : {5, 600}) {
      CAPTURE(m);
      CAPTURE(k);
      const std::size_t n = 2 * nr + 3;
      const auto at = ref::random_vec(rng, k * m), b = ref::random_vec(rng, k * n);
      std::vector<float> a(m * k), packed(k * n), c1(m * n), c2(m * n), a_packed(gemm_packed_a_floats(m, k));
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t p = 0; p < k; ++p) a[i * k + p] = at[p * m + i];
      pack_b_panels_ref(b.data(), n, false, k, n, packed.data());
      GemmArgs g{m, n, k, a.data(), k, packed.data(), 0, c1.data(), n, nullptr, false};
      Guarded ws(gemm_packed_workspace_floats(g));
      gemm_prepacked_b_simd(g, ws.data());
      gemm_pack_a({m, 0, k, at.data(), m, nullptr, 0, nullptr, 0, nullptr, false, true}, a_packed.data());
      g.c = c2.data();
      gemm_prepacked_ab_simd(g, a_packed.data(), ws.data());
      CHECK(c1 == c2);
    }
}
