// Fused attention (attention_fused_ref / _simd / attention_fused), kept as an
// include path: it lives in headlab/kernels/attention.hpp.
#pragma once

#include "headlab/kernels.hpp"
