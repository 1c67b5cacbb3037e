// Training session: a task generator, the one-layer model, its optimizer and
// seeded random streams, behind a small API a Web Worker can drive.
//
// Random streams, all derived from config.seed: parameter init, training
// batches, held-out examples (evaluate, head_metrics) and the probe sequence.
// The same config gives the same run bit for bit in a given build.
//
// Saved format (save()/load()), version 1, every integer and float little-endian:
//   offset  bytes  field
//   0       4      magic "HLAB"
//   4       4      u32 format version = 1
//   8       1      u8 L = task name length (1..32)
//   9       L      task name, ASCII, as in the task table
//   9+L     4      u32 num_heads (1..64, divides d_model)
//           4      u32 d_model (1..1024)
//           8      u64 seed
//           4      f32 learning_rate (finite, > 0)
//           4      u32 batch_size (1..4096)
//           1      u8 optimizer (0 = adam, 1 = sgd)
//           1      u8 causal (0 or 1)
//           8      u64 training steps taken
//           8      u64 training-batch generator state
//           h      u8 per head: 1 enabled, 0 disabled
//           4      u32 P = parameter count (must equal what the config implies)
//           4*P    f32 parameters, finite, in the order of model.hpp's ParamLayout
// Nothing follows. Optimizer moments are not saved: Adam restarts from zero.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "headlab/model.hpp"
#include "headlab/tasks.hpp"

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
  StepResult step(std::size_t n = 1);

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
  TaskBatch train_batch_, eval_batch_, probe_;
};

}  // namespace headlab
