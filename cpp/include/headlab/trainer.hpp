// Training session: a task generator, the one-layer model, its optimizer and
// seeded random streams, behind a small API a Web Worker can drive.
//
// Random streams, all derived from config.seed: parameter init, training
// batches, held-out examples (evaluate, head_metrics) and the probe sequence.
// The same config gives the same run bit for bit in a given build.
//
// Saved format (save()/load()), version 2, every integer and float little-endian:
//   offset  bytes  field
//   0       4      magic "HLAB"
//   4       4      u32 format version = 2
//   8       1      u8 L = task name length (1..32)
//   9       L      task name, ASCII, as in the task table
//   9+L     4      u32 num_heads (1..64, divides d_model)
//   13+L    4      u32 d_model (1..1024)
//   17+L    8      u64 seed
//   25+L    4      f32 learning_rate (finite, > 0)
//   29+L    4      u32 batch_size (1..4096)
//   33+L    1      u8 optimizer (0 = adam, 1 = sgd)
//   34+L    1      u8 causal (0 or 1)
//   35+L    8      u64 training steps taken
//   43+L    8      u64 training-batch generator state
//   51+L    h      u8 per head: 1 enabled, 0 disabled (h = num_heads)
//   51+L+h  4      u32 P = parameter count (must equal what the config implies)
//   55+L+h  4*P    f32 parameters in the order of model.hpp's ParamLayout, each
//                  finite with |w| <= kMaxParam (1e4; train/optimizer.hpp says why)
//   55+L+h+4P  4   u32 CRC-32 (IEEE 802.3, as zlib's crc32) of every byte before it
// Nothing follows. Optimizer moments are not saved: Adam restarts from zero.
// Version 1 is the same without the CRC-32 (the file ends after the parameters);
// load() still reads it, with every other check. save() always writes version 2.
//
// load() refuses, with a message: a wrong magic or version; a version-2 file
// whose CRC does not match ("the file is damaged", with what else looks wrong);
// any field out of range; a parameter that is not finite or beyond kMaxParam;
// and, as a last defence, a model whose loss on the first kLoadCheckExamples
// held-out examples is not finite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "headlab/model.hpp"
#include "headlab/tasks.hpp"
#include "headlab/train/model_file.hpp"  // crc32, kLoadCheckExamples

namespace headlab {

struct TrainerConfig {
  std::string task = "two-relations";
  std::size_t num_heads = 2;
  std::size_t d_model = 16;
  std::uint64_t seed = 1;
  float learning_rate = 0.003f;  // Adam; at 0.01 a single head often locks onto one position
  std::size_t batch_size = 64;
  OptimizerKind optimizer = OptimizerKind::adam;
  bool causal = false;
};

// "" when valid, else a message naming the offending field.
std::string validate_config(const TrainerConfig& config);

struct StepResult {
  std::uint64_t step = 0;  // training steps taken so far
  float loss = 0;          // last batch
  float accuracy = 0;      // last batch, fraction of examples with every answer right
  bool diverged = false;   // see Trainer::step
};


struct EvalResult {
  float loss = 0;
  float accuracy = 0;  // fraction with all R answers right
  float relation_accuracy[kMaxRelations] = {};
};

// One head's attention from the query row, averaged over examples.
struct HeadMetrics {
  float entropy = 0;                         // nats; log(T) is uniform
  float mean_distance = 0;                   // sum_j w_j |query - j|
  float relation_share[kMaxRelations] = {};  // weight on each answer's position
};

struct TaskInfo {
  std::string name;
  std::size_t seq_len = 0, vocab = 0, num_relations = 0, query_position = 0;
  std::vector<int> relation_positions;  // -1 where it depends on the example
};

class Trainer;
struct TrainerOrError {
  std::unique_ptr<Trainer> trainer;  // null on error
  std::string error;
};

class Trainer {
 public:
  static TrainerOrError create(const TrainerConfig& config);
  static TrainerOrError load(const std::uint8_t* bytes, std::size_t size);

  // n training steps (forward, backward, update on a fresh batch each); no allocation.
  // A step whose loss or update is not usable (see Divergence) is not taken:
  // parameters, optimizer state, step count and batch generator stay as they
  // were after the last good step, and the trainer is diverged from then on
  // (step() takes no further steps and reports diverged). Everything else keeps
  // working on the kept state.
  StepResult step(std::size_t n = 1);

  // The step that diverged (steps() + 1), or 0.
  std::uint64_t diverged_at() const { return diverged_at_; }
  Divergence divergence() const { return divergence_; }
  // "" or, e.g., "training diverged at step 5 with learningRate 10 (sgd): the loss
  // became non-finite; the trainer kept its state from step 4 — lower learningRate".
  std::string divergence_message() const;

  // The first n examples of the held-out stream: the same examples on every
  // call, never the training stream's, so results are comparable over time.
  EvalResult evaluate(std::size_t n);

  // Per head (index = head), over the first n held-out examples.
  std::vector<HeadMetrics> head_metrics(std::size_t n);

  // The probe: a fixed sequence from its own stream, and every head's full
  // attention map on it, [h, T, T] (row = query position).
  const std::vector<std::int32_t>& probe_tokens() const { return probe_.tokens; }
  std::vector<float> attention_weights();
  // The probe's attention-layer input X = token embedding + position embedding,
  // [seq_len, d_model], written to x: what the heads view feeds to mha_forward.
  void probe_inputs(float* x) const;

  TaskInfo task_info() const;
  void set_head_enabled(std::size_t head, bool on);
  bool head_enabled(std::size_t head) const { return model_.head_enabled(head); }

  std::vector<std::uint8_t> save() const;

  const TrainerConfig& config() const { return config_; }
  const TaskSpec& task() const { return *spec_; }
  std::uint64_t steps() const { return steps_; }
  Model& model() { return model_; }
  const Model& model() const { return model_; }

 private:
  Trainer(const TrainerConfig& config, const TaskSpec& spec);

  TrainerConfig config_;
  const TaskSpec* spec_;
  Model model_;
  Optimizer optimizer_;
  Rng train_rng_;
  std::uint64_t steps_ = 0;
  std::uint64_t diverged_at_ = 0;
  Divergence divergence_ = Divergence::none;
  TaskBatch train_batch_, eval_batch_, probe_;
};

}  // namespace headlab
