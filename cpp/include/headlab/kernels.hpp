// Every kernel: pure functions over raw pointers, no allocation, no I/O. Each
// has a scalar reference (`*_ref`, written for reading), an xsimd version
// (`*_simd`) that must agree with it, and a dispatch on Path beside them.
// One header per job, under headlab/kernels/; this one includes them all:
//   path.hpp         Path, which variant a dispatch runs
//   gemm.hpp         GEMM (trans_a / trans_b, packed, B packed ahead of time, shared A), transpose
//   elementwise.hpp  exp, exp2, add, scale, GELU (tanh, erf), SwiGLU, GeGLU, column sums
//   attention.hpp    softmax rows (forward, backward), fused attention
//   norm.hpp         LayerNorm, RMSNorm (w and 1 + w)
//   rotary.hpp       rotary position embedding: inverse frequencies (llama3 scaling), tables, apply
//   loss.hpp         cross-entropy rows, embeddings
//   optim.hpp        Adam and SGD updates
// Sources: cpp/src/kernels.cpp, lm_kernels.cpp, attention_fused.cpp, block_kernels.cpp.
#pragma once

#include "headlab/kernels/attention.hpp"
#include "headlab/kernels/elementwise.hpp"
#include "headlab/kernels/gemm.hpp"
#include "headlab/kernels/loss.hpp"
#include "headlab/kernels/norm.hpp"
#include "headlab/kernels/optim.hpp"
#include "headlab/kernels/path.hpp"
#include "headlab/kernels/rotary.hpp"
