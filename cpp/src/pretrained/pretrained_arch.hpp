// Private to cpp/src/pretrained: each architecture as data. An architecture is
//   - a table from its checkpoint's tensor names to the block's canonical slots
//     (PretrainedModel::Global / LayerSlot), with each tensor's stored shape and
//     layout, and the config flag that makes it present;
//   - a function making the block description (BlockSpec) from the config.
// Adding an architecture is one table and one such function here (and its
// config.json reader in web/lib/api/pretrained-config.js).
#pragma once

#include <cstddef>

#include "headlab/pretrained.hpp"

namespace headlab {
namespace arch {

// A stored dimension, from the config: d_model, d_ff, 2 d_ff, vocab, context,
// h d_k (queries), g d_k (keys or values), h d_k + 2 g d_k (fused q, k, v).
enum class Dim { none, d, f, f2, v, n, q, kv, qkv, types };  // n: context + position offset

enum class Layout {
  vector,   // [rows]
  in_out,   // [in = rows, out = cols] (GPT-2's Conv1D)
  out_in,   // [out = rows, in = cols] (nn.Linear)
  embed,    // [vocab or context = rows, d = cols], looked up by row
  checked,  // a copy of a tied tensor: shape checked, dropped
  ignored,  // a buffer (causal masks, rotary inv_freq): any shape, dropped
};

// When a tensor is part of the checkpoint.
enum class When { always, attention_bias, mlp_bias, untied, tied, mlp };

struct TensorEntry {
  const char* name;  // "{}" stands for the layer index; without the architecture's prefix
  int slot;          // Global (per_layer false) or LayerSlot; -1 for checked / ignored
  bool per_layer;
  Layout layout;
  Dim rows, cols;
  When when = When::always;
};

struct Architecture {
  const char* name;    // config.json's architectures entry
  const char* prefix;  // accepted and stripped before the names ("transformer.", "model.", ...)
  const TensorEntry* tensors;
  std::size_t count;
  BlockSpec (*block)(const PretrainedConfig&);
  // Other spellings of a name's ending, read as the table's: {other, table's} (BERT files saved
  // by newer transformers name bert-base-uncased's LayerNorm.gamma / beta weight / bias).
  const char* const (*renames)[2] = nullptr;
  std::size_t rename_count = 0;
};

const Architecture& architecture(PretrainedArch a);

}  // namespace arch
}  // namespace headlab
