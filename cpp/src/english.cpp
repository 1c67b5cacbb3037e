#include "headlab/english.hpp"

#include <algorithm>
#include <sstream>
#include <tuple>

namespace headlab {

namespace {

using Cat = EnCategory;
using Kind = EnVerbKind;

struct Lexicon {
  std::vector<EnWord> words;
  // Generation lists.
  std::vector<std::int32_t> det_sg, det_pl, adj, preps, openers, adverbs, tails, conj;
  std::vector<std::int32_t> nouns[kEnClassCount][2];  // [class][number]
  std::vector<std::int32_t> first_names[2];           // [gender]
  std::vector<std::int32_t> last_names;
  std::vector<std::int32_t> preds[kEnClassCount];
  std::vector<std::int32_t> pres_intr[2], pres_any[2], pres_sel[2], past_intr, past_any, past_sel;
  std::int32_t very, that, is[2], was[2], pron[4], and_, outside, off, ball;

  std::int32_t add(const std::string& text, Cat cat, int number = -1, int gender = -1, int cls = -1,
                   Kind kind = Kind::none, std::int32_t pair = -1) {
    words.push_back({text, cat, std::int8_t(number), std::int8_t(gender), std::int8_t(cls), kind, pair});
    return std::int32_t(words.size() - 1);
  }
  std::pair<std::int32_t, std::int32_t> add_pair(const std::string& sg, const std::string& pl, Cat cat,
                                                 int gender, int cls, Kind kind) {
    const std::int32_t a = add(sg, cat, 0, gender, cls, kind);
    const std::int32_t b = add(pl, cat, 1, gender, cls, kind);
    words[std::size_t(a)].pair = b;
    words[std::size_t(b)].pair = a;
    return {a, b};
  }

