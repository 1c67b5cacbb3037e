// The kernels and forward pass as they were before the performance work, in
// headlab::v0, for side-by-side timing only (bench/native/bench_kernels.cpp).
#pragma once

#include <cstddef>
#include <string>

#include "headlab/kernels.hpp"
#include "headlab/mha.hpp"

namespace headlab {
namespace v0 {

void gemm_ref(const GemmArgs& g);
void gemm_simd(const GemmArgs& g);
void transpose(std::size_t rows, std::size_t cols, const float* src, std::size_t lds, float* dst,
               std::size_t ldd);
void softmax_rows_ref(float* x, std::size_t rows, std::size_t cols, std::size_t ld);
void softmax_rows_simd(float* x, std::size_t rows, std::size_t cols, std::size_t ld);
void exp_ref(const float* x, float* y, std::size_t n);
void exp_simd(const float* x, float* y, std::size_t n);
void scale_ref(float* x, std::size_t n, float s);
void scale_simd(float* x, std::size_t n, float s);
std::string mha_resolve_shape(MhaShape& shape);
std::size_t mha_workspace_floats(const MhaShape& shape);
void mha_forward(const MhaShape& shape, const MhaInputs& in, const MhaWeights& w,
                 const MhaOutputs& out, float* workspace, Path path = Path::simd);
std::string parameter_count(std::size_t d_model, std::size_t num_heads, std::size_t d_k,
                            std::size_t d_v, bool bias, ParameterCount& count);

}  // namespace v0
}  // namespace headlab
