// Private to cpp/bindings: C++ arrays handed to JavaScript as copies made in one call, so
// JS never holds a view of the wasm heap (which a later allocation may move or detach).
#pragma once

#include <emscripten/val.h>

#include <cstddef>

namespace headlab {
namespace bindings {

// A typed array (Float32Array for float, Int32Array for int32_t, Uint8Array for uint8_t)
// holding a copy of p[0..n).
template <class T>
emscripten::val copy_of(const T* p, std::size_t n) {
  return emscripten::val(emscripten::typed_memory_view(n, p)).call<emscripten::val>("slice");
}

// A plain number[] holding a copy of p[0..n).
template <class T>
emscripten::val list_of(const T* p, std::size_t n) {
  return emscripten::val::global("Array").call<emscripten::val>("from", emscripten::val(emscripten::typed_memory_view(n, p)));
}

// A string[] of the C strings names[0..n) (strings cannot come over as one typed array).
inline emscripten::val string_list(const char* const* names, std::size_t n) {
  emscripten::val a = emscripten::val::array();
  for (std::size_t i = 0; i < n; ++i) a.set(i, emscripten::val(names[i]));
  return a;
}

}  // namespace bindings
}  // namespace headlab
