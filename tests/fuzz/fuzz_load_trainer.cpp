// libFuzzer target: Trainer::load must reject any malformed model file with an
// error string (never crash, overflow or allocate absurd sizes), and whatever it
// accepts must save back to the same bytes and run a step.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "headlab/trainer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  headlab::TrainerOrError r = headlab::Trainer::load(data, size);
  if (!r.trainer) {
    if (r.error.empty()) std::abort();  // a refusal must say why
    return 0;
  }
  const std::vector<std::uint8_t> again = r.trainer->save();
  if (again.size() != size || !std::equal(again.begin(), again.end(), data)) std::abort();
  r.trainer->step(1);
  return 0;
}
