#!/usr/bin/env bash
# Installs what `npm start` / `npm test` need and is missing: Debian packages
# (as root, through apt) and the npm dependencies (npm ci). Idempotent and quick
# when everything is present.
#   scripts/setup.sh build   packages to build the module
#   scripts/setup.sh test    plus what the tests need (chromium, firefox-esr, WebKit's
#                            WebDriver under xvfb, wabt, clang for the fuzzer)
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-build}
missing=()
need() {  # need PACKAGE PATH: the package provides PATH
  [ -e "$2" ] || missing+=("$1")
}
need emscripten /usr/bin/em++
need libxsimd-dev /usr/include/xsimd/xsimd.hpp
need doctest-dev /usr/include/doctest/doctest.h
need nlohmann-json3-dev /usr/include/nlohmann/json.hpp
if [ "$mode" = test ]; then
  need chromium /usr/bin/chromium
  need wabt /usr/bin/wasm-objdump
  need libclang-rt-14-dev /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a
  need clang /usr/bin/clang++
  need firefox-esr /usr/bin/firefox-esr
  need webkit2gtk-driver /usr/bin/WebKitWebDriver
  need xvfb /usr/bin/xvfb-run
fi

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q "${missing[@]}" >/dev/null
  else
    echo "setup: missing Debian packages: ${missing[*]} (run as root on Debian 12: apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi

# Debian's emscripten depends on a nodejs package; where node 20 came from outside apt, apt brings Debian's
# nodejs 18 too. Whichever node comes first on PATH must still be 20.16 or newer (playwright, the tests).
# 20.16: process.getBuiltinModule, through which the API reaches fs, os and worker_threads.
if ! node -e 'process.exit(typeof process.getBuiltinModule === "function" ? 0 : 1)'; then
  echo "setup: $(command -v node) is Node $(node --version); HeadLab needs Node 20.16 or newer first on PATH" \
    "(apt's nodejs, which emscripten pulls in, may have put an older one there)" >&2
  exit 1
fi

# npm ci when node_modules is absent or older than the lock file.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm dependencies (npm ci)"
  # puppeteer-core has no install script and never downloads a browser; this keeps any
  # puppeteer package from trying to (the tests drive Debian's firefox-esr).
  PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
fi
