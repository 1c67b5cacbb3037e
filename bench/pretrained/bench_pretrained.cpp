// One forward pass of a model of GPT-2 small's shapes (12 layers, 12 heads, d 768,
// d_ff 3072, vocabulary 50257, 1024 positions) with random weights, through the
// pretrained engine (pretrained.hpp), float32 and float16 weights, T = 64 (and
// any T given). Natively and as wasm under Node from this one source:
//   S="bench/pretrained/bench_pretrained.cpp cpp/src/pretrained/*.cpp
//      cpp/src/{kernels,lm_kernels,attention_fused,tasks}.cpp cpp/src/train/rng.cpp"
//   g++ -O3 -std=c++17 -mavx2 -mfma -Icpp/include -Ibuild/native/deps $S -o /tmp/bench_pretrained
//   em++ -O3 -std=c++17 -msimd128 -msse4.1 -Icpp/include -Ibuild/wasm/deps $S -sALLOW_MEMORY_GROWTH=1
//      -sMAXIMUM_MEMORY=4gb -sENVIRONMENT=node -o /tmp/bench_pretrained.cjs
//   node --no-experimental-fetch /tmp/bench_pretrained.cjs
// (natively with threads for --profile N > 1: add cpp/src/threads/pretrained_pool.cpp
// -DHEADLAB_BENCH_THREADS -pthread). The checkpoint is written straight into the engine's
// file buffer (a safetensors image), so the weights are held once. Prints load and forward
// times in ms (best of the runs) and the memory the engine holds.
// With --ops T...: each GEMM of a forward pass of T tokens alone on the same shapes.
// With --profile N T...: where one float32 forward pass of T tokens (logits at every
// position) spends its time, step by step inside the engine's run: on one thread in
// CPU time (what a run costs on a machine shared with other jobs), on N threads in wall
// time with each step's parallel efficiency.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#endif
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "headlab/pretrained.hpp"
#include "headlab/pretrained_kernels.hpp"

using namespace headlab;

