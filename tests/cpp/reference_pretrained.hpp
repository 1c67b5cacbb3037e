// Double-precision reference for pretrained GPT-2 / GPT-Neo checkpoints, written
// from the Hugging Face definitions (modeling_gpt2.py, modeling_gpt_neo.py) and
// independent of cpp/src/pretrained: it reads tensors by their Hugging Face names
// and layouts (Conv1D [in, out], nn.Linear [out, in]). Plus a safetensors writer
// and exact float16/bfloat16 encoders for values that fit, for building test files.
#pragma once

#include <cmath>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace headlab::test {

struct RefTensor {
  std::vector<std::uint64_t> shape;
  std::vector<double> v;  // values exactly representable in the stored dtype
};
using RefWeights = std::map<std::string, RefTensor>;  // names without the transformer. prefix

struct RefConfig {
  bool neo = false;
  std::size_t layers = 2, heads = 2, d = 8, ff = 32, vocab = 11, context = 16;
  double eps = 1e-5;
  std::vector<std::size_t> windows;  // per layer, 0 = global
};

// Random weights with the Hugging Face names and shapes of `c`; every value has
// at most 8 significant bits and magnitude 0 or >= 2^-12, so float16 and
// bfloat16 hold it exactly.
inline RefWeights random_weights(const RefConfig& c, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> k(-255, 255);
  RefWeights w;
  auto put = [&](const std::string& name, std::vector<std::uint64_t> shape, double scale, double offset = 0) {
    RefTensor t;
    t.shape = shape;
    std::size_t n = 1;
    for (auto s : shape) n *= s;
    t.v.resize(n);
    for (auto& x : t.v) {
      // Cut to bfloat16's 8 significant bits, which float16 holds too.
      float f = float(offset + k(rng) / 256.0 * scale);
      std::uint32_t b;
      std::memcpy(&b, &f, 4);
      b &= 0xffff0000u;
      std::memcpy(&f, &b, 4);
      x = f;
    }
    w[name] = t;
  };
  const std::uint64_t d = c.d, f = c.ff;
  put("wte.weight", {c.vocab, d}, 1.0);
  put("wpe.weight", {c.context, d}, 0.5);
  put("ln_f.weight", {d}, 0.25, 1.0);
  put("ln_f.bias", {d}, 0.25);
  for (std::size_t l = 0; l < c.layers; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    put(h + "ln_1.weight", {d}, 0.25, 1.0);
    put(h + "ln_1.bias", {d}, 0.25);
    put(h + "ln_2.weight", {d}, 0.25, 1.0);
    put(h + "ln_2.bias", {d}, 0.25);
    put(h + "mlp.c_fc.bias", {f}, 0.25);
    put(h + "mlp.c_proj.bias", {d}, 0.25);
    if (!c.neo) {
      put(h + "attn.c_attn.weight", {d, 3 * d}, 1.0);
      put(h + "attn.c_attn.bias", {3 * d}, 0.25);
      put(h + "attn.c_proj.weight", {d, d}, 0.5);
      put(h + "attn.c_proj.bias", {d}, 0.25);
      put(h + "mlp.c_fc.weight", {d, f}, 0.5);
      put(h + "mlp.c_proj.weight", {f, d}, 0.25);
    } else {
      const std::string a = h + "attn.attention.";
      put(a + "q_proj.weight", {d, d}, 0.5);
      put(a + "k_proj.weight", {d, d}, 0.5);
      put(a + "v_proj.weight", {d, d}, 0.5);
      put(a + "out_proj.weight", {d, d}, 0.5);
      put(a + "out_proj.bias", {d}, 0.25);
      put(h + "mlp.c_fc.weight", {f, d}, 0.5);
      put(h + "mlp.c_proj.weight", {d, f}, 0.25);
    }
  }
  return w;
}

struct RefOutput {
  std::vector<double> logits;     // [T, V]
  std::vector<double> attention;  // [L, H, T, T]
  std::vector<double> lens;       // [L, T, V]
};

