// Reading the test fixtures under tests/golden/ (safetensors bytes, expected.json).
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace headlab::test {

// tests/golden/ (ending in '/'), from this header's own path: the tests run from any directory.
inline std::string golden() {
  const std::string f = __FILE__;
  return f.substr(0, f.rfind('/')) + "/../golden/";
}

// A file's bytes; a missing file fails the test naming its path.
inline std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), path);
  return {std::istreambuf_iterator<char>(in), {}};
}

inline nlohmann::json read_json(const std::string& path) {
  const auto b = read_bytes(path);
  return nlohmann::json::parse(b.begin(), b.end());
}

// The token ids a fixture case keeps under `key` (none when it has no such key).
inline std::vector<std::int32_t> ids_of(const nlohmann::json& c, const char* key) {
  return c.contains(key) ? c.at(key).get<std::vector<std::int32_t>>() : std::vector<std::int32_t>{};
}

}  // namespace headlab::test