  Lexicon() {
    add("<s>", Cat::special);
    add("<pad>", Cat::special);
    add(".", Cat::special);
    det_sg = {add("the", Cat::det), add("a", Cat::det, 0), add("this", Cat::det, 0)};
    det_pl = {det_sg[0], add("two", Cat::det, 1), add("these", Cat::det, 1), add("some", Cat::det, 1)};
    for (const char* w : {"old", "new", "big", "small", "red", "blue", "nice", "dark"})
      adj.push_back(add(w, Cat::adj));
    very = add("very", Cat::very);
    struct N {
      const char *sg, *pl;
      int gender;
    };
    const std::vector<std::pair<int, std::vector<N>>> noun_table = {
        {kRoyal,
         {{"king", "kings", 0},
          {"prince", "princes", 0},
          {"queen", "queens", 1},
          {"princess", "princesses", 1}}},
        {kChild,
         {{"boy", "boys", 0}, {"son", "sons", 0}, {"girl", "girls", 1}, {"daughter", "daughters", 1}}},
        {kAnimal,
         {{"dog", "dogs", 2},
          {"cat", "cats", 2},
          {"horse", "horses", 2},
          {"bird", "birds", 2},
          {"cow", "cows", 2}}},
        {kFood,
         {{"apple", "apples", 2},
          {"cake", "cakes", 2},
          {"egg", "eggs", 2},
          {"pie", "pies", 2},
          {"orange", "oranges", 2},
          {"carrot", "carrots", 2}}},
        {kVehicle,
         {{"car", "cars", 2},
          {"truck", "trucks", 2},
          {"bus", "buses", 2},
          {"van", "vans", 2},
          {"tractor", "tractors", 2}}},
        {kText,
         {{"book", "books", 2},
          {"letter", "letters", 2},
          {"poem", "poems", 2},
          {"note", "notes", 2},
          {"story", "stories", 2},
          {"report", "reports", 2}}},
        {kCricket,
         {{"ball", "balls", 2}, {"bat", "bats", 2}, {"pitch", "pitches", 2}, {"glove", "gloves", 2}}},
        {kThing,
         {{"table", "tables", 2},
          {"cabinet", "cabinets", 2},
          {"box", "boxes", 2},
          {"shelf", "shelves", 2},
          {"door", "doors", 2},
          {"window", "windows", 2},
          {"garden", "gardens", 2},
          {"house", "houses", 2},
          {"tree", "trees", 2},
          {"wall", "walls", 2},
          {"key", "keys", 2},
          {"cup", "cups", 2}}},
    };
    for (const auto& [cls, list] : noun_table)
      for (const N& n : list) {
        const auto p = add_pair(n.sg, n.pl, Cat::noun, n.gender, cls, Kind::none);
        nouns[cls][0].push_back(p.first);
        nouns[cls][1].push_back(p.second);
      }
    ball = nouns[kCricket][0][0];
    for (const char* w : {"virat", "rohit", "tom", "ben", "sam", "joe"})
      first_names[0].push_back(add(w, Cat::first_name, 0, 0, kName));
    for (const char* w : {"anna", "maria", "lucy", "emma", "sara", "mia"})
      first_names[1].push_back(add(w, Cat::first_name, 0, 1, kName));
    for (const char* w :
         {"berg", "lind", "smith", "root", "kohli", "sharma", "stone", "wood", "hill", "frost"})
      last_names.push_back(add(w, Cat::last_name, 0, -1, kName));
    pron[0] = add("he", Cat::pronoun, 0, 0);
    pron[1] = add("she", Cat::pronoun, 0, 1);
    pron[2] = add("it", Cat::pronoun, 0, 2);
    pron[3] = add("they", Cat::pronoun, 1);
    was[0] = add("was", Cat::be_past, 0);
    was[1] = add("were", Cat::be_past, 1);
    const std::vector<std::pair<int, std::vector<const char*>>> pred_table = {
        {kRoyal, {"proud", "rich"}},           {kChild, {"shy", "young"}},    {kAnimal, {"hungry", "loud"}},
        {kFood, {"sweet", "fresh", "ripe"}},   {kVehicle, {"fast", "noisy"}}, {kText, {"long", "funny"}},
        {kCricket, {"full", "wide", "heavy"}}, {kThing, {"empty", "clean"}},  {kName, {"happy", "tired"}},
    };
    for (const auto& [cls, list] : pred_table)
      for (const char* w : list) preds[cls].push_back(add(w, Cat::pred, -1, -1, cls));
    // Present tense: [singular, plural] forms.
    auto pres = [&](const char* sg, const char* pl, Kind kind, int cls, std::vector<std::int32_t>* into) {
      const auto p = add_pair(sg, pl, Cat::verb_pres, -1, cls, kind);
      into[0].push_back(p.first);
      into[1].push_back(p.second);
    };
    const auto isp = add_pair("is", "are", Cat::verb_pres, -1, -1, Kind::copula);
    is[0] = isp.first;
    is[1] = isp.second;
    for (auto [sg, pl] : {std::pair{"runs", "run"},
                          {"sleeps", "sleep"},
                          {"smiles", "smile"},
                          {"waits", "wait"},
                          {"sings", "sing"},
                          {"laughs", "laugh"}})
      pres(sg, pl, Kind::intransitive, -1, pres_intr);
    for (auto [sg, pl] :
         {std::pair{"sees", "see"}, {"likes", "like"}, {"chases", "chase"}, {"helps", "help"}})
      pres(sg, pl, Kind::any_object, -1, pres_any);
    const std::vector<std::tuple<const char*, const char*, int>> sel = {
        {"eats", "eat", kFood},       {"cooks", "cook", kFood},    {"drives", "drive", kVehicle},
        {"washes", "wash", kVehicle}, {"reads", "read", kText},    {"writes", "write", kText},
        {"feeds", "feed", kAnimal},   {"kicks", "kick", kCricket}, {"catches", "catch", kCricket}};
    for (const auto& [sg, pl, cls] : sel) pres(sg, pl, Kind::select, cls, pres_sel);
    for (const char* w : {"smiled", "laughed", "waited", "slept", "ran"})
      past_intr.push_back(add(w, Cat::verb_past, -1, -1, -1, Kind::intransitive));
    for (const char* w : {"met", "saw", "found", "liked", "watched"})
      past_any.push_back(add(w, Cat::verb_past, -1, -1, -1, Kind::any_object));
    const std::vector<std::pair<const char*, int>> sel_past = {
        {"ate", kFood},     {"cooked", kFood}, {"drove", kVehicle}, {"washed", kVehicle}, {"wrote", kText},
        {"printed", kText}, {"fed", kAnimal},  {"hit", kCricket},   {"bowled", kCricket}};
    for (const auto& [w, cls] : sel_past)
      past_sel.push_back(add(w, Cat::verb_past, -1, -1, cls, Kind::select));
    for (const char* w : {"to", "near", "on", "under", "with", "behind", "by"})
      preps.push_back(add(w, Cat::prep));
    that = add("that", Cat::that);
    and_ = add("and", Cat::conj);
    conj = {add("because", Cat::conj), and_, add("so", Cat::conj)};
    for (const char* w : {"later", "now", "then"}) openers.push_back(add(w, Cat::opener));
    for (const char* w : {"often", "always", "never", "also"}) adverbs.push_back(add(w, Cat::adverb));
    for (const char* w : {"home", "today", "again"}) tails.push_back(add(w, Cat::tail));
    outside = add("outside", Cat::outside);
    off = add("off", Cat::off);
  }
};

const Lexicon& lex() {
  static const Lexicon l;
  return l;
}

const EnWord& W(std::int32_t t) {
  return lex().words[std::size_t(t)];
}

// he 0, she 1, it 2, they 3: the pronoun of a noun phrase with this head.
int pronoun_class(int number, int gender) {
  if (number == 1) return 3;
  return gender < 0 ? 2 : gender;
}

// A noun phrase's head: position, pronoun class, semantic class, number, and the
// word that stands for it (a common noun itself; a name's first name, which
// carries the gender), the target of agreement and coreference.
struct Head {
  std::int32_t pos;
  int pron, cls, number;
  std::int32_t feature;
};

bool noun_of_number(std::int32_t t, int number) {
  const EnWord& w = W(t);
  if (w.cat == Cat::noun) return w.number == number;
  if (w.cat == Cat::first_name || w.cat == Cat::last_name) return number == 0;
  return false;
}

// A noun of the other number strictly between subject head and verb.
bool has_attractor(const std::vector<std::int32_t>& tok, std::int32_t head, std::int32_t verb, int number) {
  for (std::int32_t p = head + 1; p < verb; ++p)
    if (noun_of_number(tok[std::size_t(p)], 1 - number)) return true;
  return false;
}

EnArc agreement_arc(const std::vector<std::int32_t>& tok, const Head& subj, std::int32_t verb) {
  EnArc a{EnRelation::agreement, verb - 1, subj.feature};
  a.answer = tok[std::size_t(verb)];
  a.foil = W(a.answer).pair;
  a.attractor = has_attractor(tok, subj.pos, verb, subj.number);
  return a;
}

void sort_arcs(std::vector<EnArc>& arcs) {
  std::sort(arcs.begin(), arcs.end(), [](const EnArc& a, const EnArc& b) {
    return std::tie(a.relation, a.query, a.target) < std::tie(b.relation, b.query, b.target);
  });
}

void add_previous_token_arcs(std::vector<EnArc>& arcs, std::size_t begin, std::size_t end) {
  for (std::size_t t = begin; t < end; ++t)
    arcs.push_back({EnRelation::previous_token, std::int32_t(t), std::int32_t(t - 1)});
}

// ---- generation

struct Gen {
  Rng* rng;
  std::vector<std::int32_t> tok;
  std::vector<EnArc> arcs;
  struct Name {
    std::int32_t first, last, last_pos;
  };
  std::vector<Name> names;               // two-word names, with the last name's latest position
  std::vector<std::int32_t> used_first;  // first names already in the sequence
  std::vector<std::int32_t> used_last;
  std::vector<std::int32_t> sentence_names;  // first names in the current sentence
  std::vector<Head> heads;                   // noun phrases of the current sentence

