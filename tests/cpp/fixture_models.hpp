// Loading the PyTorch-made checkpoints under tests/golden/ (pretrained/, families/) as the
// JavaScript API does: config.json read into a PretrainedConfig, then every safetensors file.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "fixture_files.hpp"
#include "headlab/pretrained.hpp"

namespace headlab::test {

using nlohmann::json;

// config.json -> PretrainedConfig, as the JavaScript API reads it.
inline PretrainedConfig gpt_config_of(const json& j) {
  PretrainedConfig c;
  const bool neo = j.at("model_type") == "gpt_neo";
  c.architecture = neo ? PretrainedArch::gpt_neo : PretrainedArch::gpt2;
  if (!neo) {
    c.num_layers = j.at("n_layer"), c.num_heads = j.at("n_head"), c.d_model = j.at("n_embd");
    c.d_ff = j.at("n_inner").is_null() ? 4 * c.d_model : std::size_t(j.at("n_inner"));
    c.context = j.at("n_positions");
    c.scale_scores = true;
    c.windows.assign(c.num_layers, 0);
  } else {
    c.num_layers = j.at("num_layers"), c.num_heads = j.at("num_heads"), c.d_model = j.at("hidden_size");
    c.d_ff = j.at("intermediate_size").is_null() ? 4 * c.d_model : std::size_t(j.at("intermediate_size"));
    c.context = j.at("max_position_embeddings");
    c.scale_scores = false;
    for (const json& group : j.at("attention_types"))
      for (int r = 0; r < int(group[1]); ++r)
        for (const json& kind : group[0])
          c.windows.push_back(kind == "local" ? std::size_t(j.at("window_size")) : 0);
  }
  c.vocab = j.at("vocab_size");
  c.ln_eps = j.at("layer_norm_epsilon");
  const std::string t = j.value("torch_dtype", "");
  c.dtype = t == "float32" ? "F32" : t == "float16" ? "F16" : t == "bfloat16" ? "BF16" : "";
  return c;
}

// config.json -> PretrainedConfig, written from Hugging Face's config classes (as the
// JavaScript reader in web/lib/api/pretrained-config.js does).
inline PretrainedConfig encoder_config_of(const json& j) {
  PretrainedConfig c;
  const std::string a = j.at("architectures")[0];
  const bool distil = a == "DistilBertForMaskedLM";
  c.architecture = a == "BertForMaskedLM" ? PretrainedArch::bert
                   : a == "BertModel"     ? PretrainedArch::bert_model
                   : distil               ? PretrainedArch::distilbert
                                          : PretrainedArch::roberta;
  c.num_layers = j.at(distil ? "n_layers" : "num_hidden_layers");
  c.num_heads = j.at(distil ? "n_heads" : "num_attention_heads");
  c.d_model = j.at(distil ? "dim" : "hidden_size");
  c.d_ff = j.at(distil ? "hidden_dim" : "intermediate_size");
  c.vocab = j.at("vocab_size");
  // RoBERTa's positions start at padding_idx + 1, so its table has that many rows more.
  c.position_offset = a == "RobertaForMaskedLM" ? std::size_t(j.at("pad_token_id")) + 1 : 0;
  c.context = std::size_t(j.at("max_position_embeddings")) - c.position_offset;
  c.type_vocab = distil ? 0 : std::size_t(j.at("type_vocab_size"));
  c.ln_eps = distil ? 1e-12f : float(j.at("layer_norm_eps"));  // DistilBERT's is fixed in its code
  c.windows.assign(c.num_layers, 0);
  const std::string t = j.value("torch_dtype", "");
  c.dtype = t == "float32" ? "F32" : t == "float16" ? "F16" : t == "bfloat16" ? "BF16" : "";
  return c;
}

inline PretrainedConfig config_of(const json& j) {
  if (j.value("model_type", "") == "gpt2" || j.value("model_type", "") == "gpt_neo") return gpt_config_of(j);
  PretrainedConfig c;
  const std::string a = j.at("architectures")[0];
  if (a.find("ForMaskedLM") != std::string::npos || a == "BertModel") return encoder_config_of(j);
  const bool neox = a == "GPTNeoXForCausalLM";
  c.architecture = a == "LlamaForCausalLM"     ? PretrainedArch::llama
                   : a == "Qwen2ForCausalLM"   ? PretrainedArch::qwen2
                   : a == "MistralForCausalLM" ? PretrainedArch::mistral
                   : neox                      ? PretrainedArch::gpt_neox
                   : a == "Phi3ForCausalLM"    ? PretrainedArch::phi3
                                               : PretrainedArch::gemma;
  c.num_layers = j.at("num_hidden_layers"), c.num_heads = j.at("num_attention_heads");
  c.d_model = j.at("hidden_size"), c.d_ff = j.at("intermediate_size"), c.vocab = j.at("vocab_size");
  c.context = j.at("max_position_embeddings");
  c.num_kv_heads = j.value("num_key_value_heads", std::size_t(0));
  c.head_dim = j.contains("head_dim") && !j.at("head_dim").is_null() ? std::size_t(j.at("head_dim")) : 0;
  c.ln_eps = neox ? float(j.at("layer_norm_eps")) : float(j.at("rms_norm_eps"));
  c.rope_theta = neox ? double(j.at("rotary_emb_base")) : double(j.at("rope_theta"));
  c.rotary_fraction = neox ? double(j.at("rotary_pct")) : 1.0;
  if (j.contains("rope_scaling") && !j.at("rope_scaling").is_null()) {
    const json& s = j.at("rope_scaling");
    REQUIRE(s.at("rope_type") == "llama3");
    c.rope_factor = s.at("factor"), c.rope_low_freq_factor = s.at("low_freq_factor");
    c.rope_high_freq_factor = s.at("high_freq_factor");
    c.rope_original_context = s.at("original_max_position_embeddings");
  }
  c.attention_bias = a == "LlamaForCausalLM" && j.value("attention_bias", false);
  c.mlp_bias = a == "LlamaForCausalLM" && j.value("mlp_bias", false);
  c.tie_embeddings = j.value("tie_word_embeddings", a == "GemmaForCausalLM");
  // Mistral and Phi-3 window every layer; Qwen2 only with use_sliding_window (false here).
  std::size_t w = 0;
  if ((a == "MistralForCausalLM" || a == "Phi3ForCausalLM") && j.contains("sliding_window") &&
      !j.at("sliding_window").is_null())
    w = j.at("sliding_window");
  if (a == "Qwen2ForCausalLM") REQUIRE(j.value("use_sliding_window", false) == false);
  c.windows.assign(c.num_layers, w);
  const std::string t = j.value("torch_dtype", "");
  c.dtype = t == "float32" ? "F32" : t == "float16" ? "F16" : t == "bfloat16" ? "BF16" : "";
  return c;
}

inline std::vector<std::string> weight_files(const std::string& dir) {
  std::ifstream index(dir + "model.safetensors.index.json");
  if (!index.good()) return {"model.safetensors"};
  std::set<std::string> files;
  const json index_json = read_json(dir + "model.safetensors.index.json");
  for (const auto& [name, file] : index_json.at("weight_map").items()) files.insert(file.get<std::string>());
  return {files.begin(), files.end()};
}

inline std::string add(PretrainedModel& m, const std::string& name, const std::vector<std::uint8_t>& bytes) {
  std::uint8_t* p = m.alloc_file(bytes.size());
  REQUIRE(p != nullptr);
  std::memcpy(p, bytes.data(), bytes.size());
  return m.add_safetensors(name, p, bytes.size());
}

// The checkpoint in folder dir (ending in '/'), finished.
inline std::unique_ptr<PretrainedModel> load_model(const std::string& dir) {
  auto m = std::make_unique<PretrainedModel>(config_of(read_json(dir + "config.json")));
  REQUIRE(pretrained_config_error(m->config()) == "");
  for (const std::string& f : weight_files(dir)) REQUIRE(add(*m, f, read_bytes(dir + f)) == "");
  REQUIRE(m->finish() == "");
  return m;
}

// The largest |x|: the scale a case's error is measured against.
inline double largest(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

inline double max_abs(const std::vector<float>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return INFINITY;
  double m = 0;
  for (std::size_t i = 0; i < want.size(); ++i) m = std::max(m, std::abs(double(got[i]) - want[i]));
  return m;
}

}  // namespace headlab::test
