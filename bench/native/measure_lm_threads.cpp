// Language-model training steps per second with the data-parallel step
// (headlab/lm_parallel.hpp) against one thread, on the induction task's
// default model (2 layers x 4 heads, d 32, no MLP, batch 64). Runs are
// interleaved (1, 2, 1, 2, ...) so a change in machine load hits both.
//   build/native/bench/native/headlab_measure_lm_threads [steps=300] [runs=3] [threads=2] [mlp=0]
// Built with HEADLAB_BENCH natively, and under Emscripten against the pthreads
// core (headlab_core_threads) as a Node program:
//   node build/wasm/bench/native/headlab_measure_lm_threads.js 300 3 2
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "headlab/lm.hpp"
#include "headlab/lm_parallel.hpp"
#include "headlab/lm_tasks.hpp"

using namespace headlab;

namespace {

double steps_per_second(std::size_t threads, std::size_t steps, bool mlp, float* loss) {
  const LmTaskSpec& spec = *find_lm_task("induction");
  LmTrainConfig c = lm_train_defaults(spec, 4);
  c.mlp = mlp;
  LmTrainer trainer(spec, c);
  const std::string error = set_lm_threads(trainer, threads);
  if (!error.empty()) {
    std::fprintf(stderr, "%s\n", error.c_str());
    std::exit(1);
  }
  trainer.step(10);  // warm-up: caches, thread start, first touches
  const auto t0 = std::chrono::steady_clock::now();
  *loss = trainer.step(steps).loss;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return double(steps) / s;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t steps = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 300;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 3;
  const std::size_t threads = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 2;
  const bool mlp = argc > 4 && std::atoi(argv[4]) != 0;
  std::printf("induction, 2 layers x 4 heads, d 32, batch 64, mlp %d, %zu steps per run\n", int(mlp), steps);
  std::vector<double> one, many;
  for (int r = 0; r < runs; ++r)
    for (std::size_t k : {std::size_t{1}, threads}) {
      float loss = 0;
      const double sps = steps_per_second(k, steps, mlp, &loss);
      (k == 1 ? one : many).push_back(sps);
      std::printf("run %d threads %zu: %.1f steps/s (%.3f ms/step), last loss %.6f\n", r + 1, k, sps, 1e3 / sps,
                  double(loss));
    }
  for (int r = 0; r < runs; ++r)
    std::printf("run %d speed-up %.2fx\n", r + 1, many[std::size_t(r)] / one[std::size_t(r)]);
  return 0;
}