  bool chance(double p) { return rng->uniform() < p; }
  std::uint32_t below(std::uint32_t n) { return rng->below(n); }
  std::int32_t pick(const std::vector<std::int32_t>& v) { return v[below(std::uint32_t(v.size()))]; }
  std::int32_t emit(std::int32_t t) {
    tok.push_back(t);
    return std::int32_t(tok.size() - 1);
  }
  static bool contains(const std::vector<std::int32_t>& v, std::int32_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  }

  // A name (singular person); reuses a two-word name from earlier sentences half the time.
  Head name() {
    std::vector<std::size_t> reusable;
    for (std::size_t k = 0; k < names.size(); ++k)
      if (!contains(sentence_names, names[k].first)) reusable.push_back(k);
    if (!reusable.empty() && chance(0.8)) {
      Name& n = names[reusable[below(std::uint32_t(reusable.size()))]];
      const std::int32_t q = emit(n.first);
      arcs.push_back({EnRelation::induction, q, n.last_pos, n.last});
      const std::int32_t p = emit(n.last);
      n.last_pos = p;
      sentence_names.push_back(n.first);
      return {p, pronoun_class(0, W(n.first).gender), kName, 0, q};
    }
    const int gender = int(below(2));
    std::vector<std::int32_t> free;
    for (std::int32_t f : lex().first_names[gender])
      if (!contains(used_first, f)) free.push_back(f);
    if (free.empty()) return noun(kRoyal + int(below(2)), 0, 5);  // all names of this gender used
    const std::int32_t f = pick(free);
    used_first.push_back(f);
    sentence_names.push_back(f);
    const std::int32_t first_pos = emit(f);
    std::int32_t pos = first_pos;
    std::vector<std::int32_t> free_last;
    for (std::int32_t l : lex().last_names)
      if (!contains(used_last, l)) free_last.push_back(l);
    if (!free_last.empty() && chance(0.85)) {
      const std::int32_t l = pick(free_last);
      used_last.push_back(l);
      pos = emit(l);
      names.push_back({f, l, pos});
    }
    return {pos, pronoun_class(0, gender), kName, 0, first_pos};
  }

