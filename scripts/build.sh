#!/usr/bin/env bash
# Builds the WebAssembly module into web/lib/gen/ and the site into dist/.
#   scripts/build.sh         the module (what `npm run build` and `npm start` need)
#   scripts/build.sh test    plus the doctest suite, natively and as wasm
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian's emcc runs its acorn optimizer with node, which must find node-acorn.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
jobs=$(nproc 2>/dev/null || echo 2)

# configure DIR ARGS...: runs cmake's configure unless DIR holds a finished one. A configure
# that failed (say, a missing compiler) leaves CMakeCache.txt but no Makefile: that is redone.
configure() {
  local dir=$1
  shift
  if [ -f "$dir/CMakeCache.txt" ] && [ -f "$dir/Makefile" ]; then
    # A CMakeLists.txt newer than the Makefile may name targets the Makefile does not know yet
    # (make would stop at "No rule to make target"): regenerate with the cached settings.
    [ CMakeLists.txt -nt "$dir/Makefile" ] && cmake "$dir" >/dev/null
    return 0
  fi
  rm -rf "$dir"
  "$@" -B "$dir" >/dev/null
}

# The tokenizer library loadPretrained() imports, next to the wasm modules.
node scripts/vendor-tokenizers.mjs
# The types for TypeScript < 5.7 (web/lib/ts5.6/headlab.d.ts; npm pack writes them too).
node tools/types-compat.mjs >/dev/null

# The settings of each build are CMakePresets.json's (native, wasm, sanitize, fuzz).
configure build/wasm emcmake cmake --preset wasm
targets=(headlab_modules)
[ "${1:-}" = test ] && targets+=(headlab_tests)
cmake --build build/wasm -j"$jobs" --target "${targets[@]}"
echo "build: wasm (${targets[*]}) done at ${SECONDS} s"

# The demo site and embeddable components, self-contained, into dist/.
node scripts/bundle.mjs

if [ "${1:-}" = test ]; then
  configure build/native cmake --preset native
  cmake --build build/native -j"$jobs"
  echo "build: native done at ${SECONDS} s"

  # The same doctest suite under AddressSanitizer + UndefinedBehaviorSanitizer.
  configure build/sanitize cmake --preset sanitize
  cmake --build build/sanitize -j"$jobs" --target headlab_tests
  echo "build: sanitize done at ${SECONDS} s"

  # libFuzzer targets for the model-file parsers, the trainer's and the language model's, and
  # the safetensors reader of pretrained checkpoints (clang++ from Debian's clang package;
  # setup.sh installs it).
  configure build/fuzz cmake --preset fuzz
  cmake --build build/fuzz -j"$jobs" --target headlab_fuzz_load headlab_fuzz_load_lm headlab_fuzz_safetensors
  echo "build: fuzz done at ${SECONDS} s"
fi
