// Private to cpp/src/pretrained: the state patch_heads keeps between its calls (complete
// here for the model's destructor).
#pragma once

#include <cstddef>
#include <vector>

#include "headlab/pretrained.hpp"

namespace headlab {

// Between patch_heads_begin and patch_heads_end: the two runs' traces and the shared rows.
struct PretrainedModel::PatchSession {
  PatchHeadsArgs args;  // pointing into ids
  std::vector<std::int32_t> ids;  // [clean | corrupted], the session's own copy
  std::vector<std::int32_t> types;  // the token types' copy (empty: all 0)
  Trace clean, corrupted;
  std::size_t p0 = 0, end = 0;  // the rows every patched run recomputes: p0..end-1
  std::size_t group = 1;        // patched runs batched together
  std::vector<float> u;         // W_U[answer] - W_U[wrong]
  float bias = 0;               // b_U[answer] - b_U[wrong]
  std::vector<float> kv;        // [group, end, qkv_width()]: one sequence's keys and values each
  std::vector<float> rows;      // [group, d]: each batched run's residual at `at`
};

}  // namespace headlab
