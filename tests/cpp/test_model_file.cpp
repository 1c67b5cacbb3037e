// Model files (format in trainer.hpp): the CRC-32, damaged files refused, the
// parameter bound, version-1 files; and training that diverges stops with its
// last finite state.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "headlab/model.hpp"
#include "headlab/trainer.hpp"

using namespace headlab;

namespace {

std::unique_ptr<Trainer> make(float lr, OptimizerKind opt, std::uint64_t seed = 1) {
  TrainerConfig c;
  c.seed = seed;
  c.learning_rate = lr;
  c.optimizer = opt;
  TrainerOrError r = Trainer::create(c);
  REQUIRE_MESSAGE(r.trainer, r.error);
  return std::move(r.trainer);
}

std::uint32_t crc_of(const char* s) { return crc32(reinterpret_cast<const std::uint8_t*>(s), std::strlen(s)); }

// The same model as a version-1 file: version 1, no CRC-32 at the end.
std::vector<std::uint8_t> to_v1(std::vector<std::uint8_t> b) {
  b[4] = 1;
  b.resize(b.size() - 4);
  return b;
}

// Offset of the first parameter in a file of `t` (see the format table).
std::size_t params_at(const Trainer& t) { return 55 + std::strlen(t.task().name) + t.config().num_heads; }

void put_f32(std::vector<std::uint8_t>& b, std::size_t at, float f) {
  std::uint32_t v;
  std::memcpy(&v, &f, 4);
  for (int k = 0; k < 4; ++k) b[at + k] = std::uint8_t(v >> (8 * k));
}

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("model file: CRC-32 reference values") {
  CHECK(crc_of("123456789") == 0xCBF43926u);
  CHECK(crc_of("") == 0u);
  CHECK(crc_of("The quick brown fox jumps over the lazy dog") == 0x414FA339u);
}

TEST_CASE("model file: save writes version 2 ending with the CRC-32 of the rest") {
  auto t = make(0.003f, OptimizerKind::adam);
  t->step(20);
  const std::vector<std::uint8_t> b = t->save();
  CHECK(b[4] == 2);
  CHECK(b.size() == params_at(*t) + 4 * t->model().num_params() + 4);
  const std::uint32_t crc = crc32(b.data(), b.size() - 4);
  std::uint32_t stored = 0;
  for (int k = 0; k < 4; ++k) stored |= std::uint32_t(b[b.size() - 4 + k]) << (8 * k);
  CHECK(crc == stored);
}

TEST_CASE("model file: a damaged byte anywhere is refused") {
  auto t = make(0.003f, OptimizerKind::adam);
  t->step(50);
  const std::vector<std::uint8_t> bytes = t->save();
  std::size_t refused = 0;
  for (std::size_t at = 0; at < bytes.size(); ++at) {
    for (std::uint8_t flip : {std::uint8_t(1u << (at % 8)), std::uint8_t(0xFF)}) {
      std::vector<std::uint8_t> b = bytes;
      b[at] ^= flip;
      const TrainerOrError r = Trainer::load(b.data(), b.size());
      CAPTURE(at);
      CHECK(!r.trainer);
      // Past magic and version, every change is reported as damage.
      if (at >= 8) CHECK(contains(r.error, "the file is damaged (checksum mismatch"));
      refused += r.trainer ? 0 : 1;
    }
  }
  CHECK(refused == 2 * bytes.size());
  // A file cut short says so, and what is missing.
  const TrainerOrError cut = Trainer::load(bytes.data(), 100);
  CHECK(contains(cut.error, "damaged"));
  CHECK(contains(cut.error, "bytes of parameters, found 30"));
}

TEST_CASE("model file: version-1 files load, with every check but the CRC") {
  auto t = make(0.003f, OptimizerKind::adam);
  t->step(100);
  const std::vector<std::uint8_t> v2 = t->save(), v1 = to_v1(v2);
  TrainerOrError back = Trainer::load(v1.data(), v1.size());
  REQUIRE_MESSAGE(back.trainer, back.error);
  CHECK(back.trainer->steps() == 100);
  CHECK(back.trainer->save() == v2);  // saved again as version 2
  const EvalResult a = t->evaluate(300), b = back.trainer->evaluate(300);
  CHECK(std::memcmp(&a, &b, sizeof a) == 0);

  // A flipped exponent bit: a weight of ~3e38 is finite but no training makes it.
  const std::size_t at = params_at(*t) + 4 * 17;
  std::vector<std::uint8_t> huge = v1;
  put_f32(huge, at, 3e38f);
  const TrainerOrError r = Trainer::load(huge.data(), huge.size());
  CHECK(!r.trainer);
  CHECK(contains(r.error, "parameter 17 is 3e+38"));
  CHECK(contains(r.error, "1e4"));
  // The bound is inclusive: 1e4 itself loads, the next float up does not.
  std::vector<std::uint8_t> edge = v1;
  put_f32(edge, at, -kMaxParam);
  CHECK(Trainer::load(edge.data(), edge.size()).trainer);
  put_f32(edge, at, std::nextafter(kMaxParam, 1e30f));
  CHECK(!Trainer::load(edge.data(), edge.size()).trainer);
  // Version 2 with a matching CRC gets the same check.
  std::vector<std::uint8_t> sealed = huge;
  sealed[4] = 2;
  const std::uint32_t crc = crc32(sealed.data(), sealed.size());
  for (int k = 0; k < 4; ++k) sealed.push_back(std::uint8_t(crc >> (8 * k)));
  const std::string e2 = Trainer::load(sealed.data(), sealed.size()).error;
  CHECK(contains(e2, "parameter 17 is 3e+38"));
  CHECK(!contains(e2, "damaged"));
}

TEST_CASE("optimizer: an update that would overflow changes nothing") {
  for (OptimizerKind kind : {OptimizerKind::adam, OptimizerKind::sgd}) {
    for (Path path : {Path::simd, Path::ref}) {
      Optimizer opt(kind, 11, 0.1f);
      std::vector<float> p(11, 0.5f), g(11, 0.25f);
      REQUIRE(opt.step(p.data(), g.data(), path));
      const std::vector<float> kept = p;
      // sgd: p - 0.1 * 1e6 is beyond 1e4; adam: (1 - beta2) g^2 overflows the second moment.
      g[9] = kind == OptimizerKind::sgd ? 1e6f : 1e25f;
      CHECK(!opt.step(p.data(), g.data(), path));
      CHECK(std::memcmp(p.data(), kept.data(), p.size() * sizeof(float)) == 0);
      CHECK(opt.steps() == 1);
      g[9] = NAN;
      CHECK(!opt.step(p.data(), g.data(), path));
      g[9] = 0.25f;
      CHECK(opt.step(p.data(), g.data(), path));
      CHECK(opt.steps() == 2);
    }
  }
}

TEST_CASE("trainer: sgd at learning rate 10 diverges, keeps its last finite state and says so") {
  auto t = make(10.0f, OptimizerKind::sgd);
  std::vector<float> before;
  std::vector<std::uint8_t> saved_before;
  StepResult r;
  while (t->steps() < 2000) {
    before.assign(t->model().params(), t->model().params() + t->model().num_params());
    saved_before = t->save();
    r = t->step(1);
    if (r.diverged) break;
    REQUIRE(std::isfinite(r.loss));
  }
  REQUIRE(r.diverged);
  MESSAGE("sgd, learning rate 10, seed 1: diverged at step ", t->diverged_at());
  CHECK(t->diverged_at() == t->steps() + 1);
  CHECK(r.step == t->steps());
  // Parameters bitwise as before the refused step; the whole saved state too.
  CHECK(std::memcmp(t->model().params(), before.data(), before.size() * sizeof(float)) == 0);
  CHECK(t->save() == saved_before);
  const EvalResult e = t->evaluate(500);
  CHECK(std::isfinite(e.loss));
  const std::string m = t->divergence_message();
  CHECK(contains(m, ("training diverged at step " + std::to_string(t->diverged_at())).c_str()));
  CHECK(contains(m, "learningRate 10 (sgd)"));
  CHECK(contains(m, ("kept its state from step " + std::to_string(t->steps())).c_str()));
  // Further steps take none and keep reporting it.
  const StepResult again = t->step(10);
  CHECK(again.diverged);
  CHECK(again.step == t->steps());
  CHECK(t->save() == saved_before);
  // The kept state saves and loads.
  const TrainerOrError back = Trainer::load(saved_before.data(), saved_before.size());
  REQUIRE_MESSAGE(back.trainer, back.error);
  CHECK(std::isfinite(back.trainer->evaluate(500).loss));
}

TEST_CASE("trainer: ordinary training never reports divergence") {
  auto t = make(0.003f, OptimizerKind::adam);
  const StepResult r = t->step(300);
  CHECK(!r.diverged);
  CHECK(t->diverged_at() == 0);
  CHECK(t->divergence_message().empty());
  CHECK(r.step == 300);
}
