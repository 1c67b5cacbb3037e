// headlab_english_dump: N sequences of the small English (headlab/english.hpp)
// with their ground truth, for Python (bench/english/calibrate.py).
//
//   headlab_english_dump --seed S --count N --out PREFIX
//
// writes
//   PREFIX.json        {"seq_len", "start", "pad", "stop", "count", "arcs",
//                       "relations": [names by id], "classes": [names by id],
//                       "vocab": [{"text", "cat", "number", "gender", "cls",
//                                  "pair", "noun"}]}
//   PREFIX.tokens.bin  int32 little-endian [count, seq_len]
//   PREFIX.arcs.bin    int32 little-endian [arcs, 8]: sequence, relation,
//                      query, target, answer, foil, cls, attractor (0/1)
// Previous-token arcs are left out (query t, target t-1 for every t in
// 1..length-1; length is the first pad position or seq_len).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "headlab/english.hpp"

using namespace headlab;

namespace {

const char* category_name(EnCategory c) {
  static const char* const names[] = {"special",    "det",       "adj",     "very",    "noun",
                                      "first_name", "last_name", "pronoun", "be_past", "pred",
                                      "verb_pres",  "verb_past", "prep",    "that",    "conj",
                                      "opener",     "adverb",    "tail",    "outside", "off"};
  return names[int(c)];
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

int usage() {
  std::fprintf(stderr, "usage: headlab_english_dump --seed S --count N --out PREFIX\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t seed = 1;
  long count = 0;
  std::string out;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--seed"))
      seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--count"))
      count = std::strtol(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--out"))
      out = argv[i + 1];
    else
      return usage();
  }
  if (argc % 2 == 0 || count <= 0 || out.empty()) return usage();

  Rng rng(seed);
  std::vector<std::int32_t> tokens;
  std::vector<std::int32_t> arcs;
  tokens.reserve(std::size_t(count) * kEnglishSeqLen);
  EnSequence s;
  for (long n = 0; n < count; ++n) {
    generate_english(rng, s);
    tokens.insert(tokens.end(), s.tokens.begin(), s.tokens.end());
    for (const EnArc& a : s.arcs) {
      if (a.relation == EnRelation::previous_token) continue;
      const std::int32_t row[8] = {
          std::int32_t(n), std::int32_t(a.relation), a.query, a.target, a.answer, a.foil,
          a.cls,           a.attractor ? 1 : 0};
      arcs.insert(arcs.end(), row, row + 8);
    }
  }
  auto write = [](const std::string& path, const std::vector<std::int32_t>& v) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(v.data(), sizeof(std::int32_t), v.size(), f) != v.size()) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      std::exit(1);
    }
    std::fclose(f);
  };
  write(out + ".tokens.bin", tokens);
  write(out + ".arcs.bin", arcs);

  std::string j =
      "{\"seq_len\": " + std::to_string(kEnglishSeqLen) + ", \"start\": " + std::to_string(kEnglishStart) +
      ", \"pad\": " + std::to_string(kEnglishPad) + ", \"stop\": " + std::to_string(kEnglishStop) +
      ", \"seed\": " + std::to_string(seed) + ", \"count\": " + std::to_string(count) +
      ", \"arcs\": " + std::to_string(arcs.size() / 8) + ",\n \"relations\": [";
  for (std::size_t r = 0; r < kEnRelationCount; ++r)
    j += (r ? ", " : "") + json_string(english_relation_name(EnRelation(r)));
  j += "],\n \"classes\": [";
  for (int c = 0; c < kEnClassCount; ++c) j += (c ? ", " : "") + json_string(english_class_name(c));
  j += "],\n \"vocab\": [\n";
  for (std::size_t t = 0; t < english_vocab_size(); ++t) {
    const EnWord& w = english_word(std::int32_t(t));
    j += std::string(t ? ",\n" : "") + "  {\"text\": " + json_string(w.text) + ", \"cat\": \"" +
         category_name(w.cat) + "\", \"number\": " + std::to_string(w.number) +
         ", \"gender\": " + std::to_string(w.gender) + ", \"cls\": " + std::to_string(w.cls) +
         ", \"pair\": " + std::to_string(w.pair) +
         ", \"noun\": " + (english_is_noun(std::int32_t(t)) ? "true" : "false") + "}";
  }
  j += "\n]}\n";
  std::FILE* f = std::fopen((out + ".json").c_str(), "w");
  if (!f || std::fputs(j.c_str(), f) < 0) {
    std::fprintf(stderr, "cannot write %s.json\n", out.c_str());
    return 1;
  }
  std::fclose(f);
  std::printf("%ld sequences, %zu arcs -> %s.{json,tokens.bin,arcs.bin}\n", count, arcs.size() / 8,
              out.c_str());
  return 0;
}
