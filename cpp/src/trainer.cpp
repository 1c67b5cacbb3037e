#include "headlab/trainer.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "headlab/lm_kernels.hpp"  // embedding_forward
#include "train/file_io.hpp"

namespace headlab {

namespace {

using file_io::check_frame_params;
using file_io::frame_intact;
using file_io::frame_problem;
using file_io::heap_has_room;
using file_io::Reader;
using file_io::Writer;

// Stream ids mixed with the seed (Rng's second argument).
constexpr std::uint64_t kInitStream = 1, kTrainStream = 2, kEvalStream = 3, kProbeStream = 4;

constexpr std::uint32_t kVersion = 2;  // written by save(); load() reads 1 and 2
constexpr std::size_t kMaxHeads = 64, kMaxDModel = 1024, kMaxBatch = 4096, kMaxName = 32;

ModelConfig model_config(const TrainerConfig& c, const TaskSpec& spec) {
  ModelConfig m;
  m.vocab = spec.vocab;
  m.seq_len = spec.seq_len;
  m.num_relations = spec.num_relations;
  m.d_model = c.d_model;
  m.num_heads = c.num_heads;
  m.causal = c.causal;
  m.max_batch = c.batch_size;
  return m;
}

// Everything a Trainer allocates (training_bytes), with its two batches of examples (and room to spare).
std::size_t trainer_bytes(const TrainerConfig& c, const TaskSpec& spec) {
  const ModelConfig m = model_config(c, spec);
  const std::size_t batch = c.batch_size * (spec.seq_len + 2 * spec.num_relations + 4) * sizeof(int);
  return training_bytes(Model::buffer_bytes(m), param_layout(m).total, 2 * batch);
}

std::string too_large(std::size_t bytes, const char* why) {
  return "batchSize × dModel too large: this trainer needs about " + std::to_string((bytes >> 20) + 1) +
         " MiB of memory, " + why + "; lower batchSize or dModel";
}

// "" when a Trainer for `c` can be built now, else why not.
std::string room_for(const TrainerConfig& c, const TaskSpec& spec) {
  const std::size_t bytes = trainer_bytes(c, spec);
  return heap_has_room(bytes) ? "" : too_large(bytes, "more than the heap has left");
}

}  // namespace

std::string validate_config(const TrainerConfig& c) {
  if (!find_task(c.task)) {
    std::string names;
    for (std::size_t i = 0; i < task_count(); ++i) names += std::string(i ? ", " : "") + task_at(i).name;
    return "task: unknown task '" + c.task + "' (known: " + names + ")";
  }
  if (c.num_heads < 1 || c.num_heads > kMaxHeads)
    return "numHeads must be in 1.." + std::to_string(kMaxHeads) + ", got " + std::to_string(c.num_heads);
  if (c.d_model < 1 || c.d_model > kMaxDModel)
    return "dModel must be in 1.." + std::to_string(kMaxDModel) + ", got " + std::to_string(c.d_model);
  if (c.d_model % c.num_heads != 0)
    return "numHeads must divide dModel: dModel " + std::to_string(c.d_model) + " / numHeads " +
           std::to_string(c.num_heads) + " is not an integer";
  if (!(std::isfinite(c.learning_rate) && c.learning_rate > 0.0f))
    return "learningRate must be a finite number > 0";
  if (c.batch_size < 1 || c.batch_size > kMaxBatch)
    return "batchSize must be in 1.." + std::to_string(kMaxBatch) + ", got " + std::to_string(c.batch_size);
  if (c.optimizer != OptimizerKind::adam && c.optimizer != OptimizerKind::sgd)
    return "optimizer must be 'adam' or 'sgd'";
  const std::size_t bytes = trainer_bytes(c, *find_task(c.task));
  if (bytes > kMaxTrainingBytes) return too_large(bytes, "over the limit of 384 MiB per trainer");
  return "";
}

Trainer::Trainer(const TrainerConfig& c, const TaskSpec& spec)
    : config_(c),
      spec_(&spec),
      model_(model_config(c, spec)),
      optimizer_(c.optimizer, model_.num_params(), c.learning_rate),
      train_rng_(c.seed, kTrainStream),
      train_batch_(spec, c.batch_size),
      eval_batch_(spec, c.batch_size),
      probe_(spec, 1) {
  Rng init(c.seed, kInitStream);
  model_.init(init);
  Rng probe(c.seed, kProbeStream);
  generate_batch(spec, probe, 1, probe_);
}

TrainerOrError Trainer::create(const TrainerConfig& config) {
  TrainerOrError r;
  r.error = validate_config(config);
  if (r.error.empty()) r.error = room_for(config, *find_task(config.task));
  if (r.error.empty()) r.trainer.reset(new Trainer(config, *find_task(config.task)));
  return r;
}

void Trainer::probe_inputs(float* x) const {
  const std::size_t d = config_.d_model, t = spec_->seq_len;
  embedding_forward(Path::simd, probe_.tokens.data(), 1, t, d, model_.params() + model_.layout().tok_emb,
                    model_.params() + model_.layout().pos_emb, x);
}

StepResult Trainer::step(std::size_t n) {
  StepResult r;
  for (std::size_t i = 0; i < n && diverged_at_ == 0; ++i) {
    BatchResult b;
    const Divergence why = optimizer_.step_or_rollback(train_rng_, model_.params(), model_.grads(), [&] {
      generate_batch(*spec_, train_rng_, config_.batch_size, train_batch_);
      b = model_.forward(train_batch_, config_.batch_size, true);
      return b.loss;
    });
    if (why != Divergence::none) {
      diverged_at_ = steps_ + 1;
      divergence_ = why;
      break;
    }
    ++steps_;
    r.loss = b.loss;
    r.accuracy = float(b.all_right) / float(b.examples);
  }
  r.step = steps_;
  r.diverged = diverged_at_ != 0;
  return r;
}

std::string Trainer::divergence_message() const {
  if (diverged_at_ == 0) return "";
  return headlab::divergence_message(divergence_, diverged_at_, config_.learning_rate,
                                     config_.optimizer == OptimizerKind::sgd ? "sgd" : "adam", "trainer");
}

EvalResult Trainer::evaluate(std::size_t n) {
  EvalResult r;
  if (n == 0) return r;
  Rng rng(config_.seed, kEvalStream);
  double loss = 0;
  std::size_t all = 0, per[kMaxRelations] = {};
  for (std::size_t done = 0; done < n;) {
    const std::size_t chunk = std::min(config_.batch_size, n - done);
    generate_batch(*spec_, rng, chunk, eval_batch_);
    const BatchResult b = model_.forward(eval_batch_, chunk, false);
    loss += double(b.loss) * double(chunk);
    all += b.all_right;
    for (std::size_t k = 0; k < spec_->num_relations; ++k) per[k] += b.answers_right[k];
    done += chunk;
  }
  r.loss = float(loss / double(n));
  r.accuracy = float(double(all) / double(n));
  for (std::size_t k = 0; k < spec_->num_relations; ++k)
    r.relation_accuracy[k] = float(double(per[k]) / double(n));
  return r;
}

std::vector<HeadMetrics> Trainer::head_metrics(std::size_t n) {
  const std::size_t h = config_.num_heads, t = spec_->seq_len, rc = spec_->num_relations;
  std::vector<double> ent(h, 0.0), dist(h, 0.0), share(h * rc, 0.0);
  Rng rng(config_.seed, kEvalStream);
  for (std::size_t done = 0; done < n;) {
    const std::size_t chunk = std::min(config_.batch_size, n - done);
    generate_batch(*spec_, rng, chunk, eval_batch_);
    model_.forward(eval_batch_, chunk, false);
    const float* w = model_.query_weights();  // [chunk, h, t]
    for (std::size_t b = 0; b < chunk; ++b) {
      const long q = eval_batch_.query[b];
      for (std::size_t i = 0; i < h; ++i) {
        const float* row = w + (b * h + i) * t;
        for (std::size_t j = 0; j < t; ++j) {
          if (row[j] > 0.0f) ent[i] -= double(row[j]) * std::log(double(row[j]));
          dist[i] += double(row[j]) * double(std::labs(q - long(j)));
        }
        for (std::size_t k = 0; k < rc; ++k)
          share[i * rc + k] += row[eval_batch_.answer_positions[b * rc + k]];
      }
    }
    done += chunk;
  }
  std::vector<HeadMetrics> m(h);
  const double inv = n ? 1.0 / double(n) : 0.0;
  for (std::size_t i = 0; i < h; ++i) {
    m[i].entropy = float(ent[i] * inv);
    m[i].mean_distance = float(dist[i] * inv);
    for (std::size_t k = 0; k < rc; ++k) m[i].relation_share[k] = float(share[i * rc + k] * inv);
  }
  return m;
}

std::vector<float> Trainer::attention_weights() {
  const std::size_t t = spec_->seq_len;
  std::vector<float> w(config_.num_heads * t * t);
  model_.attention_map(probe_.tokens.data(), w.data());
  return w;
}

TaskInfo Trainer::task_info() const {
  TaskInfo info;
  info.name = spec_->name;
  info.seq_len = spec_->seq_len;
  info.vocab = spec_->vocab;
  info.num_relations = spec_->num_relations;
  info.query_position = spec_->query_position;
  info.relation_positions.assign(spec_->relation_positions, spec_->relation_positions + spec_->num_relations);
  return info;
}

void Trainer::set_head_enabled(std::size_t head, bool on) {
  if (head < config_.num_heads) model_.set_head_enabled(head, on);
}

std::vector<std::uint8_t> Trainer::save() const {
  std::vector<std::uint8_t> out;
  Writer w{out};
  file_io::write_frame_start(w, "HLAB", kVersion, spec_->name);
  w.u32(std::uint32_t(config_.num_heads));
  w.u32(std::uint32_t(config_.d_model));
  w.u64(config_.seed);
  w.f32(config_.learning_rate);
  w.u32(std::uint32_t(config_.batch_size));
  w.u8(config_.optimizer == OptimizerKind::adam ? 0 : 1);
  w.u8(config_.causal ? 1 : 0);
  w.u64(steps_);
  w.u64(train_rng_.state());
  for (std::size_t i = 0; i < config_.num_heads; ++i) w.u8(model_.head_enabled(i) ? 1 : 0);
  file_io::write_frame_end(w, model_.params(), model_.num_params());
  return out;
}

TrainerOrError Trainer::load(const std::uint8_t* bytes, std::size_t size) {
  TrainerOrError r;
  auto fail = [&](const std::string& why) {
    r.trainer.reset();
    r.error = "load: " + why;
    return std::move(r);
  };
  if (bytes == nullptr) return fail("no data");
  Reader in{bytes, size};
  if (size < 4 || std::memcmp(bytes, "HLAB", 4) != 0)
    return fail("not a HeadLab file (magic 'HLAB' missing)");
  in.at = 4;
  const std::uint32_t version = in.u32();
  if (!in.ok) return fail("truncated header");
  if (version != 1 && version != 2)
    return fail("unsupported version " + std::to_string(version) + " (expected 1 or 2)");
  // Version 2 ends with a CRC-32 of every byte before it. A mismatch is reported
  // as damage, with what the field checks below find wrong as a hint (e.g. a file
  // cut short); nothing is allocated for a damaged file.
  const std::size_t crc_bytes = version == 2 ? 4 : 0;
  const bool intact = version == 1 || frame_intact(bytes, size);
  auto problem = [&](const std::string& why) { return fail(frame_problem(intact, why)); };

  const std::size_t len = in.u8();
  if (len < 1 || len > kMaxName || !in.need(len)) return problem("bad or truncated task name");
  TrainerConfig c;
  c.task.assign(reinterpret_cast<const char*>(bytes + in.at), len);
  in.at += len;
  c.num_heads = in.u32();
  c.d_model = in.u32();
  c.seed = in.u64();
  c.learning_rate = in.f32();
  c.batch_size = in.u32();
  const std::uint8_t opt = in.u8(), causal = in.u8();
  const std::uint64_t steps = in.u64(), rng_state = in.u64();
  if (!in.ok) return problem("truncated header");
  if (opt > 1) return problem("optimizer byte must be 0 (adam) or 1 (sgd), got " + std::to_string(opt));
  if (causal > 1) return problem("causal byte must be 0 or 1, got " + std::to_string(causal));
  c.optimizer = opt == 0 ? OptimizerKind::adam : OptimizerKind::sgd;
  c.causal = causal == 1;
  const std::string bad = validate_config(c);
  if (!bad.empty()) return problem(bad);
  std::uint8_t heads[kMaxHeads];
  for (std::size_t i = 0; i < c.num_heads; ++i) {
    heads[i] = in.u8();
    if (in.ok && heads[i] > 1) return problem("head flags must be 0 or 1");
  }
  const std::uint32_t count = in.u32();
  if (!in.ok) return problem("truncated header");
  const TaskSpec& spec = *find_task(c.task);
  const std::size_t expected = param_layout(model_config(c, spec)).total;
  if (count != expected)
    return problem("parameter count " + std::to_string(count) + " does not match the config (" +
                   std::to_string(expected) + ")");
  const std::size_t rest = size - in.at, param_bytes = std::size_t(4) * count;
  if (rest != param_bytes + crc_bytes) {
    std::string why = "expected " + std::to_string(param_bytes) + " bytes of parameters, found " + std::to_string(rest);
    if (crc_bytes) why += " bytes after the header, where the parameters and the 4-byte checksum need " +
                          std::to_string(param_bytes + crc_bytes);
    return problem(why);
  }
  const std::string bad_param = check_frame_params(in, count);
  if (!bad_param.empty()) return problem(bad_param);
  if (!intact) return problem("");

  const std::string no_room = room_for(c, spec);
  if (!no_room.empty()) return fail(no_room);
  r.trainer.reset(new Trainer(c, spec));
  Trainer& t = *r.trainer;
  float* p = t.model_.params();
  for (std::size_t i = 0; i < count; ++i) p[i] = in.f32();
  for (std::size_t i = 0; i < c.num_heads; ++i) t.model_.set_head_enabled(i, heads[i] == 1);
  t.steps_ = steps;
  t.train_rng_.set_state(rng_state);
  // Bounded finite weights give a finite loss; this is the last line of defence.
  const EvalResult e = t.evaluate(kLoadCheckExamples);
  if (!std::isfinite(e.loss))
    return fail("the parameters give a non-finite loss on held-out examples; the model cannot be used");
  return r;
}

}  // namespace headlab
