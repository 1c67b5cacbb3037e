// libFuzzer target: Trainer::load must reject any malformed model file with an
// error string (never crash, overflow or allocate absurd sizes), and whatever it
// accepts must hold bounded parameters, evaluate to a finite loss, save back to
// the same bytes (a version-1 file as the same fields in version 2) and run a
// step. Seeds: tests/fuzz/corpus/load_trainer (tests/fuzz/make_seeds.mjs).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "headlab/model.hpp"
#include "headlab/trainer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  headlab::TrainerOrError r = headlab::Trainer::load(data, size);
  if (!r.trainer) {
    if (r.error.empty()) std::abort();  // a refusal must say why
    return 0;
  }
  headlab::Trainer& t = *r.trainer;
  const float* p = t.model().params();
  for (std::size_t i = 0; i < t.model().num_params(); ++i)
    if (!(std::fabs(p[i]) <= headlab::kMaxParam)) std::abort();
  if (!std::isfinite(t.evaluate(headlab::kLoadCheckExamples).loss)) std::abort();

  std::vector<std::uint8_t> expected(data, data + size);
  if (expected[4] == 1) {  // version 1: saved again as version 2, the same fields then the CRC-32
    expected[4] = 2;
    const std::uint32_t crc = headlab::crc32(expected.data(), expected.size());
    for (int k = 0; k < 4; ++k) expected.push_back(std::uint8_t(crc >> (8 * k)));
  }
  if (t.save() != expected) std::abort();
  t.step(1);
  return 0;
}