  // [DET] {very ADJ | ADJ} NOUN of class cls and number, at most max_len tokens (>= 2).
  // spread: the tokens before the noun are uniform over 0..4 (0 forces a plural), so the
  // distance from a verb to its object varies.
  Head noun(int cls, int number, int max_len, bool spread = false) {
    const Lexicon& L = lex();
    bool det;
    int adjs;
    bool very;
    if (spread) {
      const int k = int(below(5));
      if (k == 0) number = 1;
      det = k > 0 && (number == 0 || !chance(0.25));
      very = k - int(det) >= 2 && chance(0.5);
      adjs = k - int(det) - int(very);
      if (adjs > 2) adjs = 2, det = true, very = true;
    } else {
      det = number == 0 || !chance(0.25);
      adjs = chance(0.45) ? (chance(0.35) ? 2 : 1) : 0;
      very = adjs > 0 && chance(0.25);
    }
    while (int(det) + adjs + int(very) + 1 > max_len) {
      if (very)
        very = false;
      else if (adjs > 0)
        --adjs;
      else
        det = number == 0;
    }
    const std::int32_t n = pick(L.nouns[cls][number]);
    if (det) emit(pick(number == 0 ? L.det_sg : L.det_pl));
    if (very) emit(L.very);
    std::int32_t a0 = -1;
    for (int k = 0; k < adjs; ++k) {
      std::int32_t a = pick(L.adj);
      while (a == a0) a = pick(L.adj);
      emit(a0 = a);
    }
    const std::int32_t pos = emit(n);
    return {pos, pronoun_class(number, W(n).gender), cls, number, pos};
  }

  // An NP of one of the given classes (kName: a name, singular only).
  Head np(std::vector<int> classes, int number, int max_len) {
    if (number == 1) classes.erase(std::remove(classes.begin(), classes.end(), int(kName)), classes.end());
    int cls = classes[below(std::uint32_t(classes.size()))];
    if (number == 0 && std::find(classes.begin(), classes.end(), int(kName)) != classes.end() && chance(0.35))
      cls = kName;
    const Head h = cls == kName ? name() : noun(cls, number, max_len);
    heads.push_back(h);
    return h;
  }

  Head pp(const std::vector<int>& classes, int number, int max_len) {
    emit(pick(lex().preps));
    return np(classes, number, max_len - 1);
  }

  static std::vector<int> all_classes() {
    return {kRoyal, kChild, kAnimal, kFood, kVehicle, kText, kCricket, kThing};
  }
  static std::vector<int> persons() { return {kRoyal, kChild, kName}; }

  // VERB OBJ for a verb taking an object; records selection.
  void object(std::int32_t verb_pos, const std::vector<int>& any_classes) {
    const EnWord& v = W(tok[std::size_t(verb_pos)]);
    const int number = int(below(2));
    if (v.kind == Kind::select) {
      const Head h = noun(v.cls, number, 5, true);
      heads.push_back(h);
      EnArc a{EnRelation::selection, h.pos - 1, verb_pos, tok[std::size_t(h.pos)]};
      a.cls = v.cls;
      arcs.push_back(a);
    } else {
      np(any_classes, number, 5);
    }
  }

