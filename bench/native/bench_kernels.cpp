// Micro-benchmarks for the kernels and the forward pass, old (headlab::v0, the
// code before the performance work) and new side by side in one run.
// Natively: build/<dir>/bench/native/headlab_bench [peak|gemm|variants|softmax|forward]...
// In wasm:  node --no-experimental-fetch build/<dir>/bench/native/headlab_bench.js ...
// Benchmarks are not tests: the test suite checks correctness; here only a
// rough agreement check guards against timing a broken kernel.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>
#include <xsimd/xsimd.hpp>

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#endif

#include "baseline/baseline.hpp"
#include "gemm_variants.hpp"
#include "headlab/attention_fused.hpp"
#include "headlab/kernels.hpp"
#include "headlab/mha.hpp"

using namespace headlab;

namespace {

using fbatch = xsimd::batch<float>;

// Process CPU time, not wall time: other jobs on a shared machine then only
// cost cache and memory bandwidth, not whole time slices. Best-of-N on top.
#ifdef __EMSCRIPTEN__
EM_JS(double, process_cpu_seconds, (), {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1e-6;
});
double now_s() {
  return process_cpu_seconds();
}
#else
double now_s() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}
#endif

// Best time of `reps` runs, each at least min_s long (repeating fn inside).
template <class F>
double best_time(F&& fn, int reps = 15, double min_s = 0.02, double warm_s = 0.2) {
  // Warm-up: V8 runs wasm in its baseline compiler (Liftoff) until a function
  // has used its tier-up budget, and a running call never switches tiers.
  for (const double t0 = now_s(); now_s() - t0 < warm_s;) fn();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    int iters = 0;
    const double t0 = now_s();
    double t1;
    do {
      fn();
      ++iters;
      t1 = now_s();
    } while (t1 - t0 < min_s);
    best = std::min(best, (t1 - t0) / iters);
  }
  return best;
}

// Best time of each function, timed round-robin (old, new, old, new, ...) so
// that load from other processes on a shared machine hits them alike.
std::vector<double> race(const std::vector<std::function<void()>>& fns, int rounds = 5, int reps = 3,
                         double min_s = 0.02) {
  std::vector<double> best(fns.size(), 1e30);
  for (int round = 0; round < rounds; ++round)
    for (std::size_t i = 0; i < fns.size(); ++i)
      best[i] = std::min(best[i], best_time(fns[i], reps, min_s, round == 0 ? 0.2 : 0.0));
  return best;
}

std::vector<float> random_vec(std::size_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

float max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  float scale = 0, worst = 0;
  for (float x : b) scale = std::max(scale, std::fabs(x));
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return scale > 0 ? worst / scale : worst;
}

volatile float g_sink;

// ---------------------------------------------------------------- peak probe
// (a) TOOLCHAIN.md's probe: NACC independent chains acc = acc*x + y (mul and
//     add both on each chain, so it is bound by latency at small NACC).
// (b) Throughput: NACC mul chains and NACC add chains, all independent (with
//     more than 6 + 6 V8 runs out of XMM registers and spills).
volatile float g_x = 0.999999f, g_y = 1e-7f;

template <int NACC>
__attribute__((noinline)) double peak_chain_mul_add(std::size_t iters) {
  fbatch acc[NACC];
  for (int i = 0; i < NACC; ++i) acc[i] = fbatch(1.0f + 0.001f * i);
  const fbatch x(g_x), y(g_y);
  for (std::size_t it = 0; it < iters; ++it)
    for (int i = 0; i < NACC; ++i) acc[i] = acc[i] * x + y;
  fbatch s(0.0f);
  for (int i = 0; i < NACC; ++i) s += acc[i];
  return xsimd::hadd(s);
}

template <int NACC>
__attribute__((noinline)) double peak_mul_and_add(std::size_t iters) {
  fbatch m[NACC], a[NACC];
  for (int i = 0; i < NACC; ++i) m[i] = a[i] = fbatch(1.0f + 0.001f * i);
  const fbatch x(g_x), y(g_y);
  for (std::size_t it = 0; it < iters; ++it)
    for (int i = 0; i < NACC; ++i) {
      m[i] = m[i] * x;
      a[i] = a[i] + y;
    }
  fbatch s(0.0f);
  for (int i = 0; i < NACC; ++i) s += m[i] + a[i];
  return xsimd::hadd(s);
}

