// Softmax cross-entropy over vocabulary rows, and the token + position
// embeddings that start a language model (a gather and its scatter-add).
// Tests: tests/cpp/test_kernels_lm.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "headlab/kernels/path.hpp"

namespace headlab {

// Softmax cross-entropy over each row of logits [rows, vocab], in place:
// logits become probabilities. targets [rows]: the right token, or -1 for a
// row that carries no loss. loss[r] = -log p[r, target] (0 for ignored rows).
// dlogits [rows, vocab] (may alias logits): (p - onehot(target)) * grad_scale,
// all zero for ignored rows; null to skip. argmax [rows] (null to skip): the
// most probable token of each row. Returns the sum of loss[r] (in double).
struct CrossEntropyArgs {
  std::size_t rows, vocab;
  float* logits;
  const std::int32_t* targets;
  float* loss;
  float* dlogits;
  std::int32_t* argmax;
  float grad_scale;
};
double cross_entropy_rows_ref(const CrossEntropyArgs& a);
double cross_entropy_rows_simd(const CrossEntropyArgs& a);
double cross_entropy_rows(Path path, const CrossEntropyArgs& a);

// ------------------------------------------------------------ embeddings

// x[b*t_len + t, :] = tok_emb[tokens[b*t_len + t], :] + pos_emb[t, :]
// tokens [batch, t_len]; tok_emb [vocab, d]; pos_emb [>= t_len, d]; x [batch*t_len, d].
void embedding_forward_ref(const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                           const float* tok_emb, const float* pos_emb, float* x);
void embedding_forward_simd(const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                            const float* tok_emb, const float* pos_emb, float* x);
void embedding_forward(Path path, const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                       const float* tok_emb, const float* pos_emb, float* x);
// Scatter-add of dx [batch*t_len, d] into g_tok [vocab, d] and g_pos [t_len, d]
// (both overwritten: rows of tokens that do not occur become 0).
void embedding_backward_ref(const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                            std::size_t vocab, const float* dx, float* g_tok, float* g_pos);
void embedding_backward_simd(const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                             std::size_t vocab, const float* dx, float* g_tok, float* g_pos);
void embedding_backward(Path path, const std::int32_t* tokens, std::size_t batch, std::size_t t_len, std::size_t d,
                        std::size_t vocab, const float* dx, float* g_tok, float* g_pos);

}  // namespace headlab
