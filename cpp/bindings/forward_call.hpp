// Private to cpp/bindings: a forward call as JavaScript sends it (shape and the
// heap addresses of every array), shared by the single-threaded module
// (bindings.cpp registers these types) and the threaded one (parallel_bindings.cpp).
#pragma once

#include <cstdint>

#include "headlab/mha.hpp"

namespace headlab {
namespace bindings {

// Shape as JS sends it; d_k/d_v of 0 mean "default".
struct ShapeJs {
  double t_q = 0, t_k = 0, d_model = 0, num_heads = 0, d_k = 0, d_v = 0;
  bool causal = false;
};

// Addresses (byte offsets in the wasm heap) of every array; 0 = absent.
struct ForwardJs {
  ShapeJs shape;
  double query = 0, key = 0, value = 0, key_mask = 0, head_mask = 0;
  double w_q = 0, w_k = 0, w_v = 0, w_o = 0, b_q = 0, b_k = 0, b_v = 0, b_o = 0;
  double output = 0, weights = 0;
  double q = 0, k = 0, v = 0, scores = 0, scaled_scores = 0, head_outputs = 0, concat = 0;
};

// JS checks every dimension is a positive integer below 2^31 before calling.
inline MhaShape to_shape(const ShapeJs& s) {
  MhaShape m;
  m.t_q = static_cast<std::size_t>(s.t_q);
  m.t_k = static_cast<std::size_t>(s.t_k);
  m.d_model = static_cast<std::size_t>(s.d_model);
  m.num_heads = static_cast<std::size_t>(s.num_heads);
  m.d_k = static_cast<std::size_t>(s.d_k);
  m.d_v = static_cast<std::size_t>(s.d_v);
  m.causal = s.causal;
  return m;
}

template <class T>
T* at(double address) {
  return reinterpret_cast<T*>(static_cast<std::uintptr_t>(address));
}

inline bool output_only(const ForwardJs& f) {
  return f.weights == 0 && f.q == 0 && f.k == 0 && f.v == 0 && f.scores == 0 && f.scaled_scores == 0 &&
         f.head_outputs == 0 && f.concat == 0;
}

inline MhaInputs inputs_of(const ForwardJs& f) {
  MhaInputs in;
  in.query = at<const float>(f.query);
  in.key = at<const float>(f.key);
  in.value = at<const float>(f.value);
  in.key_mask = at<const std::uint8_t>(f.key_mask);
  in.head_mask = at<const std::uint8_t>(f.head_mask);
  return in;
}

inline MhaWeights weights_of(const ForwardJs& f) {
  MhaWeights w;
  w.w_q = at<const float>(f.w_q);
  w.w_k = at<const float>(f.w_k);
  w.w_v = at<const float>(f.w_v);
  w.w_o = at<const float>(f.w_o);
  w.b_q = at<const float>(f.b_q);
  w.b_k = at<const float>(f.b_k);
  w.b_v = at<const float>(f.b_v);
  w.b_o = at<const float>(f.b_o);
  return w;
}

inline MhaOutputs outputs_of(const ForwardJs& f) {
  MhaOutputs out;
  out.output = at<float>(f.output);
  out.weights = at<float>(f.weights);
  out.intermediates = {at<float>(f.q),      at<float>(f.k),
                       at<float>(f.v),      at<float>(f.scores),
                       at<float>(f.scaled_scores), at<float>(f.head_outputs),
                       at<float>(f.concat)};
  return out;
}

}  // namespace bindings
}  // namespace headlab