namespace {

#ifdef __EMSCRIPTEN__
// Node's process CPU time: on a machine shared with other jobs, CPU time is what a run costs.
EM_JS(double, cpu_ms, (), {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
});
#else
double cpu_ms() {
  return 1000.0 * double(std::clock()) / CLOCKS_PER_SEC;
}
#endif

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Spec {
  std::string name;
  std::vector<std::size_t> shape;
  std::size_t n = 1;
};

std::uint16_t to_half(float f) {  // round toward zero; values here are normal and small
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  const std::uint32_t sign = (b >> 16) & 0x8000u;
  const int e = int((b >> 23) & 0xff) - 127 + 15;
  if (e <= 0) return std::uint16_t(sign);
  return std::uint16_t(sign | (std::uint32_t(e) << 10) | ((b >> 13) & 0x3ffu));
}

std::unique_ptr<PretrainedModel> make_model(bool half) {
  const std::size_t L = 12, H = 12, d = 768, f = 3072, V = 50257, N = 1024;
  std::vector<Spec> specs = {
      {"wte.weight", {V, d}}, {"wpe.weight", {N, d}}, {"ln_f.weight", {d}}, {"ln_f.bias", {d}}};
  for (std::size_t l = 0; l < L; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    for (auto s : std::vector<Spec>{{h + "ln_1.weight", {d}},
                                    {h + "ln_1.bias", {d}},
                                    {h + "attn.c_attn.weight", {d, 3 * d}},
                                    {h + "attn.c_attn.bias", {3 * d}},
                                    {h + "attn.c_proj.weight", {d, d}},
                                    {h + "attn.c_proj.bias", {d}},
                                    {h + "ln_2.weight", {d}},
                                    {h + "ln_2.bias", {d}},
                                    {h + "mlp.c_fc.weight", {d, f}},
                                    {h + "mlp.c_fc.bias", {f}},
                                    {h + "mlp.c_proj.weight", {f, d}},
                                    {h + "mlp.c_proj.bias", {d}}})
      specs.push_back(s);
  }
  const std::size_t es = half ? 2 : 4;
  std::string header = "{";
  std::size_t offset = 0;
  for (auto& s : specs) {
    for (auto x : s.shape) s.n *= x;
    header += std::string(header.size() > 1 ? "," : "") + "\"" + s.name + "\":{\"dtype\":\"" +
              (half ? "F16" : "F32") + "\",\"shape\":[" + std::to_string(s.shape[0]) +
              (s.shape.size() > 1 ? "," + std::to_string(s.shape[1]) : "") + "],\"data_offsets\":[" +
              std::to_string(offset) + "," + std::to_string(offset + s.n * es) + "]}";
    offset += s.n * es;
  }
  header += "}";
  while (header.size() % 8) header += ' ';
  const std::size_t bytes = 8 + header.size() + offset;

  PretrainedConfig c;
  c.num_layers = L, c.num_heads = H, c.d_model = d, c.d_ff = f, c.vocab = V, c.context = N;
  c.windows.assign(L, 0);
  auto model = std::make_unique<PretrainedModel>(c);
  PretrainedModel& m = *model;
  const double t0 = cpu_ms();
  std::uint8_t* p = m.alloc_file(bytes);
  if (!p) {
    std::printf("out of memory for %zu bytes\n", bytes);
    return nullptr;
  }
  const std::uint64_t n = header.size();
  std::memcpy(p, &n, 8);
  std::memcpy(p + 8, header.data(), header.size());
  std::uint8_t* data = p + 8 + header.size();
  std::uint32_t state = 12345;
  std::size_t k = 0;
  for (const auto& s : specs) {
    const bool gain = s.name.find("ln_") != std::string::npos && s.name.find(".weight") != std::string::npos;
    for (std::size_t i = 0; i < s.n; ++i, ++k) {
      state = state * 1664525u + 1013904223u;
      const float u = float(state >> 8) / float(1u << 24) - 0.5f;
      const float v = gain ? 1.0f + 0.1f * u : 0.04f * u;
      if (half) {
        const std::uint16_t hv = to_half(v);
        std::memcpy(data + 2 * k, &hv, 2);
      } else {
        std::memcpy(data + 4 * k, &v, 4);
      }
    }
  }
  const double t1 = cpu_ms();
  std::string e = m.add_safetensors("gpt2-small.safetensors", p, bytes);
  if (e.empty()) e = m.finish();
  if (!e.empty()) {
    std::printf("load failed: %s\n", e.c_str());
    return nullptr;
  }
  const double t2 = cpu_ms();
  std::printf(
      "%s: %zu parameters, file %.1f MB, held %.1f MB; written in %.0f ms, checked and compacted in %.0f "
      "ms\n",
      half ? "float16" : "float32", m.parameters(), bytes / 1e6, m.weight_bytes() / 1e6, t1 - t0, t2 - t1);
  return model;
}

void bench(bool half, const std::vector<std::size_t>& lengths) {
  auto model = make_model(half);
  if (!model) return;
  PretrainedModel& m = *model;
  const std::size_t V = 50257;
  for (std::size_t t : lengths) {
    std::vector<std::int32_t> ids(t);
    for (std::size_t i = 0; i < t; ++i) ids[i] = std::int32_t((i * 7919) % V);
    for (int mode = 0; mode < 3; ++mode) {
      const bool attention = mode == 2, all_logits = mode == 1;
      PretrainedRunOptions o;
      o.attention = attention;
      o.all_logits = all_logits;
      PretrainedRunResult r;
      double best = 1e30;
      for (int rep = 0; rep < 4; ++rep) {
        const double a = now_ms();
        m.run(ids.data(), t, o, &r);
        best = std::min(best, now_ms() - a);
      }
      std::printf("  T=%zu%s: best of 4 forward passes %.1f ms; memory held %.1f MB (activation formula %.2f MB)\n", t,
                  attention ? " with all attention weights" : all_logits ? " with logits at every position" : "", best,
                  m.memory_bytes() / 1e6, m.activation_bytes(t, attention, all_logits, false) / 1e6);
    }
    std::vector<std::int32_t> out;
    const double a = now_ms();
    m.generate(ids.data(), t, 20, 1.0f, 1, -1, &out);
    std::printf("  generate 20 tokens after %zu: %.0f ms (%.1f ms per token after the prompt's pass)\n", t,
                now_ms() - a, out.size() ? (now_ms() - a) / double(out.size()) : 0.0);
  }
}

double best_ms(int reps, const std::function<void()>& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double a = now_ms();
    f();
    best = std::min(best, now_ms() - a);
  }
  return best;
}

