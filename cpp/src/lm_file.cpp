#include "headlab/lm_file.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "train/file_io.hpp"

namespace headlab {

namespace {

using file_io::check_frame_params;
using file_io::format_float;
using file_io::frame_intact;
using file_io::frame_problem;
using file_io::heap_has_room;
using file_io::Reader;
using file_io::Writer;

constexpr std::size_t kMaxName = 32;

// Everything an LmTrainer allocates (training_bytes), with its training batch.
std::size_t lm_trainer_bytes(const LmTaskSpec& spec, const LmTrainConfig& t) {
  const std::size_t batch = t.batch_size * (spec.seq_len * (2 * sizeof(std::int32_t) + 1) + 5 * sizeof(std::int32_t));
  const LmConfig c = LmTrainer::model_config(spec, t);
  return training_bytes(LanguageModel::buffer_bytes(c), lm_layout(c).total, batch);
}

std::string range(const char* name, std::size_t lo, std::size_t hi, std::uint64_t got) {
  return std::string(name) + " must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " +
         std::to_string(got);
}

// Ranges only, no memory check (load_lm checks memory after the checksum).
std::string config_range_error(const LmTrainConfig& c) {
  if (c.num_layers < 1 || c.num_layers > kLmMaxLayers) return range("numLayers", 1, kLmMaxLayers, c.num_layers);
  if (c.num_heads < 1 || c.num_heads > kLmMaxHeads) return range("numHeads", 1, kLmMaxHeads, c.num_heads);
  if (c.d_model < 1 || c.d_model > kLmMaxDModel) return range("dModel", 1, kLmMaxDModel, c.d_model);
  if (c.d_model % c.num_heads != 0)
    return "numHeads must divide dModel: dModel " + std::to_string(c.d_model) + " / numHeads " +
           std::to_string(c.num_heads) + " is not an integer";
  if (!(std::isfinite(c.learning_rate) && c.learning_rate > 0.0f))
    return "learningRate must be a finite number > 0, got " + format_float(c.learning_rate);
  if (c.batch_size < 1 || c.batch_size > kLmMaxBatch) return range("batchSize", 1, kLmMaxBatch, c.batch_size);
  return "";
}

std::string memory_error(const LmTaskSpec& spec, const LmTrainConfig& c) {
  const std::size_t bytes = lm_trainer_bytes(spec, c);
  const char* why = bytes > kMaxTrainingBytes ? "over the limit of 384 MiB per model"
                                        : heap_has_room(bytes) ? nullptr : "more than the heap has left";
  if (!why) return "";
  return "batchSize × dModel × numLayers too large: this model needs about " + std::to_string((bytes >> 20) + 1) +
         " MiB of memory, " + why + "; lower batchSize, dModel or numLayers";
}

}  // namespace

std::string lm_train_config_error(const LmTaskSpec& spec, const LmTrainConfig& config) {
  const std::string bad = config_range_error(config);
  return bad.empty() ? memory_error(spec, config) : bad;
}

std::vector<std::uint8_t> save_lm(const LmTrainer& trainer, std::uint64_t steps, std::string* error) {
  const LanguageModel& m = trainer.model();
  const float* p = m.params();
  for (std::size_t i = 0; i < m.num_params(); ++i)
    if (!(std::fabs(p[i]) <= kMaxParam)) {
      if (error)
        *error = "parameter " + std::to_string(i) + " is " + format_float(p[i]) +
                 (std::isfinite(p[i]) ? ", beyond ±1e4" : "") + ": training diverged; lower learningRate";
      return {};
    }
  const LmTrainConfig& c = trainer.config();
  const LmTaskSpec& spec = trainer.spec();
  std::vector<std::uint8_t> out;
  out.reserve(80 + c.num_layers * c.num_heads + 4 * m.num_params());
  Writer w{out};
  file_io::write_frame_start(w, "HLLM", kLmFileVersion, spec.name);
  w.u32(std::uint32_t(spec.vocab));
  w.u32(std::uint32_t(spec.seq_len));
  w.u32(std::uint32_t(c.num_layers));
  w.u32(std::uint32_t(c.num_heads));
  w.u32(std::uint32_t(c.d_model));
  w.u8(c.mlp ? 1 : 0);
  w.f32(c.learning_rate);
  w.u32(std::uint32_t(c.batch_size));
  w.u64(c.seed);
  w.u64(steps);
  w.u64(trainer.data_state());
  for (std::size_t l = 0; l < c.num_layers; ++l)
    for (std::size_t h = 0; h < c.num_heads; ++h) w.u8(m.head_enabled(l, h) ? 1 : 0);
  file_io::write_frame_end(w, p, m.num_params());
  if (error) error->clear();
  return out;
}

LmLoaded load_lm(const std::uint8_t* bytes, std::size_t size) {
  LmLoaded r;
  auto fail = [&](const std::string& why) {
    r.trainer.reset();
    r.error = "load: " + why;
    return std::move(r);
  };
  if (bytes == nullptr || size == 0) return fail("no data (an empty file)");
  if (size < 4 || std::memcmp(bytes, "HLLM", 4) != 0) {
    if (size >= 4 && std::memcmp(bytes, "HLAB", 4) == 0)
      return fail("magic: this is a one-layer trainer's file ('HLAB'); load it with loadTrainer");
    return fail("magic: not a HeadLab language-model file ('HLLM' missing)");
  }
  Reader in{bytes, size};
  in.at = 4;
  const std::uint32_t version = in.u32();
  if (!in.ok) return fail("version: the file ends inside the header (" + std::to_string(size) + " bytes)");
  if (version != kLmFileVersion)
    return fail("version: unsupported format version " + std::to_string(version) + " (expected " +
                std::to_string(kLmFileVersion) + ")");
  // A CRC mismatch is reported as damage, with what the field checks below
  // find wrong as a hint (e.g. a file cut short); nothing is allocated.
  const bool intact = frame_intact(bytes, size);
  auto problem = [&](const std::string& why) { return fail(frame_problem(intact, why)); };

  const std::size_t len = in.u8();
  if (len < 1 || len > kMaxName || !in.need(len)) return problem("task: bad or truncated task name");
  const std::string name(reinterpret_cast<const char*>(bytes + in.at), len);
  in.at += len;
  const std::uint32_t vocab = in.u32(), seq_len = in.u32();
  LmTrainConfig c;
  c.num_layers = in.u32();
  c.num_heads = in.u32();
  c.d_model = in.u32();
  const std::uint8_t mlp = in.u8();
  c.learning_rate = in.f32();
  c.batch_size = in.u32();
  c.seed = in.u64();
  const std::uint64_t steps = in.u64(), data_state = in.u64();
  if (!in.ok) return problem("the file ends inside the header (" + std::to_string(size) + " bytes)");
  const LmTaskSpec* spec = find_lm_task(name);
  if (!spec) {
    std::string known, shown;
    for (std::size_t i = 0; i < lm_task_count(); ++i) known += std::string(i ? ", " : "") + lm_task_at(i).name;
    for (char ch : name) shown += ch >= 32 && ch < 127 ? ch : '?';
    return problem("task: unknown task '" + shown + "' (known: " + known + ")");
  }
  // The file holds no schedule: training goes on with the task's (warm-up, Adam betas).
  c.warmup_steps = spec->defaults.warmup_steps;
  c.adam_beta1 = spec->defaults.adam_beta1;
  c.adam_beta2 = spec->defaults.adam_beta2;
  if (vocab != spec->vocab)
    return problem("vocab: " + std::to_string(vocab) + " does not match task " + spec->name + " (" +
                   std::to_string(spec->vocab) + ")");
  if (seq_len != spec->seq_len)
    return problem("seqLen: " + std::to_string(seq_len) + " does not match task " + spec->name + " (" +
                   std::to_string(spec->seq_len) + ")");
  if (mlp > 1) return problem("mlp: the byte must be 0 or 1, got " + std::to_string(mlp));
  c.mlp = mlp == 1;
  const std::string bad = config_range_error(c);
  if (!bad.empty()) return problem(bad);
  const std::size_t flags_at = in.at, num_flags = c.num_layers * c.num_heads;
  for (std::size_t i = 0; i < num_flags; ++i)
    if (in.u8() > 1) return problem("head flags: each must be 0 or 1 (flag " + std::to_string(i) + ")");
  const std::uint32_t count = in.u32();
  if (!in.ok) return problem("the file ends inside the header (" + std::to_string(size) + " bytes)");
  const std::size_t expected = lm_layout(LmTrainer::model_config(*spec, c)).total;
  if (count != expected)
    return problem("parameter count " + std::to_string(count) + " does not match the config (" +
                   std::to_string(expected) + ")");
  const std::size_t rest = size - in.at, need = 4 * std::size_t{count} + 4;
  if (rest != need)
    return problem("length: " + std::to_string(rest) + " bytes after the header, where the parameters and the " +
                   "4-byte checksum need " + std::to_string(need) + (rest < need ? " (cut short)" : " (extra bytes)"));
  const std::string bad_param = check_frame_params(in, count);
  if (!bad_param.empty()) return problem(bad_param);
  if (!intact) return problem("");

  const std::string no_room = memory_error(*spec, c);
  if (!no_room.empty()) return fail(no_room);
  r.trainer.reset(new LmTrainer(*spec, c));
  LmTrainer& t = *r.trainer;
  LanguageModel& m = t.model();
  float* p = m.params();
  for (std::size_t i = 0; i < count; ++i) p[i] = in.f32();
  for (std::size_t l = 0; l < c.num_layers; ++l)
    for (std::size_t h = 0; h < c.num_heads; ++h) m.set_head_enabled(l, h, bytes[flags_at + l * c.num_heads + h] == 1);
  t.set_data_state(data_state);
  r.steps = steps;
  // Bounded finite weights give a finite loss; this is the last line of defence.
  if (!std::isfinite(t.evaluate(kLoadCheckExamples).loss))
    return fail("held-out loss: the parameters give a non-finite loss on held-out sequences; the model cannot be used");
  return r;
}

}  // namespace headlab
