// The language model's saved file (save_lm / load_lm): an LmTrainer's task,
// config, progress and weights.
//
// Format version 1, every integer and float little-endian (L = task name
// length, H = num_layers * num_heads, P = parameter count):
//   offset      bytes  field
//   0           4      magic "HLLM" (the one-layer trainer's files start "HLAB")
//   4           4      u32 format version = 1
//   8           1      u8 L (1..32)
//   9           L      task name, ASCII, as in the task table (lm_tasks.hpp)
//   9+L         4      u32 vocab (must equal the task's)
//   13+L        4      u32 seq_len (must equal the task's)
//   17+L        4      u32 num_layers (1..4)
//   21+L        4      u32 num_heads (1..64, divides d_model)
//   25+L        4      u32 d_model (1..1024)
//   29+L        1      u8 mlp (0 or 1)
//   30+L        4      f32 learning_rate (finite, > 0)
//   34+L        4      u32 batch_size (1..4096)
//   38+L        8      u64 seed
//   46+L        8      u64 training steps taken
//   54+L        8      u64 training-batch generator state
//   62+L        H      u8 per head, layer-major (layer * num_heads + head): 1 on, 0 off
//   62+L+H      4      u32 P (must equal what the config implies, lm_layout().total)
//   66+L+H      4P     f32 parameters in the order of lm.hpp's LmLayout, each
//                      finite with |w| <= kMaxParam (1e4, train/optimizer.hpp says why)
//   66+L+H+4P   4      u32 CRC-32 (train/model_file.hpp's crc32, as zlib's) of every byte before it
// Nothing follows. Adam's moments are not saved: a loaded model's optimizer
// restarts from zero (moments and bias correction), and its steps() counts on
// from the saved number.
//
// load_lm refuses, with a message naming the field: a wrong magic or version;
// a CRC mismatch ("the file is damaged", plus what the field checks find);
// an unknown task; a config that is invalid or does not match the task; a file
// cut short or with bytes after the CRC; a parameter that is not finite or
// beyond kMaxParam; a model too large for memory; and, last, a model whose
// loss on kLoadCheckExamples held-out sequences is not finite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "headlab/lm.hpp"
#include "headlab/train/model_file.hpp"

namespace headlab {

constexpr std::uint32_t kLmFileVersion = 1;
constexpr std::size_t kLmMaxHeads = 64, kLmMaxDModel = 1024, kLmMaxBatch = 4096;

// "" when an LmTrainer for (spec, config) can be built now, else a message
// naming the field as the JS API spells it (numLayers, numHeads, dModel,
// learningRate, batchSize): ranges above, and memory (at most 384 MiB per
// model, and what the heap still has).
std::string lm_train_config_error(const LmTaskSpec& spec, const LmTrainConfig& config);

// The file bytes of `trainer`, which has taken `steps` training steps in all.
// Refuses (returns empty, *error set) when a parameter is not finite or beyond
// kMaxParam: training diverged, and load_lm would refuse the file.
std::vector<std::uint8_t> save_lm(const LmTrainer& trainer, std::uint64_t steps, std::string* error);

struct LmLoaded {
  std::unique_ptr<LmTrainer> trainer;  // null on error
  std::uint64_t steps = 0;             // training steps the file had taken
  std::string error;                   // "load: ...", empty on success
};

// A trainer of the file's task, config and seed with the file's weights, head
// flags and training-batch generator state (so training continues on fresh
// batches); allocates nothing for a file it refuses.
LmLoaded load_lm(const std::uint8_t* bytes, std::size_t size);

}  // namespace headlab