// ablate: [L * H] (1 = off) or empty.
inline RefOutput reference_forward(const RefConfig& c, const RefWeights& w, const std::vector<std::int32_t>& ids,
                                   const std::vector<std::uint8_t>& ablate = {}) {
  const std::size_t T = ids.size(), d = c.d, H = c.heads, dk = d / H, V = c.vocab, F = c.ff;
  auto W = [&](const std::string& n) -> const std::vector<double>& { return w.at(n).v; };
  auto layernorm = [&](const std::vector<double>& x, const std::string& p) {
    std::vector<double> y(x.size());
    for (std::size_t t = 0; t < T; ++t) {
      double m = 0, var = 0;
      for (std::size_t i = 0; i < d; ++i) m += x[t * d + i];
      m /= double(d);
      for (std::size_t i = 0; i < d; ++i) var += (x[t * d + i] - m) * (x[t * d + i] - m);
      var /= double(d);
      for (std::size_t i = 0; i < d; ++i)
        y[t * d + i] = (x[t * d + i] - m) / std::sqrt(var + c.eps) * W(p + ".weight")[i] + W(p + ".bias")[i];
    }
    return y;
  };
  // y[T, out] = x[T, in] . weight (+ bias); Conv1D stores [in, out], nn.Linear [out, in].
  auto dense = [&](const std::vector<double>& x, std::size_t in, std::size_t out, const std::string& weight,
                   const std::string& bias, bool linear) {
    std::vector<double> y(T * out, 0.0);
    const auto& m = W(weight);
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t o = 0; o < out; ++o) {
        double s = bias.empty() ? 0.0 : W(bias)[o];
        for (std::size_t i = 0; i < in; ++i) s += x[t * in + i] * (linear ? m[o * in + i] : m[i * out + o]);
        y[t * out + o] = s;
      }
    return y;
  };
  RefOutput out;
  out.attention.assign(c.layers * H * T * T, 0.0);
  std::vector<double> x(T * d);
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t i = 0; i < d; ++i) x[t * d + i] = W("wte.weight")[ids[t] * d + i] + W("wpe.weight")[t * d + i];
  auto unembed = [&](const std::vector<double>& h) {
    const std::vector<double> y = layernorm(h, "ln_f");
    std::vector<double> logits(T * V);
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t v = 0; v < V; ++v) {
        double s = 0;
        for (std::size_t i = 0; i < d; ++i) s += y[t * d + i] * W("wte.weight")[v * d + i];
        logits[t * V + v] = s;
      }
    return logits;
  };
  for (std::size_t l = 0; l < c.layers; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    const std::vector<double> a = layernorm(x, h + "ln_1");
    std::vector<double> q, k, v;
    std::string o_w, o_b;
    if (!c.neo) {
      const std::vector<double> qkv = dense(a, d, 3 * d, h + "attn.c_attn.weight", h + "attn.c_attn.bias", false);
      q.resize(T * d), k.resize(T * d), v.resize(T * d);
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < d; ++i) {
          q[t * d + i] = qkv[t * 3 * d + i];
          k[t * d + i] = qkv[t * 3 * d + d + i];
          v[t * d + i] = qkv[t * 3 * d + 2 * d + i];
        }
      o_w = h + "attn.c_proj.weight", o_b = h + "attn.c_proj.bias";
    } else {
      const std::string p = h + "attn.attention.";
      q = dense(a, d, d, p + "q_proj.weight", "", true);
      k = dense(a, d, d, p + "k_proj.weight", "", true);
      v = dense(a, d, d, p + "v_proj.weight", "", true);
      o_w = p + "out_proj.weight", o_b = p + "out_proj.bias";
    }
    const double scale = c.neo ? 1.0 : 1.0 / std::sqrt(double(dk));
    const std::size_t win = c.windows.empty() ? 0 : c.windows[l];
    std::vector<double> heads(T * d, 0.0);
    for (std::size_t hh = 0; hh < H; ++hh) {
      for (std::size_t i = 0; i < T; ++i) {
        std::vector<double> s(T, 0.0);
        double m = -1e300;
        for (std::size_t j = 0; j <= i; ++j) {
          if (win && i >= win && j <= i - win) continue;
          double dot = 0;
          for (std::size_t e = 0; e < dk; ++e) dot += q[i * d + hh * dk + e] * k[j * d + hh * dk + e];
          s[j] = dot * scale;
          m = std::max(m, s[j]);
        }
        double z = 0;
        for (std::size_t j = 0; j <= i; ++j) {
          if (win && i >= win && j <= i - win) { s[j] = 0; continue; }
          s[j] = std::exp(s[j] - m);
          z += s[j];
        }
        for (std::size_t j = 0; j <= i; ++j) out.attention[((l * H + hh) * T + i) * T + j] = s[j] / z;
        if (!ablate.empty() && ablate[l * H + hh]) continue;
        for (std::size_t e = 0; e < dk; ++e) {
          double acc = 0;
          for (std::size_t j = 0; j <= i; ++j) acc += s[j] / z * v[j * d + hh * dk + e];
          heads[i * d + hh * dk + e] = acc;
        }
      }
    }
    const std::vector<double> o = dense(heads, d, d, o_w, o_b, c.neo);
    for (std::size_t i = 0; i < T * d; ++i) x[i] += o[i];
    const std::vector<double> b = layernorm(x, h + "ln_2");
    std::vector<double> fc = dense(b, d, F, h + "mlp.c_fc.weight", h + "mlp.c_fc.bias", c.neo);
    const double k0 = std::sqrt(2.0 / 3.14159265358979323846);
    for (double& e : fc) e = 0.5 * e * (1.0 + std::tanh(k0 * (e + 0.044715 * e * e * e)));
    const std::vector<double> pr = dense(fc, F, d, h + "mlp.c_proj.weight", h + "mlp.c_proj.bias", c.neo);
    for (std::size_t i = 0; i < T * d; ++i) x[i] += pr[i];
    const std::vector<double> lens = unembed(x);
    out.lens.insert(out.lens.end(), lens.begin(), lens.end());
  }
  out.logits = unembed(x);
  return out;
}

