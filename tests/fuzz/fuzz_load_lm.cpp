// libFuzzer target: load_lm (lm_file.hpp) must refuse any malformed
// language-model file with an error string (never crash, overflow or allocate
// absurd sizes), and whatever it accepts must hold bounded parameters, evaluate
// to a finite loss, save back to the same bytes and run a step.
// Each input is tried twice: as given (most mutations stop at the CRC-32) and
// with its last 4 bytes replaced by the CRC-32 of the rest, so mutations reach
// the field checks behind the checksum. Seeds: tests/fuzz/corpus/load_lm
// (tests/fuzz/make_seeds.mjs).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "headlab/lm_file.hpp"
#include "headlab/model.hpp"
#include "headlab/trainer.hpp"

namespace {

void check(const std::uint8_t* data, std::size_t size) {
  headlab::LmLoaded r = headlab::load_lm(data, size);
  if (!r.trainer) {
    if (r.error.empty()) std::abort();  // a refusal must say why
    return;
  }
  headlab::LmTrainer& t = *r.trainer;
  const float* p = t.model().params();
  for (std::size_t i = 0; i < t.model().num_params(); ++i)
    if (!(std::fabs(p[i]) <= headlab::kMaxParam)) std::abort();
  if (!std::isfinite(t.evaluate(headlab::kLoadCheckExamples).loss)) std::abort();
  std::string error;
  if (headlab::save_lm(t, r.steps, &error) != std::vector<std::uint8_t>(data, data + size)) std::abort();
  t.step(1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  check(data, size);
  if (size >= 8) {
    std::vector<std::uint8_t> b(data, data + size);
    const std::uint32_t crc = headlab::crc32(b.data(), b.size() - 4);
    for (int k = 0; k < 4; ++k) b[b.size() - 4 + k] = std::uint8_t(crc >> (8 * k));
    check(b.data(), b.size());
  }
  return 0;
}
