// libFuzzer target: the safetensors reader (pretrained_safetensors.hpp) and the
// checks of PretrainedModel::add_safetensors / finish must refuse any malformed
// file with an error that names the file (never crash, overflow, read outside
// the buffer or hang), and whatever they accept must run a forward pass with
// finite logits. The model is tiny (1 layer, d 4, 2 heads, d_ff 8, vocabulary 5,
// context 4) and GPT-2- or GPT-Neo-shaped by the input's first byte, so
// mutations of the seeds (tests/fuzz/corpus/safetensors/, written by
// tests/fuzz/make_safetensors_seeds.py) reach the tensor checks and the forward.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "headlab/pretrained.hpp"
#include "headlab/pretrained_safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const bool neo = data[0] & 1;
  const std::uint8_t* file = data + 1;
  const std::size_t bytes = size - 1;

  headlab::SafetensorsHeader header;
  const std::string parsed = headlab::parse_safetensors("f.safetensors", file, bytes, &header);
  if (!parsed.empty() && parsed.rfind("f.safetensors: ", 0) != 0) std::abort();
  for (const auto& t : header.tensors)
    if (t.end > bytes - header.data_start || t.begin > t.end) std::abort();

  headlab::PretrainedConfig c;
  c.architecture = neo ? headlab::PretrainedArch::gpt_neo : headlab::PretrainedArch::gpt2;
  c.num_layers = 1, c.num_heads = 2, c.d_model = 4, c.d_ff = 8, c.vocab = 5, c.context = 4;
  c.scale_scores = !neo;
  c.windows = {neo ? std::size_t{2} : std::size_t{0}};
  headlab::PretrainedModel m(c);
  std::uint8_t* buffer = m.alloc_file(bytes);
  if (!buffer) std::abort();
  std::memcpy(buffer, file, bytes);
  std::string error = m.add_safetensors("f.safetensors", buffer, bytes);
  if (!error.empty()) {
    if (error.rfind("f.safetensors: ", 0) != 0) std::abort();
    return 0;
  }
  error = m.finish();
  if (!error.empty()) return 0;
  const std::int32_t tokens[4] = {0, 4, 2, 4};
  headlab::PretrainedRunOptions o;
  o.attention = true, o.all_logits = true, o.lens = true, o.lens_top_k = 2;
  headlab::PretrainedRunResult r;
  if (!m.run(tokens, 4, o, &r).empty()) std::abort();
  // Finite weights with finite LayerNorm inputs may still overflow float32 in
  // a product; what must hold is that the numbers come out, sized as promised.
  if (r.logits.size() != 4 * 5 || r.attention.size() != 2 * 16 || r.lens_ids.size() != 4 * 2) std::abort();
  for (std::int32_t id : r.lens_ids)
    if (id < 0 || id >= 5) std::abort();
  return 0;
}
