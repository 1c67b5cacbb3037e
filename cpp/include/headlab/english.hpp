// A small English with a grammar (issue 24): a probabilistic grammar whose
// every generated sentence comes with the relations a head could track, so a
// head can be checked against the truth.
//
// Sequences are kEnglishSeqLen tokens: the start token, one or more sentences
// each ending in ".", then padding. A sentence is
//
//   S    = [OPENER] SUBJ [MOD] [ADV] VP {PP} [CONJ PRON BE PRED [and outside off]] .
//   SUBJ = NP                         a noun phrase or a name
//   NP   = [DET] {very ADJ | ADJ} NOUN | FIRST [LAST]
//   MOD  = PP [PP]                    "to the old cabinet", "near cats"
//        | that VERB NP               subject relative: "that chases the cats"
//        | that NP VERB               object relative:  "that the girls chase"
//   VP   = VERB_PRES(agrees with SUBJ) [OBJ | home | today | again | PP]
//        | VERB_PAST [OBJ | home | again]
//   PP   = PREP NP
//
// e.g. "the keys to the old cabinet are on the table", "the dog that the
// girls chase runs home", "the king met the girls and they were shy", "anna
// berg met tom lind . later anna berg smiled", "virat hit the ball because it
// was full and outside off". Determiners agree in number with their noun
// (a/this singular, two/these/some plural; bare nouns only plural).
//
// Relations (EnArc), each with the query position where a prediction needs it
// and the true target position (indices into the sequence, 0 = start token):
//   agreement      a present-tense verb: query = the token before the verb,
//                  target = its subject's head noun, or for a name its first
//                  name (trained heads attend there, not on the last name,
//                  bench/english/calibration.md). attractor: a noun of the
//                  other number lies strictly between the subject and the
//                  verb. answer = the verb, foil = the verb's other-number
//                  form.
//   selection      a verb that selects its object's class (eat -> food, drive
//                  -> vehicles, read -> texts, feed -> animals, hit -> cricket):
//                  query = the token before the object noun, target = the
//                  verb; answer = the object noun, cls = the selected class.
//   coreference    he/she/it/they: query = the "was"/"were" after the pronoun
//                  (the token before the referent-dependent predicate), target
//                  = the antecedent, the one noun phrase of the sentence whose
//                  gender and number fit the pronoun (the others fit other
//                  pronouns): its head noun, or for a name its first name (the
//                  word that carries the gender; trained heads attend there,
//                  bench/english/calibration.md); answer = the predicate
//                  adjective, which belongs to the antecedent's class (cls).
//   induction      a two-word name seen before in the sequence: query = the
//                  repeated first name, target = the token after the earlier
//                  copy of it (the last name); answer = the last name.
//   previous_token every position t >= 1 before the padding: query t, target t-1.
//
// Rates over 10,000 sequences (tests/cpp/test_english.cpp checks them): 3.5
// sentences per sequence; per sentence 0.67 agreement arcs (60 % of them with
// an attractor of 2-8 tokens), 0.42 selection, 0.46 coreference, 0.19
// induction (47 % of sequences hold one). The most common subject-verb
// distance covers 20 % of agreement arcs; for agreement, selection,
// coreference and induction neither the best fixed offset nor "the last noun"
// finds more than 26 % of the targets (previous_token: a fixed offset, 100 %).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "headlab/train/rng.hpp"

