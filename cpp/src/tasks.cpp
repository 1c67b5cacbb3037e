#include "headlab/tasks.hpp"

#include <cmath>

namespace headlab {

namespace {

// Positional tasks: 16 content tokens "A".."P", then the query marker "?".
const char* const kLetterNames[] = {"A", "B", "C", "D", "E", "F", "G", "H", "I",
                                    "J", "K", "L", "M", "N", "O", "P", "?"};
constexpr std::size_t kLetters = 16;

// Pronoun task vocabulary: entities, then modifiers, then fillers, then "it".
const char* const kWordNames[] = {"ball", "box", "cup", "jar", "bag", "can", "full", "empty", "red",
                                  "big",  "old", "new", "the", "a",   "on",  "and",  "then",  "it"};
constexpr std::int32_t kEntities = 0, kNumEntities = 6;
constexpr std::int32_t kModifiers = 6, kNumModifiers = 6;
constexpr std::int32_t kFillers = 12, kNumFillers = 5;
constexpr std::int32_t kPronoun = 17;

// Lookup task vocabulary: 8 colours x 4 objects (item = colour * 4 + object), then
// one question token per colour ("red?" = 32 + colour), then the bare objects
// (40 + object), which answer 1 names.
const char* const kItemNames[] = {
    "red cup", "red box", "red hat", "red key", "blue cup", "blue box", "blue hat", "blue key",
    "green cup", "green box", "green hat", "green key", "gold cup", "gold box", "gold hat", "gold key",
    "pink cup", "pink box", "pink hat", "pink key", "grey cup", "grey box", "grey hat", "grey key",
    "black cup", "black box", "black hat", "black key", "white cup", "white box", "white hat", "white key",
    "red?", "blue?", "green?", "gold?", "pink?", "grey?", "black?", "white?",
    "cup", "box", "hat", "key",
};
constexpr std::int32_t kColours = 8, kObjects = 4, kQuestions = kColours * kObjects,
                       kBareObjects = kQuestions + kColours;

// Fields: name, kind, seq_len, vocab, R, query position, relation positions,
// relation names, token names, description.
const TaskSpec kTasks[] = {
    {"two-relations",
     TaskKind::positional,
     8,
     kLetters + 1,
     2,
     7,
     {6, 0, -1, -1},
     {"previous token (position 6)", "first token (position 0)", nullptr, nullptr},
     kLetterNames,
     "Seven random letters then '?'. Answer 1: the letter just before '?' (position 6); "
     "answer 2: the first letter (position 0)."},
    {"three-relations",
     TaskKind::positional,
     8,
     kLetters + 1,
     3,
     7,
     {6, 0, 3, -1},
     {"previous token (position 6)", "first token (position 0)", "middle token (position 3)", nullptr},
     kLetterNames,
     "Seven random letters then '?'. Answers: the letters at positions 6, 0 and 3."},
    {"four-relations",
     TaskKind::positional,
     8,
     kLetters + 1,
     4,
     7,
     {0, 2, 4, 6},
     {"position 0", "position 2", "position 4", "position 6"},
     kLetterNames,
     "Seven random letters then '?'. Answers: the letters at positions 0, 2, 4 and 6."},
    {"pronoun",
     TaskKind::pronoun,
     8,
     18,
     2,
     7,
     {-1, -1, -1, -1},
     {"antecedent entity", "its modifier", nullptr, nullptr},
     kWordNames,
     "A word sequence like 'the full ball on red box then it'. Two modifier+entity pairs, "
     "fillers, and stray entity or modifier words after the first pair; 'it' is last. Rule: "
     "'it' refers to the first entity mentioned. Answer 1: that entity; answer 2: its "
     "modifier (the word right before it)."},
    {"lookup",
     TaskKind::lookup,
     8,
     44,
     4,
     7,
     {-1, 0, 3, 6},
     {"object of the asked colour", "position 0", "position 3", "position 6"},
     kItemNames,
     "Seven coloured items, each colour at most once, then a question such as 'red?'. "
     "Answer 1: the object (cup, box, hat or key) of the item whose colour the question names, "
     "found by content anywhere; "
     "answers 2 to 4: the items at positions 0, 3 and 6."},
};

void positional_example(const TaskSpec& spec, Rng& rng, std::int32_t* tokens, std::int32_t* answers,
                        std::int32_t* positions) {
  const std::int32_t marker = static_cast<std::int32_t>(spec.vocab - 1);
  for (std::size_t t = 0; t < spec.seq_len; ++t)
    tokens[t] =
        t == spec.query_position ? marker : static_cast<std::int32_t>(rng.below(std::uint32_t(marker)));
  for (std::size_t r = 0; r < spec.num_relations; ++r) {
    positions[r] = spec.relation_positions[r];
    answers[r] = tokens[positions[r]];
  }
}

// Slots 0..6 then "it" at 7. The antecedent pair MOD ENT starts at a in [0, 3]
// with only fillers before it; a second pair MOD' ENT' (other words) starts at
// b in [a+2, 5]; every other slot after the first pair is a filler or, half the
// time, a stray entity or modifier word other than the antecedent's.
void pronoun_example(const TaskSpec& spec, Rng& rng, std::int32_t* tokens, std::int32_t* answers,
                     std::int32_t* positions) {
  const std::int32_t slots = static_cast<std::int32_t>(spec.seq_len - 1);
  const std::int32_t a = static_cast<std::int32_t>(rng.below(4));
  const std::int32_t b = a + 2 + static_cast<std::int32_t>(rng.below(std::uint32_t(slots - 1 - (a + 2))));
  const std::int32_t ent = kEntities + std::int32_t(rng.below(kNumEntities));
  const std::int32_t mod = kModifiers + std::int32_t(rng.below(kNumModifiers));
  auto other = [&](std::int32_t first, std::int32_t count, std::int32_t avoid) {
    const std::int32_t k = std::int32_t(rng.below(std::uint32_t(count - 1)));
    return first + k + (first + k >= avoid ? 1 : 0);
  };
  for (std::int32_t t = 0; t < slots; ++t) {
    if (t == a) {
      tokens[t] = mod;
    } else if (t == a + 1) {
      tokens[t] = ent;
    } else if (t == b) {
      tokens[t] = other(kModifiers, kNumModifiers, mod);
    } else if (t == b + 1) {
      tokens[t] = other(kEntities, kNumEntities, ent);
    } else if (t < a || rng.below(2) == 0) {
      tokens[t] = kFillers + std::int32_t(rng.below(kNumFillers));
    } else {
      tokens[t] =
          rng.below(2) == 0 ? other(kEntities, kNumEntities, ent) : other(kModifiers, kNumModifiers, mod);
    }
  }
  tokens[slots] = kPronoun;
  answers[0] = ent;
  positions[0] = a + 1;
  answers[1] = mod;
  positions[1] = a;
}

// Slots 0..6 hold items of seven different colours (one colour is left out) and
// random objects; slot 7 asks for one of the seven colours.
void lookup_example(const TaskSpec& spec, Rng& rng, std::int32_t* tokens, std::int32_t* answers,
                    std::int32_t* positions) {
  std::int32_t colours[kColours];
  for (std::int32_t c = 0; c < kColours; ++c) colours[c] = c;
  for (std::int32_t c = kColours - 1; c > 0; --c) {  // Fisher-Yates
    const std::int32_t j = std::int32_t(rng.below(std::uint32_t(c + 1)));
    const std::int32_t t = colours[c];
    colours[c] = colours[j];
    colours[j] = t;
  }
  const std::int32_t slots = static_cast<std::int32_t>(spec.seq_len - 1);
  for (std::int32_t t = 0; t < slots; ++t) tokens[t] = colours[t] * kObjects + std::int32_t(rng.below(kObjects));
  const std::int32_t asked = std::int32_t(rng.below(std::uint32_t(slots)));
  tokens[slots] = kQuestions + colours[asked];
  answers[0] = kBareObjects + tokens[asked] % kObjects;
  positions[0] = asked;
  for (std::size_t r = 1; r < spec.num_relations; ++r) {
    positions[r] = spec.relation_positions[r];
    answers[r] = tokens[positions[r]];
  }
}

}  // namespace

std::size_t task_count() {
  return sizeof(kTasks) / sizeof(kTasks[0]);
}

const TaskSpec& task_at(std::size_t index) {
  return kTasks[index];
}

const TaskSpec* find_task(const std::string& name) {
  for (const TaskSpec& t : kTasks)
    if (name == t.name) return &t;
  return nullptr;
}

TaskBatch::TaskBatch(const TaskSpec& spec, std::size_t cap)
    : capacity(cap),
      seq_len(spec.seq_len),
      num_relations(spec.num_relations),
      tokens(cap * spec.seq_len),
      query(cap),
      answers(cap * spec.num_relations),
      answer_positions(cap * spec.num_relations) {}

void generate_example(const TaskSpec& spec, Rng& rng, TaskBatch& batch, std::size_t row) {
  std::int32_t* tokens = batch.tokens.data() + row * spec.seq_len;
  std::int32_t* answers = batch.answers.data() + row * spec.num_relations;
  std::int32_t* positions = batch.answer_positions.data() + row * spec.num_relations;
  batch.query[row] = static_cast<std::int32_t>(spec.query_position);
  switch (spec.kind) {
    case TaskKind::positional:
      positional_example(spec, rng, tokens, answers, positions);
      break;
    case TaskKind::pronoun:
      pronoun_example(spec, rng, tokens, answers, positions);
      break;
    case TaskKind::lookup:
      lookup_example(spec, rng, tokens, answers, positions);
      break;
  }
}

void generate_batch(const TaskSpec& spec, Rng& rng, std::size_t n, TaskBatch& batch) {
  for (std::size_t i = 0; i < n; ++i) generate_example(spec, rng, batch, i);
  batch.size = n;
}

}  // namespace headlab
