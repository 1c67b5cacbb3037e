#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "headlab/pretrained_safetensors.hpp"

namespace headlab {

namespace {

using nlohmann::json;

// Element sizes of the dtypes the format defines.
std::size_t element_bytes(const std::string& dtype) {
  static const struct {
    const char* name;
    std::size_t bytes;
  } kTypes[] = {{"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1},
                {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
                {"U32", 4},  {"F32", 4}, {"I64", 8}, {"U64", 8},     {"F64", 8}};
  for (const auto& t : kTypes)
    if (dtype == t.name) return t.bytes;
  return 0;
}

std::string show(const json& j) {
  std::string s = j.dump(-1, ' ', true, json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

bool as_u64(const json& j, std::uint64_t* out) {
  if (!j.is_number_unsigned()) return false;
  *out = j.get<std::uint64_t>();
  return true;
}

}  // namespace

std::string parse_safetensors(const std::string& file, const std::uint8_t* bytes, std::size_t size,
                              SafetensorsHeader* out) {
  const std::string at = file + ": ";
  if (size < 8)
    return at + "truncated: " + std::to_string(size) + " bytes, shorter than the 8-byte header length";
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[i];
  if (n > size - 8)
    return at + "header length " + std::to_string(n) + " runs past the end of the file (" +
           std::to_string(size) + " bytes): the file is truncated or not safetensors";
  const char* first = reinterpret_cast<const char*>(bytes + 8);
  const json header = json::parse(first, first + n, nullptr, false);
  if (header.is_discarded()) return at + "header is not valid JSON";
  if (!header.is_object()) return at + "header is not a JSON object";
  const std::uint64_t data_bytes = size - 8 - n;
  SafetensorsHeader h;
  h.data_start = 8 + n;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    if (name == "__metadata__") continue;
    const std::string where = at + name + ": ";
    const json& e = it.value();
    if (!e.is_object()) return where + "entry is not an object";
    SafetensorsEntry t;
    t.name = name;
    const auto dtype = e.find("dtype");
    if (dtype == e.end() || !dtype->is_string()) return where + "dtype missing or not a string";
    t.dtype = dtype->get<std::string>();
    t.element_bytes = element_bytes(t.dtype);
    if (!t.element_bytes) return where + "unknown dtype " + show(*dtype);
    const auto shape = e.find("shape");
    if (shape == e.end() || !shape->is_array()) return where + "shape missing or not an array";
    std::uint64_t count = 1;
    bool overflow = false;
    for (const json& d : *shape) {
      std::uint64_t v = 0;
      if (!as_u64(d, &v)) return where + "shape " + show(*shape) + " holds something other than sizes";
      if (v != 0 && count > UINT64_MAX / v) overflow = true;
      count *= v;
      t.shape.push_back(v);
    }
    const auto offsets = e.find("data_offsets");
    if (offsets == e.end() || !offsets->is_array() || offsets->size() != 2 ||
        !as_u64((*offsets)[0], &t.begin) || !as_u64((*offsets)[1], &t.end))
      return where + "data_offsets missing or not [begin, end]";
    if (t.begin > t.end) return where + "data_offsets " + show(*offsets) + " end before begin";
    if (t.end > data_bytes)
      return where + "data_offsets " + show(*offsets) + " beyond the data (" + std::to_string(data_bytes) +
             " bytes): the file is truncated or the offsets are wrong";
    if (overflow || count > UINT64_MAX / t.element_bytes || count * t.element_bytes != t.end - t.begin)
      return where + "data_offsets " + show(*offsets) + " hold " + std::to_string(t.end - t.begin) +
             " bytes, but shape " + show(*shape) + " of " + t.dtype + " needs " +
             (overflow ? std::string("more than 2^64") : std::to_string(count * t.element_bytes));
    h.tensors.push_back(std::move(t));
  }
  std::vector<const SafetensorsEntry*> order;
  for (const auto& t : h.tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const SafetensorsEntry* a, const SafetensorsEntry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  for (std::size_t i = 1; i < order.size(); ++i)
    if (order[i]->begin < order[i - 1]->end)
      return at + order[i]->name + ": data_offsets [" + std::to_string(order[i]->begin) + ", " +
             std::to_string(order[i]->end) + "] overlap " + order[i - 1]->name + "'s [" +
             std::to_string(order[i - 1]->begin) + ", " + std::to_string(order[i - 1]->end) + "]";
  *out = std::move(h);
  return "";
}

}  // namespace headlab