void bench_peak() {
  std::printf("\n== peak probe (batch of %zu lanes; a mul and an add count 1 flop per lane each)\n",
              fbatch::size);
  const std::size_t iters = 1 << 22;
  auto rate = [&](double flops_per_iter, auto fn) {
    const double t = best_time(fn, 5, 0.1);
    return flops_per_iter * iters / t * 1e-9;
  };
  const double lanes = fbatch::size;
  std::printf("  (a)  8 chains acc = acc*x + y (TOOLCHAIN.md): %6.1f GFLOP/s\n",
              rate(8 * 2 * lanes, [&] { g_sink = float(peak_chain_mul_add<8>(iters)); }));
  std::printf("  (a) 12 chains acc = acc*x + y               : %6.1f GFLOP/s\n",
              rate(12 * 2 * lanes, [&] { g_sink = float(peak_chain_mul_add<12>(iters)); }));
  std::printf("  (b)  6 mul + 6 add independent chains       : %6.1f GFLOP/s\n",
              rate(6 * 2 * lanes, [&] { g_sink = float(peak_mul_and_add<6>(iters)); }));
}

// ---------------------------------------------------------------------- gemm
void bench_gemm() {
  std::printf("\n== projection GEMM C[T, N] = X[T, d_model] W[d_model, N] + b, GFLOP/s\n");
  std::printf("  %5s %5s %5s | %8s %8s %8s\n", "T", "d_mod", "N", "v0 simd", "simd", "packed");
  for (std::size_t t : {256, 1024})
    for (std::size_t d : {256, 512, 768}) {
      const std::size_t n = d;
      auto a = random_vec(t * d, 1), b = random_vec(d * n, 2), bias = random_vec(n, 3);
      std::vector<float> c0(t * n), c1(t * n), c2(t * n);
      GemmArgs g0{t, n, d, a.data(), d, b.data(), n, c0.data(), n, bias.data(), false};
      GemmArgs g1 = g0, g2 = g0;
      g1.c = c1.data();
      g2.c = c2.data();
      std::vector<float> ws(gemm_packed_workspace_floats(g0));
      const double flops = 2.0 * t * n * d;
      const auto tm = race(
          {[&] { v0::gemm_simd(g0); }, [&] { gemm_simd(g1); }, [&] { gemm_packed_simd(g2, ws.data()); }});
      std::printf("  %5zu %5zu %5zu | %8.1f %8.1f %8.1f   (max rel diff %.1e %.1e)\n", t, d, n,
                  flops / tm[0] * 1e-9, flops / tm[1] * 1e-9, flops / tm[2] * 1e-9,
                  double(max_rel_diff(c1, c0)), double(max_rel_diff(c2, c0)));
    }
  std::printf("  Q, K, V projections of one input, N = 3 x d_model:\n");
  std::printf("  %5s %5s %5s | %8s %8s %8s\n", "T", "d_mod", "N", "v0 x3", "packed x3", "shared-A");
  for (std::size_t t : {256, 1024})
    for (std::size_t d : {256, 512, 768}) {
      auto a = random_vec(t * d, 1);
      std::vector<std::vector<float>> b, c;
      GemmArgs g[3];
      for (int s = 0; s < 3; ++s) {
        b.push_back(random_vec(d * d, 10 + s));
        c.emplace_back(t * d);
        g[s] = {t, d, d, a.data(), d, b[s].data(), d, c[s].data(), d, nullptr, false};
      }
      std::vector<float> ws(gemm_shared_a_workspace_floats(g, 3));
      const double flops = 3 * 2.0 * t * d * d;
      const auto tm = race({[&] {
                              for (auto& gs : g) v0::gemm_simd(gs);
                            },
                            [&] {
                              for (auto& gs : g) gemm_packed_simd(gs, ws.data());
                            },
                            [&] { gemm_shared_a_simd(g, 3, ws.data()); }});
      std::printf("  %5zu %5zu %5zu | %8.1f %8.1f %8.1f\n", t, d, 3 * d, flops / tm[0] * 1e-9,
                  flops / tm[1] * 1e-9, flops / tm[2] * 1e-9);
    }
}

