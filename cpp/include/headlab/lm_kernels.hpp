// The language model's kernels (LayerNorm, GELU, cross-entropy, embeddings),
// kept as an include path: they live in headlab/kernels/ by job.
#pragma once

#include "headlab/kernels.hpp"
