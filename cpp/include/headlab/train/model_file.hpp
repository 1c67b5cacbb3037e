// The training layer's model files and memory budget, shared by both formats
// (trainer.hpp's HLAB, lm_file.hpp's HLLM). Both are framed the same way:
//   magic [4], u32 version, u8 L, task name [L], the format's own fields,
//   u8 per head (1 on, 0 off), u32 P, f32 parameters [P],
//   u32 CRC-32 of every byte before it
// (each header gives its byte-offset table). The writer and reader of that
// frame are private to cpp/src (train/file_io.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace headlab {

// CRC-32 (IEEE 802.3: reflected polynomial 0xEDB88320, initial and final value
// 0xFFFFFFFF), as zlib's crc32(); crc32("123456789") = 0xCBF43926.
std::uint32_t crc32(const std::uint8_t* data, std::size_t size);

// Held-out examples a loader evaluates before it accepts a model.
constexpr std::size_t kLoadCheckExamples = 64;

// What one trainer's buffers may take at most: two side by side still fit the
// 1 GiB wasm heap.
constexpr std::size_t kMaxTrainingBytes = std::size_t{384} << 20;

// Everything a trainer allocates: its model's buffers (model_bytes), the
// optimizer's two moment vectors over num_params (counted for SGD too) and
// its batches of examples (batch_bytes).
constexpr std::size_t training_bytes(std::size_t model_bytes, std::size_t num_params, std::size_t batch_bytes) {
  return model_bytes + 2 * num_params * sizeof(float) + batch_bytes;
}

}  // namespace headlab