// Variants are timed round-robin (best of several rounds each) so that load
// from other processes on the machine hits them alike.
struct VariantRun {
  std::string name;
  void (*run)(const GemmArgs&, float*);
  std::size_t (*ws)(std::size_t);
};

template <std::size_t MR, std::size_t NB, std::size_t U, std::size_t KC = 256, std::size_t MC = 64>
VariantRun variant(const char* suffix = "") {
  using V = bench::Variant<MR, NB, U, KC, MC>;
  char name[32];
  std::snprintf(name, sizeof name, "%zux%zu%s", MR, NB * fbatch::size, suffix);
  return {name, &V::run, &V::workspace_floats};
}

void bench_variants(bool blocking) {
  std::printf("\n== packed GEMM %s, GFLOP/s, T x d_model x d_model\n",
              blocking ? "cache blocking (k block KC, row block MC)" : "register blocks (rows x columns)");
  const std::vector<VariantRun> vs =
      blocking ? std::vector<VariantRun>{variant<2, 4, 1, 256, 64>(" KC256 MC64"),
                                         variant<2, 4, 1, 128, 64>(" KC128 MC64"),
                                         variant<2, 4, 1, 512, 64>(" KC512 MC64"),
                                         variant<2, 4, 1, 256, 32>(" KC256 MC32"),
                                         variant<2, 4, 1, 256, 128>(" KC256 MC128"),
                                         variant<2, 4, 1, 256, 256>(" KC256 MC256"),
                                         variant<2, 4, 1, 128, 128>(" KC128 MC128")}
               : std::vector<VariantRun>{variant<4, 2, 1>(),      variant<4, 2, 2>(" u2"), variant<2, 4, 1>(),
                                         variant<2, 4, 2>(" u2"), variant<1, 8, 1>(),      variant<3, 2, 1>(),
                                         variant<2, 3, 1>(),      variant<6, 2, 1>(),      variant<3, 3, 1>(),
                                         variant<4, 3, 1>(),      variant<5, 2, 1>(),      variant<8, 1, 1>(),
                                         variant<8, 2, 1>()};
  const std::size_t ts[] = {256, 1024}, ds[] = {256, 512, 768};
  std::vector<std::vector<double>> best(vs.size());
  for (std::size_t t : ts)
    for (std::size_t d : ds) {
      auto a = random_vec(t * d, 1), b = random_vec(d * d, 2);
      std::vector<float> c(t * d), want(t * d), ws(vs[0].ws(d) * 2);
      GemmArgs g{t, d, d, a.data(), d, b.data(), d, c.data(), d, nullptr, false};
      GemmArgs gr = g;
      gr.c = want.data();
      v0::gemm_simd(gr);
      std::vector<double> tbest(vs.size(), 1e30);
      for (std::size_t v = 0; v < vs.size(); ++v) {
        ws.resize(std::max(ws.size(), vs[v].ws(d)));
        std::fill(c.begin(), c.end(), 0.0f);
        vs[v].run(g, ws.data());
        if (max_rel_diff(c, want) > 1e-4f) std::printf("  %s gives a wrong product!\n", vs[v].name.c_str());
      }
      for (int round = 0; round < 4; ++round)
        for (std::size_t v = 0; v < vs.size(); ++v)
          tbest[v] = std::min(tbest[v],
                              best_time([&] { vs[v].run(g, ws.data()); }, 3, 0.02, round == 0 ? 0.2 : 0.0));
      for (std::size_t v = 0; v < vs.size(); ++v) best[v].push_back(2.0 * t * d * d / tbest[v] * 1e-9);
    }
  std::printf("  %-16s %8s %8s %8s %8s %8s %8s\n", "block", "256/256", "256/512", "256/768", "1024/256",
              "1024/512", "1024/768");
  for (std::size_t v = 0; v < vs.size(); ++v) {
    std::printf("  %-16s", vs[v].name.c_str());
    for (double x : best[v]) std::printf(" %8.1f", x);
    std::printf("\n");
  }
}

