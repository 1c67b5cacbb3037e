// The model-file frame both saved formats use (trainer.cpp's .hlab, lm_file.cpp's .hlm;
// headlab/train/model_file.hpp draws it): a little-endian writer, a bounds-checked reader, the
// frame's start (magic, version, task name) and end (parameter count, parameters, CRC-32), its
// checks (CRC, parameters), "%g" text for messages, and a heap check asked before allocating a
// model. Private to cpp/src.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "headlab/train/model_file.hpp"
#include "headlab/train/optimizer.hpp"  // kMaxParam

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

// The frame's start: magic [4], u32 version, u8 name length, name.
inline void write_frame_start(Writer& w, const char* magic, std::uint32_t version, const char* name) {
  for (int i = 0; i < 4; ++i) w.u8(std::uint8_t(magic[i]));
  w.u32(version);
  const std::size_t len = std::strlen(name);
  w.u8(std::uint8_t(len));
  for (std::size_t i = 0; i < len; ++i) w.u8(std::uint8_t(name[i]));
}

// The frame's end: u32 P, f32 params [P], u32 CRC-32 of every byte before it.
inline void write_frame_end(Writer& w, const float* params, std::size_t count) {
  w.u32(std::uint32_t(count));
  for (std::size_t i = 0; i < count; ++i) w.f32(params[i]);
  w.u32(crc32(w.out.data(), w.out.size()));
}

// Whether the last 4 bytes are the CRC-32 of every byte before them.
inline bool frame_intact(const std::uint8_t* bytes, std::size_t size) {
  return size >= 12 && crc32(bytes, size - 4) == read_u32(bytes + size - 4);
}

// What a loader reports: `why` itself, or, when the checksum failed, damage with `why` as a hint.
inline std::string frame_problem(bool intact, const std::string& why) {
  if (intact) return why;
  return "the file is damaged (checksum mismatch" + (why.empty() ? std::string() : "; " + why) +
         ") — save it again or download it again";
}

// "" when each of the `count` parameters `in` reads next is finite with |w| <= kMaxParam,
// else which one is not.
inline std::string check_frame_params(Reader in, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const float w = in.f32();
    if (!std::isfinite(w)) return "parameter " + std::to_string(i) + " is not finite";
    if (!(std::fabs(w) <= kMaxParam))
      return "parameter " + std::to_string(i) + " is " + format_float(w) + ", beyond the ±1e4 no training produces";
  }
  return "";
}

}  // namespace file_io
}  // namespace headlab
