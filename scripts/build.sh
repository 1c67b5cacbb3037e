#!/usr/bin/env bash
# Builds the WebAssembly module into web/lib/gen/ and the site into dist/.
#   scripts/build.sh         the module (what `npm run build` and `npm start` need)
#   scripts/build.sh test    plus the doctest suite, natively and as wasm
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian's emcc runs its acorn optimizer with node, which must find node-acorn.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
jobs=$(nproc 2>/dev/null || echo 2)

if [ ! -f build/wasm/CMakeCache.txt ]; then
  emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
targets=(headlab_modules)
[ "${1:-}" = test ] && targets+=(headlab_tests)
cmake --build build/wasm -j"$jobs" --target "${targets[@]}"

# The demo site and embeddable components, self-contained, into dist/.
node scripts/bundle.mjs

if [ "${1:-}" = test ]; then
  if [ ! -f build/native/CMakeCache.txt ]; then
    cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  cmake --build build/native -j"$jobs"

  # The same doctest suite under AddressSanitizer + UndefinedBehaviorSanitizer.
  if [ ! -f build/sanitize/CMakeCache.txt ]; then
    cmake -S . -B build/sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHEADLAB_SANITIZE=ON >/dev/null
  fi
  cmake --build build/sanitize -j"$jobs" --target headlab_tests

  # libFuzzer target for the model-file parser (needs clang, which emscripten brings).
  if [ ! -f build/fuzz/CMakeCache.txt ]; then
    cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DHEADLAB_FUZZ=ON >/dev/null
  fi
  cmake --build build/fuzz -j"$jobs" --target headlab_fuzz_load
fi
