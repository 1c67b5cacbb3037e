#include "headlab/lm_tasks.hpp"

#include <algorithm>
#include <vector>

namespace headlab {

namespace {

// ---- induction: 32 random tokens, then the start token.
const char* const kInductionNames[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k",
                                       "l", "m", "n", "o", "p", "q", "r", "s", "t", "u", "v",
                                       "w", "x", "y", "z", "0", "1", "2", "3", "4", "5", "<s>"};
constexpr std::int32_t kInductionTokens = 32, kInductionStart = 32;
constexpr std::size_t kInductionLen = 24, kSegMin = 4, kSegMax = 10;

// ---- cricket. Grammar (one sentence per sequence, after the start token):
//   S      = [OPENER] [PREP the N2] PLAYER [ADV] VERB the N1 [PREP the N2] [FILL]
//            because it was ADJ(N1) .
//   OPENER = now | and then
// with at most one "PREP the N2" (the distractor, N2 != N1), then padding.
// "it" is N1, the object of the verb; ADJ(N1) is one of N1's adjectives.
const char* const kCricketNames[] = {
    "<s>",     "<pad>",   ".",                   // 0..2
    "virat",   "rohit",   "smith",   "root",     // 3..6 players
    "quickly", "calmly",                         // 7..8 adverbs
    "hit",     "watched", "checked", "grabbed",  // 9..12 verbs
    "the",                                       // 13
    "ball",    "bat",     "pitch",   "glove",    // 14..17 nouns
    "with",    "near",    "past",    "on",       // 18..21 prepositions
    "again",   "today",                          // 22..23 fillers
    "because", "it",      "was",                 // 24..26
    "full",    "short",   "wide",                // 27..29 ball
    "heavy",   "light",   "broken",              // 30..32 bat
    "dry",     "green",   "flat",                // 33..35 pitch
    "torn",    "wet",     "tight",               // 36..38 glove
    "now",     "and",     "then",                // 39..41 openers
};
constexpr std::int32_t kCStart = 0, kCPad = 1, kCStop = 2, kPlayers = 3, kNumPlayers = 4, kAdverbs = 7,
                       kNumAdverbs = 2, kVerbs = 9, kNumVerbs = 4, kThe = 13, kNouns = 14, kNumNouns = 4,
                       kPreps = 18, kNumPreps = 4, kFills = 22, kNumFills = 2, kBecause = 24, kIt = 25,
                       kWas = 26, kAdjectives = 27, kAdjPerNoun = 3, kNow = 39, kAnd = 40, kThen = 41;
constexpr std::size_t kCricketVocab = sizeof(kCricketNames) / sizeof(kCricketNames[0]);
constexpr std::size_t kCricketLen = 18;  // start token + longest sentence (16 words with the stop)

// The english vocabulary as C strings, for the table's token_names (the
// lexicon english.cpp builds once lives as long as the program).
const char* const* english_names() {
  static const std::vector<const char*> names = [] {
    std::vector<const char*> v;
    for (std::size_t i = 0; i < english_vocab_size(); ++i) v.push_back(english_word(std::int32_t(i)).text.c_str());
    return v;
  }();
  return names.data();
}

// Built on first use: the english row's vocabulary size is the lexicon's.
const std::vector<LmTaskSpec>& lm_tasks() {
  static const std::vector<LmTaskSpec> tasks = {
    {"induction", LmTaskKind::induction, kInductionTokens + 1, kInductionLen, kInductionNames,
     kInductionStart, -1, "next-token accuracy on the repeated segment's second copy",
     "A start token, then 23 random tokens in which a segment of 4-10 distinct tokens is repeated right "
     "after "
     "itself at a random offset. Loss on every next token.",
     {2, 4, 32, false, 1e-2f, 64, 3000, 1000, 0.8f, 0.95f, 4}},
    {"cricket", LmTaskKind::cricket, kCricketVocab, kCricketLen, kCricketNames, kCStart, kCPad,
     "the adjective predicted after 'it was' belongs to the noun 'it' refers to",
     "Toy cricket commentary such as 'virat hit the ball because it was full'. 'it' is the object of the "
     "verb; a distractor noun ('with the bat') comes before the player or after the object in most "
     "sentences; an optional opener ('now', 'and then') shifts positions; each noun has its own "
     "adjectives. Loss on every next token up to the full stop.",
     {2, 4, 32, false, 1e-2f, 64, 2000, 1000, 0.9f, 0.95f, 2}},
    {"english", LmTaskKind::english, english_vocab_size(), kEnglishSeqLen, english_names(), kEnglishStart,
     kEnglishPad,
     "at the token before a present-tense verb, the verb form that agrees with the subject is more probable "
     "than the other form",
     "A small English with a grammar, e.g. 'the keys to the old cabinet are on the table', 'the dog that "
     "the girls chase runs home', 'the king met the girls and they were happy', 'anna berg met tom lind . "
     "later anna berg smiled'. Every sentence's relations are known: subject-verb agreement across "
     "attractors (syntax), verbs that select their objects (semantics), pronouns and their antecedents "
     "(entities), repeated names (induction), the previous word (local context). Loss on every next token "
     "up to the padding.",
     // bench/english/calibration.md: 3 layers x 4 heads, d_model 64, MLP, Adam 3e-3 (beta1 0.9,
     // beta2 0.999, 100 warmup steps), batch 64, 5000 steps met every threshold on all five seeds
     // natively (2 layers x 3000 steps: 3 of 5). Seed 1 is the one shipped, checked in WebAssembly.
     {3, 4, 64, true, 3e-3f, 64, 5000, 100, 0.9f, 0.999f, 1}},
  };
  return tasks;
}

// Shuffles a prefix: a[0..k) becomes k distinct draws from a[0..n).
void partial_shuffle(Rng& rng, std::int32_t* a, std::size_t n, std::size_t k) {
  for (std::size_t i = 0; i < k; ++i) std::swap(a[i], a[i + rng.below(std::uint32_t(n - i))]);
}

void induction_example(Rng& rng, LmBatch& b, std::size_t row) {
  const std::size_t t_len = b.seq_len;
  std::int32_t* tok = b.tokens.data() + row * t_len;
  const std::size_t len = kSegMin + rng.below(std::uint32_t(kSegMax - kSegMin + 1));
  const std::size_t start = 1 + rng.below(std::uint32_t(t_len - 2 * len));  // second copy ends <= T-1
  std::int32_t pool[kInductionTokens];
  for (std::int32_t i = 0; i < kInductionTokens; ++i) pool[i] = i;
  partial_shuffle(rng, pool, kInductionTokens, len);  // pool[0..len) is the segment
  tok[0] = kInductionStart;
  for (std::size_t t = 1; t < t_len; ++t) {
    if (t >= start && t < start + len)
      tok[t] = pool[t - start];
    else if (t >= start + len && t < start + 2 * len)
      tok[t] = pool[t - start - len];
    else  // any of the 32 tokens
      tok[t] = std::int32_t(rng.below(kInductionTokens));
  }
  b.seg_start[row] = std::int32_t(start);
  b.seg_len[row] = std::int32_t(len);
  // Scored: queries in the second copy whose next token is also in it.
  for (std::size_t t = 0; t < t_len; ++t)
    b.scored[row * t_len + t] = t >= start + len && t + 1 < start + 2 * len ? 1 : 0;
}

std::int32_t pick(Rng& rng, std::int32_t first, std::int32_t count) {
  return first + std::int32_t(rng.below(std::uint32_t(count)));
}

void cricket_example(Rng& rng, LmBatch& b, std::size_t row) {
  const std::size_t t_len = b.seq_len;
  std::int32_t* tok = b.tokens.data() + row * t_len;
  // Distractor before the subject 35%, after the object 40%, none 25%.
  const std::uint32_t where = rng.below(20);
  const bool before = where < 7, after = where >= 7 && where < 15;
  const bool adverb = rng.below(2) == 0, fill = rng.below(2) == 0;
  const std::int32_t n1 = pick(rng, kNouns, kNumNouns);
  std::int32_t n2 = pick(rng, kNouns, kNumNouns - 1);
  if (n2 >= n1) ++n2;
  std::size_t t = 0;
  int referent = -1, distractor = -1, pronoun = -1;
  tok[t++] = kCStart;
  const std::uint32_t opener = rng.below(3);
  if (opener == 1) tok[t++] = kNow;
  if (opener == 2) tok[t++] = kAnd, tok[t++] = kThen;
  auto phrase = [&]() {
    tok[t++] = pick(rng, kPreps, kNumPreps);
    tok[t++] = kThe;
    distractor = int(t);
    tok[t++] = n2;
  };
  if (before) phrase();
  tok[t++] = pick(rng, kPlayers, kNumPlayers);
  if (adverb) tok[t++] = pick(rng, kAdverbs, kNumAdverbs);
  tok[t++] = pick(rng, kVerbs, kNumVerbs);
  tok[t++] = kThe;
  referent = int(t);
  tok[t++] = n1;
  if (after) phrase();
  if (fill) tok[t++] = pick(rng, kFills, kNumFills);
  tok[t++] = kBecause;
  pronoun = int(t);
  tok[t++] = kIt;
  tok[t++] = kWas;
  tok[t++] = kAdjectives + (n1 - kNouns) * kAdjPerNoun + std::int32_t(rng.below(kAdjPerNoun));
  tok[t++] = kCStop;
  const std::size_t end = t;  // tokens [0, end) are the sentence
  for (; t < t_len; ++t) tok[t] = kCPad;
  b.pronoun[row] = pronoun;
  b.referent[row] = referent;
  b.distractor[row] = distractor;
  // Loss up to the full stop (padding and the stop itself predict nothing).
  for (std::size_t i = 0; i < t_len; ++i) b.targets[row * t_len + i] = i + 1 < end ? tok[i + 1] : -1;
  for (std::size_t i = 0; i < t_len; ++i) b.scored[row * t_len + i] = int(i) == pronoun + 1 ? 1 : 0;
}

void english_example(Rng& rng, LmBatch& b, std::size_t row) {
  const std::size_t t_len = b.seq_len;
  EnSequence seq;
  generate_english(rng, seq);
  std::int32_t* tok = b.tokens.data() + row * t_len;
  for (std::size_t t = 0; t < t_len; ++t) tok[t] = t < seq.tokens.size() ? seq.tokens[t] : kEnglishPad;
  // Loss on every next token before the padding (the last sentence's "." included).
  for (std::size_t i = 0; i < t_len; ++i) b.targets[row * t_len + i] = i + 1 < seq.length ? tok[i + 1] : -1;
  std::uint8_t* scored = b.scored.data() + row * t_len;
  std::fill(scored, scored + t_len, std::uint8_t(0));
  for (const EnArc& a : seq.arcs)
    if (a.relation == EnRelation::agreement) scored[a.query] = 1;
  b.arcs[row] = std::move(seq.arcs);
}

}  // namespace

std::size_t lm_task_count() {
  return lm_tasks().size();
}
const LmTaskSpec& lm_task_at(std::size_t index) {
  return lm_tasks()[index];
}
const LmTaskSpec* find_lm_task(const std::string& name) {
  for (const LmTaskSpec& s : lm_tasks())
    if (name == s.name) return &s;
  return nullptr;
}

LmBatch::LmBatch(std::size_t seq_len_, std::size_t capacity_)
    : capacity(capacity_),
      seq_len(seq_len_),
      tokens(capacity_ * seq_len_, 0),
      targets(capacity_ * seq_len_, -1),
      scored(capacity_ * seq_len_, 0),
      seg_start(capacity_, -1),
      seg_len(capacity_, -1),
      pronoun(capacity_, -1),
      referent(capacity_, -1),
      distractor(capacity_, -1),
      arcs(capacity_) {}

void generate_lm_example(const LmTaskSpec& spec, Rng& rng, LmBatch& b, std::size_t row) {
  const std::size_t t_len = b.seq_len;
  b.seg_start[row] = b.seg_len[row] = b.pronoun[row] = b.referent[row] = b.distractor[row] = -1;
  if (spec.kind == LmTaskKind::induction) {
    induction_example(rng, b, row);
    const std::int32_t* tok = b.tokens.data() + row * t_len;
    for (std::size_t i = 0; i < t_len; ++i) b.targets[row * t_len + i] = i + 1 < t_len ? tok[i + 1] : -1;
  } else if (spec.kind == LmTaskKind::cricket) {
    cricket_example(rng, b, row);
  } else {
    english_example(rng, b, row);
  }
}

void generate_lm_batch(const LmTaskSpec& spec, Rng& rng, std::size_t n, LmBatch& b) {
  for (std::size_t row = 0; row < n; ++row) generate_lm_example(spec, rng, b, row);
  b.size = n;
}

std::int32_t cricket_token(const std::string& word) {
  for (std::size_t i = 0; i < kCricketVocab; ++i)
    if (word == kCricketNames[i]) return std::int32_t(i);
  return -1;
}

std::vector<std::int32_t> cricket_adjectives(std::int32_t noun) {
  std::vector<std::int32_t> out;
  if (noun < kNouns || noun >= kNouns + kNumNouns) return out;
  for (std::int32_t i = 0; i < kAdjPerNoun; ++i)
    out.push_back(kAdjectives + (noun - kNouns) * kAdjPerNoun + i);
  return out;
}

bool cricket_parse(const std::vector<std::string>& words, int* referent) {
  std::vector<std::int32_t> w;
  for (const std::string& s : words) {
    const std::int32_t t = cricket_token(s);
    if (t < 0) return false;
    w.push_back(t);
  }
  std::size_t i = 0;
  auto in = [&](std::int32_t first, std::int32_t count) {
    return i < w.size() && w[i] >= first && w[i] < first + count;
  };
  auto is = [&](std::int32_t tok) { return i < w.size() && w[i] == tok; };
  int distractor_noun = -1, phrases = 0;
  auto phrase = [&]() {  // PREP the N2, optional
    if (!in(kPreps, kNumPreps)) return true;
    ++i;
    if (!is(kThe)) return false;
    ++i;
    if (!in(kNouns, kNumNouns)) return false;
    distractor_noun = w[i++];
    ++phrases;
    return true;
  };
  if (is(kNow)) {
    ++i;
  } else if (is(kAnd)) {
    ++i;
    if (!is(kThen)) return false;
    ++i;
  }
  if (!phrase()) return false;
  if (!in(kPlayers, kNumPlayers)) return false;
  ++i;
  if (in(kAdverbs, kNumAdverbs)) ++i;
  if (!in(kVerbs, kNumVerbs)) return false;
  ++i;
  if (!is(kThe)) return false;
  ++i;
  if (!in(kNouns, kNumNouns)) return false;
  const std::size_t ref = i;
  const std::int32_t noun = w[i++];
  if (!phrase() || phrases > 1) return false;
  if (in(kFills, kNumFills)) ++i;
  for (std::int32_t tok : {kBecause, kIt, kWas}) {
    if (!is(tok)) return false;
    ++i;
  }
  if (i >= w.size()) return false;
  const std::vector<std::int32_t> adj = cricket_adjectives(noun);
  if (std::find(adj.begin(), adj.end(), w[i]) == adj.end()) return false;
  ++i;
  if (is(kCStop)) ++i;  // the full stop is optional in a parse
  if (i != w.size() || distractor_noun == noun) return false;
  if (referent) *referent = int(ref);
  return true;
}

}  // namespace headlab