// Each GEMM of one forward pass, alone, with float32 weights in GPT-2's layouts.
void ops(const std::vector<std::size_t>& lengths) {
  const std::size_t L = 12, d = 768, f = 3072, V = 50257;
  std::vector<float> w(V * d), a(std::max<std::size_t>(1024, 1) * f), c(1024 * V / 4 + V), bias(f, 0.01f);
  std::uint32_t state = 1;
  for (auto& x : w) x = float((state = state * 1664525u + 1013904223u) >> 8) / float(1u << 24) - 0.5f;
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = w[i % w.size()];
  struct Op { const char* name; std::size_t n, k; bool transposed; std::size_t per_pass; };
  const Op list[] = {{"c_attn [d, 3d]", 3 * d, d, false, L}, {"attn.c_proj [d, d]", d, d, false, L},
                     {"mlp.c_fc [d, 4d]", f, d, false, L},  {"mlp.c_proj [4d, d]", d, f, false, L},
                     {"unembedding wte^T [d, V]", V, d, true, 1}};
  for (std::size_t t : lengths) {
    std::printf("T=%zu: one GEMM alone, best of 3 (ms), x times per forward pass = ms per pass\n", t);
    double sum_layers = 0, unembed_all = 0, unembed_last = 0;
    for (const Op& op : list) {
      for (std::size_t rows : {t, std::size_t(1)}) {
        if (!op.transposed && rows == 1) continue;
        if (c.size() < rows * op.n) c.resize(rows * op.n);
        const WideGemmArgs g{rows, op.n, op.k, a.data(), op.k, w.data(), DType::f32, op.transposed ? op.k : op.n,
                             op.transposed, c.data(), op.n, op.transposed ? nullptr : bias.data(), false};
        std::vector<float> ws(gemm_wide_workspace_floats(g));
        const double ms = best_ms(3, [&] { gemm_wide(Path::simd, g, ws.data()); });
        const double flops = 2.0 * double(rows) * double(op.n) * double(op.k);
        std::printf("  %-26s rows %4zu: %8.2f ms x %2zu = %8.1f ms  (%.1f GFLOP/s)\n", op.name, rows, ms, op.per_pass,
                    ms * double(op.per_pass), flops / ms / 1e6);
        if (!op.transposed) sum_layers += ms * double(op.per_pass);
        else if (rows == 1) unembed_last = ms;
        else unembed_all = ms;
      }
    }
    std::printf("  layer GEMMs %.1f ms; unembedding every position %.1f ms, last position %.1f ms\n", sum_layers,
                unembed_all, unembed_last);
  }
}

// Times every parallel step of a forward pass. Alone (one worker, chunks in order: the same work
// as without a pool) in CPU time; around a pool of threads (built with -pthread and
// cpp/src/threads/pretrained_pool.cpp, -DHEADLAB_BENCH_THREADS) in wall time, with the time the
// workers spent in chunks, so busy / (workers x wall) is the step's parallel efficiency.
// GPT-2's steps per layer: c_attn, attention, attn.c_proj, mlp.c_fc (+ GELU), mlp.c_proj; then
// the unembedding.
class TimingPool final : public PretrainedPool {
 public:
  explicit TimingPool(std::unique_ptr<PretrainedPool> inner = nullptr) : inner_(std::move(inner)) {}
  std::vector<double> ms, busy;  // per step, summed over runs
  std::size_t step = 0;
  std::size_t workers() const override { return inner_ ? inner_->workers() : 1; }
  void run(std::size_t chunks, const Task& task) override {
    if (ms.size() <= step) ms.resize(step + 1, 0.0), busy.resize(step + 1, 0.0);
    if (!inner_) {
      const double a = cpu_ms();
      for (std::size_t c = 0; c < chunks; ++c) task(c, 0);
      ms[step] += cpu_ms() - a;
      busy[step++] = ms[step];
      return;
    }
    std::vector<double> worker_ms(inner_->workers(), 0.0);
    const double a = now_ms();
    inner_->run(chunks, [&](std::size_t c, std::size_t w) {
      const double b = now_ms();
      task(c, w);
      worker_ms[w] += now_ms() - b;
    });
    ms[step] += now_ms() - a;
    for (double x : worker_ms) busy[step] += x;
    ++step;
  }