  void sentence() {
    const Lexicon& L = lex();
    heads.clear();
    sentence_names.clear();
    if (chance(0.15)) emit(pick(L.openers));
    const bool present = chance(0.6);
    int subject = 0;  // 0 person, 1 animal, 2 thing
    if (present) {
      const double r = rng->uniform();
      subject = r < 0.55 ? 0 : r < 0.75 ? 1 : 2;
    }
    // Half the people are named, so two-word names come back in later sentences.
    const bool named = subject == 0 && chance(0.5);
    const int number = named ? 0 : int(below(2));
    const std::vector<int> things = {kFood, kVehicle, kText, kCricket, kThing};
    const Head subj = named          ? np({kName}, 0, 4)
                      : subject == 0 ? np(persons(), number, 4)
                      : subject == 1 ? np({kAnimal}, number, 4)
                                     : np(things, number, 4);
    const int n = subj.number;
    // Modifier: the attractor slot, 2-8 tokens. A relative clause's own verb is
    // present tense (and agrees) 40 % of the time, else past.
    if (chance(present ? 0.9 : 0.3)) {
      const int m = chance(0.8) ? 1 - n : n;
      const double r = rng->uniform();
      const bool inner_present = chance(0.4);
      if (r < 0.55) {
        const std::size_t mod_start = tok.size();
        pp(all_classes(), m, 5);
        const int used = int(tok.size() - mod_start);
        if (used <= 4 && chance(0.35)) pp(all_classes(), int(below(2)), 8 - used);
      } else if (r < 0.75) {  // that VERB NP
        emit(L.that);
        const std::int32_t v = emit(inner_present ? pick(L.pres_any[n]) : pick(L.past_any));
        if (inner_present) arcs.push_back(agreement_arc(tok, subj, v));
        np(all_classes(), m, 5);
      } else {  // that NP VERB
        emit(L.that);
        const Head inner = np({kRoyal, kChild, kAnimal, kName}, m, 5);
        const std::int32_t v = emit(inner_present ? pick(L.pres_any[inner.number]) : pick(L.past_any));
        if (inner_present) arcs.push_back(agreement_arc(tok, inner, v));
      }
    }
    if (chance(present ? 0.25 : 0.1)) emit(pick(L.adverbs));
    if (present) {
      const double r = rng->uniform();
      int kind;  // 0 intransitive, 1 copula, 2 select, 3 any object
      if (subject == 0)
        kind = r < 0.25 ? 0 : r < 0.4 ? 1 : r < 0.85 ? 2 : 3;
      else if (subject == 1)
        kind = r < 0.4 ? 0 : r < 0.6 ? 1 : r < 0.85 ? 2 : 3;
      else
        kind = 1;
      std::int32_t verb;
      if (kind == 0)
        verb = pick(L.pres_intr[n]);
      else if (kind == 1)
        verb = L.is[n];
      else if (kind == 2)
        verb = subject == 1 ? L.pres_sel[n][0] : pick(L.pres_sel[n]);  // animals only eat
      else
        verb = pick(L.pres_any[n]);
      const std::int32_t v = emit(verb);
      arcs.push_back(agreement_arc(tok, subj, v));
      if (kind == 0 && chance(0.5)) emit(pick(L.tails));
      if (kind == 1) pp({kThing}, int(below(2)), 5);
      if (kind >= 2) object(v, all_classes());
    } else {
      const double r = rng->uniform();
      const std::int32_t verb = r < 0.6 ? pick(L.past_sel) : r < 0.85 ? pick(L.past_any) : pick(L.past_intr);
      const std::int32_t v = emit(verb);
      if (W(verb).kind == Kind::intransitive) {
        if (chance(0.4)) emit(pick(L.tails));
      } else {
        object(v, {kRoyal, kChild, kAnimal, kFood, kVehicle, kText, kCricket, kThing, kName});
      }
    }
    if (chance(0.25)) pp({kThing, kAnimal, kRoyal, kChild}, int(below(2)), 4);
    // Coreference: a pronoun whose gender and number fit one noun phrase only.
    if (heads.size() >= 2 && chance(0.6)) {
      int count[4] = {0, 0, 0, 0};
      for (const Head& h : heads) ++count[h.pron];
      std::vector<std::size_t> unique;
      for (std::size_t k = 0; k < heads.size(); ++k)
        if (count[heads[k].pron] == 1) unique.push_back(k);
      if (!unique.empty()) {
        // Mostly not the sentence's last noun phrase, so "the last noun" is no answer.
        std::vector<std::size_t> earlier;
        for (std::size_t k : unique)
          if (k + 1 < heads.size()) earlier.push_back(k);
        const std::vector<std::size_t>& from = !earlier.empty() && chance(0.85) ? earlier : unique;
        const Head ref = heads[from[below(std::uint32_t(from.size()))]];
        emit(pick(L.conj));
        emit(L.pron[ref.pron]);
        const std::int32_t be = emit(L.was[ref.pron == 3 ? 1 : 0]);
        const std::int32_t pred = pick(L.preds[ref.cls]);
        emit(pred);
        EnArc a{EnRelation::coreference, be, ref.feature, pred};
        a.cls = ref.cls;
        arcs.push_back(a);
        const std::string& p = W(pred).text;
        if (tok[std::size_t(ref.pos)] == L.ball && (p == "full" || p == "wide") && chance(0.5)) {
          emit(L.and_);
          emit(L.outside);
          emit(L.off);
        }
      }
    }
    emit(kEnglishStop);
  }
};

// ---- parsing

struct Parser {
  std::vector<std::int32_t> tok;
  const std::vector<std::string>* words;
  std::size_t i = 0, end = 0;
  std::vector<EnArc> arcs;
  std::vector<Head> heads;
  std::vector<std::pair<std::int32_t, std::int32_t>> names;  // first name -> latest last-name position
  std::string error;
  std::int32_t error_word = -1;

