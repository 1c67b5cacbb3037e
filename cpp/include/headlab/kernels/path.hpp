// Path, shared by every kernel header under headlab/kernels/.
#pragma once

namespace headlab {

// Which variant of a kernel a call runs. Every kernel family (the headers
// under headlab/kernels/) ends with its dispatch functions, named as the
// family without a suffix (gemm, add, softmax_rows, ...), whose first
// argument is a Path: Path::simd calls the `_simd` kernel (xsimd; in the
// scalar wasm build the same code over one-lane batches, see
// cpp/src/simd.hpp), Path::ref the `_ref` kernel (scalar, written for
// reading). Models and passes call kernels only through these, so one Path
// chosen at the top (the tests run both) reaches every kernel.
enum class Path { ref, simd };

}  // namespace headlab