 private:
  std::unique_ptr<PretrainedPool> inner_;
};

// Where one float32 forward pass (logits at every position) spends its time, by step kind.
void profile(std::size_t threads, const std::vector<std::size_t>& lengths) {
  auto model = make_model(false);
  if (!model) return;
#ifdef HEADLAB_BENCH_THREADS
  auto pool = std::make_unique<TimingPool>(threads > 1 ? make_pretrained_pool(threads) : nullptr);
#else
  if (threads > 1) std::printf("built without threads: 1 thread\n");
  auto pool = std::make_unique<TimingPool>();
#endif
  TimingPool* timing = pool.get();
  const std::size_t workers = pool->workers();
  model->set_pool(std::move(pool));
  const std::size_t L = 12, d = 768, f = 3072, V = 50257;
  for (std::size_t t : lengths) {
    std::vector<std::int32_t> ids(t);
    for (std::size_t i = 0; i < t; ++i) ids[i] = std::int32_t((i * 7919) % V);
    PretrainedRunOptions o;
    o.all_logits = true;
    PretrainedRunResult r;
    model->run(ids.data(), t, o, &r);  // warm-up
    const int reps = 3;
    double total = 0;
    timing->ms.assign(5 * L + 1, 0.0);
    timing->busy.assign(5 * L + 1, 0.0);
    for (int rep = 0; rep < reps; ++rep) {
      timing->step = 0;
      const double a = workers > 1 ? now_ms() : cpu_ms();
      model->run(ids.data(), t, o, &r);
      total += (workers > 1 ? now_ms() : cpu_ms()) - a;
    }
    const char* names[] = {"c_attn [d, 3d]", "attention", "attn.c_proj [d, d]", "mlp.c_fc [d, 4d] + GELU",
                           "mlp.c_proj [4d, d]"};
    const double flops[] = {2.0 * t * d * 3 * d, 0.0, 2.0 * t * d * d, 2.0 * t * d * f, 2.0 * t * f * d};
    std::printf(
        "T=%zu, %zu thread(s): forward pass, logits at every position, mean of %d: %.1f ms (%s time)\n", t,
        workers, reps, total / reps, workers > 1 ? "wall" : "CPU");
    double steps = 0;
    auto line = [&](const char* name, double sum, double busy, double fl) {
      std::printf("  %-26s %8.1f ms %5.1f %%", name, sum, 100 * sum / (total / reps));
      if (fl > 0) std::printf("  %5.1f GFLOP/s", fl / sum / 1e6);
      if (workers > 1) std::printf("  efficiency %.2f", busy / (double(workers) * sum));
      std::printf("\n");
    };
    for (std::size_t kind = 0; kind < 5; ++kind) {
      double sum = 0, busy = 0;
      for (std::size_t l = 0; l < L; ++l) sum += timing->ms[5 * l + kind], busy += timing->busy[5 * l + kind];
      steps += sum / reps;
      line(names[kind], sum / reps, busy / reps, L * flops[kind]);
    }
    const double un = timing->ms[5 * L] / reps;
    steps += un;
    line("unembedding [d, V]", un, timing->busy[5 * L] / reps, 2.0 * t * d * V);
    std::printf("  %-26s %8.1f ms %5.1f %%\n", "rest (LN, adds, embedding)", total / reps - steps,
                100 * (total / reps - steps) / (total / reps));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && std::string(argv[1]) == "--profile") {
    std::vector<std::size_t> lengths;
    for (int i = 3; i < argc; ++i) lengths.push_back(std::size_t(std::atoi(argv[i])));
    profile(std::size_t(std::atoi(argv[2])), lengths);
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "--ops") {
    std::vector<std::size_t> lengths;
    for (int i = 2; i < argc; ++i) lengths.push_back(std::size_t(std::atoi(argv[i])));
    ops(lengths);
    return 0;
  }
  std::vector<std::size_t> lengths = {64};
  for (int i = 1; i < argc; ++i) lengths.push_back(std::size_t(std::atoi(argv[i])));
  bench(false, lengths);
  bench(true, lengths);
}