  bool fail(const std::string& what) {
    if (error.empty()) {
      std::ostringstream s;
      if (i < end)
        s << "word " << i << " ('" << (*words)[i] << "'): " << what;
      else
        s << "the text stops after word " << (end == 0 ? 0 : end - 1) << ": " << what;
      error = s.str();
      error_word = std::int32_t(i < end ? i : words->size());
    }
    return false;
  }
  bool at(Cat c) const { return i < end && W(tok[i]).cat == c; }
  const EnWord& cur() const { return W(tok[i]); }

  bool np(Head& h) {
    if (at(Cat::first_name)) {
      const std::int32_t first = tok[i];
      const int gender = cur().gender;
      const std::int32_t first_pos = std::int32_t(i);
      std::int32_t pos = std::int32_t(i++);
      if (at(Cat::last_name)) {
        auto it = std::find_if(names.begin(), names.end(), [&](const auto& p) { return p.first == first; });
        if (it != names.end() && tok[std::size_t(it->second)] == tok[i])
          arcs.push_back({EnRelation::induction, pos, it->second, tok[i]});
        pos = std::int32_t(i++);
        if (it != names.end())
          it->second = pos;
        else
          names.push_back({first, pos});
      }
      h = {pos, pronoun_class(0, gender), kName, 0, first_pos};
      heads.push_back(h);
      return true;
    }
    int det_number = -2;
    if (at(Cat::det)) det_number = cur().number, ++i;
    for (;;) {
      if (at(Cat::very)) {
        ++i;
        if (!at(Cat::adj)) return fail("expected an adjective after 'very'");
      }
      if (!at(Cat::adj)) break;
      ++i;
    }
    if (!at(Cat::noun)) return fail("expected a noun or a name");
    const EnWord& n = cur();
    if (det_number >= 0 && det_number != n.number)
      return fail(std::string("the determiner does not agree in number with '") + n.text + "'");
    if (det_number == -2 && n.number == 0) return fail("a singular noun needs a determiner");
    h = {std::int32_t(i), pronoun_class(n.number, n.gender), n.cls, n.number, std::int32_t(i)};
    heads.push_back(h);
    ++i;
    return true;
  }

  bool pp() {
    ++i;  // the preposition
    Head h;
    return np(h);
  }

  // The object of the verb at verb_pos (kind select or any_object).
  bool object(std::int32_t verb_pos) {
    const EnWord& v = W(tok[std::size_t(verb_pos)]);
    Head h;
    if (!np(h)) return false;
    if (v.kind == Kind::select) {
      if (h.cls != v.cls) {
        i = std::size_t(h.pos);
        return fail("'" + v.text + "' takes " + english_class_name(v.cls) + ", not " +
                    english_class_name(h.cls));
      }
      EnArc a{EnRelation::selection, h.pos - 1, verb_pos, tok[std::size_t(h.pos)]};
      a.cls = v.cls;
      arcs.push_back(a);
    }
    return true;
  }

  bool agree(const Head& subj) {
    if (cur().number != subj.number)
      return fail("the verb does not agree in number with its subject '" + (*words)[std::size_t(subj.pos)] +
                  "' (word " + std::to_string(subj.pos) + ")");
    arcs.push_back(agreement_arc(tok, subj, std::int32_t(i)));
    return true;
  }

