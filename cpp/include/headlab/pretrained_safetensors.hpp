// The safetensors format (https://github.com/huggingface/safetensors), read
// without running any code from the file:
//
//   offset      size  field
//   0           8     N, the header's length in bytes (uint64, little-endian)
//   8           N     header: a JSON object { "<tensor name>": { "dtype": "F32" | "F16" | "BF16" | ...,
//                     "shape": [d0, d1, ...], "data_offsets": [begin, end] }, ...,
//                     "__metadata__": { string: string } (optional, ignored) }
//   8 + N       ...   raw data, little-endian, row-major; a tensor's bytes are
//                     [8 + N + begin, 8 + N + end)
//
// parse_safetensors checks everything a reader relies on: N fits in the file,
// the header is a JSON object of well-formed entries, every dtype is one the
// format defines, end - begin equals the shape's element count times the
// dtype's size, every range lies inside the data, and no two ranges overlap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace headlab {

struct SafetensorsEntry {
  std::string name;
  std::string dtype;              // as written: "F32", "F16", "BF16", "I64", ...
  std::size_t element_bytes = 0;  // that dtype's size
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0, end = 0;  // relative to the data section
};

struct SafetensorsHeader {
  std::uint64_t data_start = 0;           // 8 + N
  std::vector<SafetensorsEntry> tensors;  // in the header's order
};

// "" and *out filled, or an error that starts with `file` and names the
// tensor or field ("model.safetensors: h.0.attn.c_attn.weight: data_offsets [0, 12] ...").
std::string parse_safetensors(const std::string& file, const std::uint8_t* bytes, std::size_t size,
                              SafetensorsHeader* out);

}  // namespace headlab