// ------------------------------------------------------------------- softmax
void bench_softmax() {
  const std::size_t rows = 64, cols = 1024;
  std::printf("\n== softmax rows of %zu (%zu rows), ns per element\n", cols, rows);
  const auto x = random_vec(rows * cols, 5, 3.0f);
  std::vector<float> y = x;
  const double n = double(rows * cols);
  // Softmax works in place: each timed call first restores the input; the copy
  // is timed alone and subtracted.
  auto restore = [&] { std::memcpy(y.data(), x.data(), x.size() * sizeof(float)); };
  const auto tm = race({restore,
                        [&] {
                          restore();
                          v0::softmax_rows_simd(y.data(), rows, cols, cols);
                        },
                        [&] {
                          restore();
                          softmax_rows_simd(y.data(), rows, cols, cols);
                        },
                        [&] {
                          restore();
                          softmax_rows_ref(y.data(), rows, cols, cols);
                        }});
  const double ns = 1e9 / n;
  std::printf("  v0 softmax_rows_simd %6.2f   softmax_rows_simd %6.2f   softmax_rows_ref %6.2f\n",
              (tm[1] - tm[0]) * ns, (tm[2] - tm[0]) * ns, (tm[3] - tm[0]) * ns);
  std::vector<float> e(x.size()), xneg(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) xneg[i] = -std::fabs(x[i]);
  const auto te = race({[&] { v0::exp_simd(x.data(), e.data(), x.size()); },
                        [&] { exp_simd(x.data(), e.data(), x.size()); },
                        [&] { exp2_nonpositive_simd(xneg.data(), e.data(), x.size()); }});
  std::printf("  v0 exp_simd %6.2f   exp_simd %6.2f   exp2_nonpositive_simd %6.2f ns/element\n", te[0] * ns,
              te[1] * ns, te[2] * ns);
}

// ----------------------------------------------------------------- attention
// One head, d_k = d_v = 64, q/k/v read with the all-heads leading dimension
// of d_model 512, as mha_forward calls it.
void bench_attention() {
  std::printf(
      "\n== one head of attention, d_k = d_v = 64 (ld 512): ms and GFLOP/s (4 T^2 d flops;"
      " causal counted as half)\n");
  std::printf("  %5s %6s | %9s %9s | %9s %9s\n", "T", "causal", "v0 ms", "GFLOP/s", "fused ms", "GFLOP/s");
  for (std::size_t t : {256, 1024, 4096})
    for (bool causal : {false, true}) {
      const std::size_t d = 64, ld = 512;
      auto q = random_vec(t * ld, 1), k = random_vec(t * ld, 2), v = random_vec(t * ld, 3);
      std::vector<float> o0(t * ld), o1(t * ld);
      // v0: what mha_forward did per head before (materialised scores).
      std::vector<float> kt(d * t), sc(t * t);
      const float scale = 0.125f, ninf = -INFINITY;
      auto v0_head = [&] {
        v0::transpose(t, d, k.data(), ld, kt.data(), t);
        v0::gemm_simd({t, t, d, q.data(), ld, kt.data(), t, sc.data(), t, nullptr, false});
        v0::scale_simd(sc.data(), t * t, scale);
        if (causal)
          for (std::size_t r = 0; r < t; ++r)
            for (std::size_t c = r + 1; c < t; ++c) sc[r * t + c] = ninf;
        v0::softmax_rows_simd(sc.data(), t, t, t);
        v0::gemm_simd({t, d, t, sc.data(), t, v.data(), ld, o0.data(), ld, nullptr, false});
      };
      AttentionArgs a;
      a.t_q = a.t_k = t;
      a.d_k = a.d_v = d;
      a.q = q.data();
      a.k = k.data();
      a.v = v.data();
      a.o = o1.data();
      a.ldq = a.ldk = a.ldv = a.ldo = ld;
      a.causal = causal;
      a.scale = scale;
      std::vector<float> ws(attention_fused_simd_workspace_floats(a));
      const double flops = 4.0 * t * t * d * (causal ? 0.5 : 1.0);
      const auto tm = race({v0_head, [&] { attention_fused_simd(a, ws.data()); }}, t >= 4096 ? 3 : 5);
      const double t0 = tm[0], t1 = tm[1];
      std::printf("  %5zu %6s | %9.2f %9.1f | %9.2f %9.1f   (max rel diff %.1e)\n", t, causal ? "yes" : "no",
                  t0 * 1e3, flops / t0 * 1e-9, t1 * 1e3, flops / t1 * 1e-9, double(max_rel_diff(o1, o0)));
    }
}