  bool sentence() {
    heads.clear();
    if (at(Cat::opener)) ++i;
    Head subj;
    if (!np(subj)) return false;
    if (at(Cat::prep)) {
      if (!pp()) return false;
      if (at(Cat::prep) && !pp()) return false;
    } else if (at(Cat::that)) {
      ++i;
      if (at(Cat::verb_pres) || at(Cat::verb_past)) {  // that VERB NP
        if (cur().kind != Kind::any_object && cur().kind != Kind::select)
          return fail("expected a verb that takes an object");
        const std::int32_t v = std::int32_t(i);
        if (at(Cat::verb_pres) && !agree(subj)) return false;
        ++i;
        if (!object(v)) return false;
      } else {  // that NP VERB
        Head inner;
        if (!np(inner)) return false;
        if (!(at(Cat::verb_pres) || at(Cat::verb_past)) || cur().kind != Kind::any_object)
          return fail(
              "expected a verb that takes any object (see, like, chase, help, met, saw, found, liked, "
              "watched)");
        if (at(Cat::verb_pres) && !agree(inner)) return false;
        ++i;
      }
    }
    if (at(Cat::adverb)) ++i;
    if (at(Cat::verb_pres)) {
      const std::int32_t v = std::int32_t(i);
      if (!agree(subj)) return false;
      const Kind k = cur().kind;
      ++i;
      if (k == Kind::intransitive) {
        if (at(Cat::tail)) ++i;
      } else if (k == Kind::copula) {
        if (!at(Cat::prep)) return fail("expected a preposition after '" + (*words)[std::size_t(v)] + "'");
        if (!pp()) return false;
      } else if (!object(v)) {
        return false;
      }
    } else if (at(Cat::verb_past)) {
      const std::int32_t v = std::int32_t(i);
      const Kind k = cur().kind;
      ++i;
      if (k == Kind::intransitive) {
        if (at(Cat::tail)) ++i;
      } else if (!object(v)) {
        return false;
      }
    } else {
      return fail("expected a verb");
    }
    while (at(Cat::prep))
      if (!pp()) return false;
    if (at(Cat::conj)) {
      ++i;
      if (!at(Cat::pronoun)) return fail("expected a pronoun (he, she, it, they)");
      const EnWord& pr = cur();
      const int pc = pronoun_class(pr.number, pr.gender);
      int found = -1, count = 0;
      for (std::size_t k = 0; k < heads.size(); ++k)
        if (heads[k].pron == pc) found = int(k), ++count;
      if (count != 1)
        return fail(count == 0 ? "the pronoun fits no noun phrase of the sentence"
                               : "the pronoun fits more than one noun phrase of the sentence");
      const Head ref = heads[std::size_t(found)];
      ++i;
      if (!at(Cat::be_past) || cur().number != (pc == 3 ? 1 : 0))
        return fail(pc == 3 ? "expected 'were'" : "expected 'was'");
      const std::int32_t be = std::int32_t(i++);
      if (!at(Cat::pred)) return fail("expected a predicate adjective");
      if (cur().cls != ref.cls)
        return fail("'" + cur().text + "' does not describe '" + (*words)[std::size_t(ref.pos)] + "' (" +
                    english_class_name(ref.cls) + ")");
      EnArc a{EnRelation::coreference, be, ref.feature, tok[i]};
      a.cls = ref.cls;
      arcs.push_back(a);
      ++i;
      if (at(Cat::conj) && cur().text == "and" && i + 1 < end && W(tok[i + 1]).cat == Cat::outside) {
        if (ref.cls != kCricket) return fail("only a cricket ball is 'outside off'");
        i += 2;
        if (!at(Cat::off)) return fail("expected 'off'");
        ++i;
      }
    }
    if (i >= end || tok[i] != kEnglishStop) return fail("expected '.'");
    ++i;
    return true;
  }
};

}  // namespace

bool EnArc::operator==(const EnArc& o) const {
  return relation == o.relation && query == o.query && target == o.target && answer == o.answer &&
         foil == o.foil && cls == o.cls && attractor == o.attractor;
}

std::size_t english_vocab_size() {
  return lex().words.size();
}
const EnWord& english_word(std::int32_t token) {
  return W(token);
}
std::int32_t english_token(const std::string& word) {
  const auto& w = lex().words;
  for (std::size_t k = 0; k < w.size(); ++k)
    if (w[k].text == word) return std::int32_t(k);
  return -1;
}
const char* english_class_name(int cls) {
  static const char* const names[] = {"royals", "children", "animals", "food", "vehicles",
                                      "texts",  "cricket",  "things",  "names"};
  return cls >= 0 && cls < kEnClassCount ? names[cls] : "none";
}
bool english_is_noun(std::int32_t token) {
  const Cat c = W(token).cat;
  return c == Cat::noun || c == Cat::first_name || c == Cat::last_name;
}
const char* english_relation_name(EnRelation r) {
  static const char* const names[] = {"agreement", "selection", "coreference", "induction", "previousToken"};
  return names[int(r)];
}

void generate_english(Rng& rng, EnSequence& out) {
  Gen g;
  g.rng = &rng;
  g.tok.reserve(kEnglishSeqLen * 2);
  g.emit(kEnglishStart);
  std::size_t sentences = 0;
  for (int failures = 0; failures < 3;) {
    const Gen saved = g;  // a sentence that does not fit is taken back
    g.sentence();
    if (g.tok.size() <= kEnglishSeqLen) {
      ++sentences;
    } else {
      const Rng r = *g.rng;
      g = saved;
      *g.rng = r;  // the draws stay spent, so the next try differs
      ++failures;
    }
  }
  out.length = g.tok.size();
  out.sentences = sentences;
  out.tokens = g.tok;
  out.tokens.resize(kEnglishSeqLen, kEnglishPad);
  out.arcs = std::move(g.arcs);
  add_previous_token_arcs(out.arcs, 1, out.length);
  sort_arcs(out.arcs);
}

EnParse english_relations(const std::vector<std::string>& words) {
  EnParse out;
  Parser p;
  p.words = &words;
  for (std::size_t k = 0; k < words.size(); ++k) {
    const std::int32_t t = english_token(words[k]);
    if (t < 0) {
      out.error = "word " + std::to_string(k) + " ('" + words[k] + "') is not in the vocabulary";
      out.error_word = std::int32_t(k);
      return out;
    }
    p.tok.push_back(t);
  }
  p.end = p.tok.size();
  while (p.end > 0 && p.tok[p.end - 1] == kEnglishPad) --p.end;
  if (p.end > 0 && p.tok[0] == kEnglishStart) p.i = 1;
  for (std::size_t k = p.i; k < p.end; ++k)
    if (p.tok[k] == kEnglishStart || p.tok[k] == kEnglishPad) {
      out.error = "word " + std::to_string(k) + " ('" + words[k] + "') may only start or end the text";
      out.error_word = std::int32_t(k);
      return out;
    }
  if (p.i >= p.end) {
    out.error = "the text holds no sentence";
    out.error_word = std::int32_t(words.size());
    return out;
  }
  while (p.i < p.end)
    if (!p.sentence()) {
      out.error = p.error;
      out.error_word = p.error_word;
      return out;
    }
  out.ok = true;
  out.arcs = std::move(p.arcs);
  add_previous_token_arcs(out.arcs, 1, p.end);
  sort_arcs(out.arcs);
  return out;
}

EnParse english_relations(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream s(text);
  for (std::string w; s >> w;) words.push_back(w);
  return english_relations(words);
}

const char* english_dependency_name(EnDependency d) {
  static const char* const names[] = {"determiner", "subject", "object", "coreference"};
  return names[int(d)];
}

std::vector<EnDependencyArc> english_dependencies(const std::vector<std::int32_t>& tokens, std::size_t length,
                                                  const std::vector<EnArc>& arcs) {
  std::vector<EnDependencyArc> out;
  const std::size_t end = std::min(length, tokens.size());
  for (std::size_t i = 0; i < end; ++i) {
    if (W(tokens[i]).cat != Cat::det) continue;
    std::size_t j = i + 1;
    while (j < end && (W(tokens[j]).cat == Cat::adj || W(tokens[j]).cat == Cat::very)) ++j;
    if (j < end && W(tokens[j]).cat == Cat::noun)
      out.push_back({EnDependency::determiner, std::int32_t(i), std::int32_t(j)});
  }
  // The arcs' query positions are where a next-token prediction needs them: the word itself is next to it.
  const auto is = [&](std::int32_t k, Cat c) { return k >= 0 && std::size_t(k) < end && W(tokens[k]).cat == c; };
  for (const EnArc& a : arcs) {
    switch (a.relation) {
      case EnRelation::agreement:  // query: the token before the verb; target: the subject
        if (is(a.query + 1, Cat::verb_pres)) out.push_back({EnDependency::subject, a.target, a.query + 1});
        break;
      case EnRelation::selection:  // query: the token before the object; target: the verb
        if (is(a.query + 1, Cat::noun)) out.push_back({EnDependency::object, a.query + 1, a.target});
        break;
      case EnRelation::coreference:  // query: was/were after the pronoun; target: the antecedent
        if (is(a.query - 1, Cat::pronoun)) out.push_back({EnDependency::coreference, a.query - 1, a.target});
        break;
      default:
        break;
    }
  }
  std::sort(out.begin(), out.end(), [](const EnDependencyArc& a, const EnDependencyArc& b) {
    return a.relation != b.relation ? a.relation < b.relation : a.dependent < b.dependent;
  });
  return out;
}

}  // namespace headlab
