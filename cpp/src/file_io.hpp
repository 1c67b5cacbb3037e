// Pieces both saved-model formats use (trainer.cpp's .hlab, lm_file.cpp's .hlm):
// a little-endian writer, a bounds-checked reader and read_u32, "%g" text for messages, and
// a heap check asked before allocating a model. Private to cpp/src.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace headlab {
namespace file_io {

struct Writer {
  std::vector<std::uint8_t>& out;
  void u8(std::uint8_t v) { out.push_back(v); }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(std::uint8_t(v >> (8 * i)));
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(std::uint8_t(v >> (8 * i)));
  }
  void f32(float f) {
    std::uint32_t v;
    std::memcpy(&v, &f, 4);
    u32(v);
  }
};

// Bounds-checked: past the end, reads give 0 and ok becomes false.
struct Reader {
  const std::uint8_t* p;
  std::size_t size, at = 0;
  bool ok = true;
  bool need(std::size_t n) {
    if (!ok || size - at < n) ok = false;
    return ok;
  }
  std::uint8_t u8() { return need(1) ? p[at++] : 0; }
  std::uint32_t u32() {
    if (!need(4)) return 0;
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= std::uint32_t(p[at++]) << (8 * i);
    return v;
  }
  std::uint64_t u64() {
    if (!need(8)) return 0;
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t(p[at++]) << (8 * i);
    return v;
  }
  float f32() {
    const std::uint32_t v = u32();
    float f;
    std::memcpy(&f, &v, 4);
    return f;
  }
};

inline std::uint32_t read_u32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}

inline std::string format_float(float x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", double(x));
  return buf;
}

// Asked before construction: a failed allocation inside it would abort the module.
inline bool heap_has_room(std::size_t bytes) {
  void* p = std::malloc(bytes);
  std::free(p);
  return p != nullptr;
}

}  // namespace file_io
}  // namespace headlab
