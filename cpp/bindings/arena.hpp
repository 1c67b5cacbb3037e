// Private to cpp/bindings: the grow-only buffers the Embind layers hand to
// JavaScript. JS lays its arrays out in one and passes addresses back.
#pragma once

#include <emscripten/heap.h>

#include <cstddef>
#include <cstdlib>

namespace headlab {
namespace bindings {

// `bytes` on a 16-byte (SIMD) boundary; nullptr when the heap cannot grow that far.
inline void* aligned_block(std::size_t bytes) { return std::aligned_alloc(16, (bytes + 15) & ~std::size_t{15}); }

// After warm-up, repeated calls of the same size allocate nothing.
struct Buffer {
  void* data = nullptr;
  std::size_t bytes = 0;

  // Returns nullptr when the heap cannot grow that far (the old buffer is kept).
  void* reserve(std::size_t want) {
    if (want <= bytes) return data;
    void* p = aligned_block(want);
    if (!p) return nullptr;
    std::free(data);
    data = p;
    bytes = want;
    return data;
  }
};

// The most the heap can grow to, as linked (-sMAXIMUM_MEMORY in CMakeLists.txt): the API reads
// it once at load to size its requests and to word its errors.
inline double heap_max() { return static_cast<double>(emscripten_get_heap_max()); }

}  // namespace bindings
}  // namespace headlab