// ------------------------------------------------------------------- forward
void bench_forward(bool causal) {
  std::printf("\n== self-attention forward (in/out projections, bias, %s), ms\n",
              causal ? "causal" : "no mask");
  std::printf("  %5s %5s %3s | %9s %9s %9s | %s\n", "T", "d_mod", "h", "v0", "new", "speed-up",
              "workspace MB v0 -> new (fused)");
  struct F {
    std::size_t t, d, h;
  };
  for (F f : {F{256, 256, 4}, F{1024, 512, 8}, F{4096, 512, 8}}) {
    MhaShape s;
    s.t_q = s.t_k = f.t;
    s.d_model = f.d;
    s.num_heads = f.h;
    s.causal = causal;
    mha_resolve_shape(s);
    const float ws_scale = 1.0f / std::sqrt(float(f.d));
    auto x = random_vec(f.t * f.d, 1), wq = random_vec(f.d * f.d, 2, ws_scale),
         wk = random_vec(f.d * f.d, 3, ws_scale), wv = random_vec(f.d * f.d, 4, ws_scale),
         wo = random_vec(f.d * f.d, 5, ws_scale), bq = random_vec(f.d, 6, 0.1f),
         bk = random_vec(f.d, 7, 0.1f), bv = random_vec(f.d, 8, 0.1f), bo = random_vec(f.d, 9, 0.1f);
    MhaInputs in;
    in.query = in.key = in.value = x.data();
    MhaWeights w{wq.data(), wk.data(), wv.data(), wo.data(), bq.data(), bk.data(), bv.data(), bo.data()};
    std::vector<float> y0(f.t * f.d), y1(f.t * f.d);
    std::vector<float> ws0(v0::mha_workspace_floats(s)),
        ws1(mha_workspace_floats(s, MhaWorkspaceFor::output_only));
    MhaOutputs o0, o1;
    o0.output = y0.data();
    o1.output = y1.data();
    const auto tm = race(
        {[&] { v0::mha_forward(s, in, w, o0, ws0.data()); }, [&] { mha_forward(s, in, w, o1, ws1.data()); }},
        f.t >= 4096 ? 3 : 5, f.t >= 4096 ? 1 : 3, 0.0);
    const double t0 = tm[0], t1 = tm[1];
    std::printf("  %5zu %5zu %3zu | %9.1f %9.1f %8.2fx | %.1f -> %.1f   (max rel diff %.1e)\n", f.t, f.d, f.h,
                t0 * 1e3, t1 * 1e3, t0 / t1, ws0.size() * 4e-6, ws1.size() * 4e-6,
                double(max_rel_diff(y1, y0)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> what(argv + 1, argv + argc);
  if (what.empty()) what = {"peak", "gemm", "variants", "softmax", "forward"};
  std::printf("headlab bench: xsimd arch %s, batch<float> = %zu lanes\n", xsimd::default_arch::name(),
              fbatch::size);
  for (const auto& w : what) {
    if (w == "peak")
      bench_peak();
    else if (w == "gemm")
      bench_gemm();
    else if (w == "variants")
      bench_variants(false);
    else if (w == "blocking")
      bench_variants(true);
    else if (w == "softmax")
      bench_softmax();
    else if (w == "attention")
      bench_attention();
    else if (w == "forward")
      bench_forward(false);
    else if (w == "forward-causal")
      bench_forward(true);
    else
      std::printf("unknown benchmark '%s'\n", w.c_str());
  }
  return 0;
}