// float16 / bfloat16 bit patterns of a value they hold exactly (normal or zero).
inline std::uint16_t exact_bf16(double x) {
  const float f = float(x);
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return std::uint16_t(b >> 16);
}
inline std::uint16_t exact_f16(double x) {
  const float f = float(x);
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  const std::uint32_t sign = (b >> 16) & 0x8000u;
  if ((b & 0x7fffffffu) == 0) return std::uint16_t(sign);
  const int exp = int((b >> 23) & 0xff) - 127 + 15;
  return std::uint16_t(sign | (std::uint32_t(exp) << 10) | ((b >> 13) & 0x3ffu));
}

struct FileTensor {
  std::string name, dtype;  // dtype as written in the header
  std::vector<std::uint64_t> shape;
  std::vector<std::uint8_t> bytes;
};

inline FileTensor encode(const std::string& name, const RefTensor& t, const std::string& dtype) {
  FileTensor f{name, dtype, t.shape, {}};
  for (double x : t.v) {
    if (dtype == "F32") {
      const float v = float(x);
      const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
      f.bytes.insert(f.bytes.end(), p, p + 4);
    } else {
      const std::uint16_t h = dtype == "F16" ? exact_f16(x) : exact_bf16(x);
      f.bytes.push_back(std::uint8_t(h & 0xff));
      f.bytes.push_back(std::uint8_t(h >> 8));
    }
  }
  return f;
}

// A safetensors file: header padded with spaces to a multiple of 8 (pad = false: not padded).
inline std::vector<std::uint8_t> write_safetensors(const std::vector<FileTensor>& tensors, bool pad = true) {
  std::string h = "{\"__metadata__\":{\"format\":\"pt\"}";
  std::uint64_t offset = 0;
  for (const FileTensor& t : tensors) {
    h += ",\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[";
    for (std::size_t i = 0; i < t.shape.size(); ++i) h += (i ? "," : "") + std::to_string(t.shape[i]);
    h += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + t.bytes.size()) + "]}";
    offset += t.bytes.size();
  }
  h += "}";
  while (pad && h.size() % 8) h += ' ';
  std::vector<std::uint8_t> file(8 + h.size() + offset);
  const std::uint64_t n = h.size();
  for (std::size_t i = 0; i < 8; ++i) file[i] = std::uint8_t(n >> (8 * i));
  std::copy(h.begin(), h.end(), file.begin() + 8);
  std::size_t at = 8 + h.size();
  for (const FileTensor& t : tensors) {
    std::copy(t.bytes.begin(), t.bytes.end(), file.begin() + std::ptrdiff_t(at));
    at += t.bytes.size();
  }
  return file;
}

}  // namespace headlab::test