namespace headlab {

constexpr std::size_t kEnglishSeqLen = 48;
constexpr std::int32_t kEnglishStart = 0, kEnglishPad = 1, kEnglishStop = 2;

enum class EnCategory : std::uint8_t {
  special,  // <s>, <pad>, "."
  det,      // the a this two these some
  adj,      // attributive, any noun: old new big ...
  very,
  noun,        // common noun; number, gender, cls
  first_name,  // gender; singular
  last_name,
  pronoun,    // he she it they
  be_past,    // was were
  pred,       // predicate adjective of one class: sweet (food), fast (vehicle) ...
  verb_pres,  // number; kind; cls (selected class for kind select)
  verb_past,  // kind; cls
  prep,
  that,
  conj,    // because and so
  opener,  // later now then
  adverb,  // often always never also
  tail,    // home today again
  outside,
  off,
};

enum class EnVerbKind : std::uint8_t { none, intransitive, copula, select, any_object };

// Semantic classes of nouns (and names, class kName).
enum EnClass : std::int8_t {
  kRoyal,
  kChild,
  kAnimal,
  kFood,
  kVehicle,
  kText,
  kCricket,
  kThing,
  kName,
  kEnClassCount
};

struct EnWord {
  std::string text;
  EnCategory cat;
  std::int8_t number;  // 0 singular, 1 plural, -1 neither
  std::int8_t gender;  // 0 male, 1 female, 2 neuter, -1 not a noun/name
  std::int8_t cls;     // EnClass of a noun or predicate; a selecting verb's object class; else -1
  EnVerbKind kind;
  std::int32_t pair;  // a noun's or present verb's other-number form, else -1
};

std::size_t english_vocab_size();
const EnWord& english_word(std::int32_t token);       // token < english_vocab_size()
std::int32_t english_token(const std::string& word);  // -1 when not a word of the language
const char* english_class_name(int cls);              // "food", ...
// True for tokens that head a noun phrase: common nouns, first and last names.
bool english_is_noun(std::int32_t token);

enum class EnRelation : std::uint8_t { agreement, selection, coreference, induction, previous_token };
constexpr std::size_t kEnRelationCount = 5;
const char* english_relation_name(EnRelation r);  // "agreement", ..., "previousToken"

struct EnArc {
  EnRelation relation;
  std::int32_t query, target;
  std::int32_t answer = -1;  // the token the query position predicts (see above)
  std::int32_t foil = -1;    // agreement: the verb's other form
  std::int32_t cls = -1;     // selection, coreference: the class the answer belongs to
  bool attractor = false;    // agreement only
  bool operator==(const EnArc& o) const;
};

struct EnSequence {
  std::vector<std::int32_t> tokens;  // [kEnglishSeqLen]
  std::size_t length = 0;            // tokens before the padding (start token included)
  std::size_t sentences = 0;
  std::vector<EnArc> arcs;  // sorted by (relation, query, target)
};

// One sequence from rng alone (deterministic per rng state).
void generate_english(Rng& rng, EnSequence& out);

// The grammar's own analysis of typed words (one or more sentences, each
// ending in "."; an optional leading "<s>", trailing "<pad>"s ignored).
// Positions in arcs index `words`. On failure ok is false, arcs is empty,
// error names the word and what was expected, error_word is its index
// (words.size() when the text stops early).
struct EnParse {
  bool ok = false;
  std::string error;
  std::int32_t error_word = -1;
  std::vector<EnArc> arcs;  // sorted by (relation, query, target)
};
EnParse english_relations(const std::vector<std::string>& words);

// Splits on spaces and parses.
EnParse english_relations(const std::string& text);

// Dependencies in the sense of Clark et al. 2019 ("What does BERT look at?"): a dependent word and the
// word it depends on (its head in the sentence's tree), read off the grammar's own structure, for
// checking a model's heads against the truth (issue 35):
//   determiner   a determiner -> the noun of its noun phrase (NP = [DET] {very ADJ | ADJ} NOUN)
//   subject      a present-tense verb's subject noun -> the verb (from the agreement arcs)
//   object       a selected object noun -> its verb (from the selection arcs)
//   coreference  a pronoun -> its antecedent's head word (from the coreference arcs)
// Positions index `tokens`, as the arcs' do.
enum class EnDependency : std::uint8_t { determiner, subject, object, coreference };
constexpr std::size_t kEnDependencyCount = 4;
const char* english_dependency_name(EnDependency d);  // "determiner", "subject", "object", "coreference"

struct EnDependencyArc {
  EnDependency relation;
  std::int32_t dependent, head;
  bool operator==(const EnDependencyArc& o) const {
    return relation == o.relation && dependent == o.dependent && head == o.head;
  }
};

// From the first `length` tokens of a sequence and its arcs (generate_english's or english_relations');
// sorted by (relation, dependent).
std::vector<EnDependencyArc> english_dependencies(const std::vector<std::int32_t>& tokens, std::size_t length,
                                                  const std::vector<EnArc>& arcs);

}  // namespace headlab
