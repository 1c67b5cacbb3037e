// Prompt sets for the interpretability findings (issue 35): pure data, no wasm. The IOI prompts follow
// Wang et al. 2022 ("Interpretability in the Wild"): a clean prompt names two people, repeats one (the
// subject, S) and ends where the other (the indirect object, IO) is the natural next word; the corrupted
// prompt is the paper's "ABC" form, where the repeated name is replaced by a third one, so nothing in it
// says which of the first two names comes next.
import { describe, requireDim, requireObject, requireSeed } from './checks.js';

/**
 * The templates: `{first}` and `{second}` are the two names of the opening clause, `{S}` the repeated
 * name (the subject), `{PLACE}` and `{OBJECT}` the fillers. The prompt ends just before the answer.
 * Every name, place and object is one word, so a tokenizer that keeps the words whole gives the clean
 * and the corrupted prompt the same length.
 */
export const IOI_TEMPLATES = Object.freeze([
  'When {first} and {second} went to the {PLACE}, {S} gave a {OBJECT} to',
  'Then, {first} and {second} went to the {PLACE}. {S} gave a {OBJECT} to',
  'Then, {first} and {second} had a lot of fun at the {PLACE}. {S} gave a {OBJECT} to',
  'After {first} and {second} went to the {PLACE}, {S} gave a {OBJECT} to',
  'While {first} and {second} were working at the {PLACE}, {S} gave a {OBJECT} to',
  'When {first} and {second} got a {OBJECT} at the {PLACE}, {S} decided to give it to',
  'Friends {first} and {second} found a {OBJECT} at the {PLACE}. {S} gave it to',
  'The {PLACE} {first} and {second} went to had a {OBJECT}. {S} gave it to',
]);

/** First names, each one token with its leading space in GPT-2's tokenizer. */
export const IOI_NAMES = Object.freeze([
  'Mary', 'John', 'Tom', 'James', 'Dan', 'Sarah', 'Paul', 'Kate', 'Mark', 'Lisa',
  'David', 'Anna', 'Michael', 'Emma', 'Alex', 'Laura', 'Ben', 'Rachel', 'Sam', 'Jessica',
]);

export const IOI_PLACES = Object.freeze([
  'store', 'garden', 'restaurant', 'school', 'hospital', 'office', 'station', 'house',
]);

export const IOI_OBJECTS = Object.freeze([
  'drink', 'book', 'ring', 'bone', 'computer', 'necklace', 'snack', 'basketball',
]);

/** mulberry32: a small seeded generator, so one seed gives one prompt set everywhere. */
function generator(seed) {
  let a = (seed >>> 0) ^ Math.imul(Math.floor(seed / 2 ** 32) | 0, 0x9e3779b9);
  return () => {
    a = a + 0x6d2b79f5 | 0;
    let t = Math.imul(a ^ a >>> 15, 1 | a);
    t = t + Math.imul(t ^ t >>> 7, 61 | t) ^ t;
    return ((t ^ t >>> 14) >>> 0) / 4294967296;
  };
}

const pick = (random, list) => list[Math.floor(random() * list.length)];

function fill(template, values) {
  return template.replace(/\{(first|second|S|PLACE|OBJECT)\}/g, (_, key) => values[key]);
}

/**
 * `n` IOI prompts (Wang et al. 2022), half in each name order: ABBA ("When Mary and John went to the
 * store, John gave a drink to" → " Mary") and BABA ("When John and Mary went …, John gave a drink to").
 * Each item is `{ clean, corrupted, answer, wrong, template, order, names }`: `answer` is the indirect
 * object and `wrong` the subject, both with their leading space; `corrupted` is `clean` with the repeated
 * name replaced by a third name (the paper's ABC form); `names` is `[IO, S, C]`. The same `seed` gives the
 * same set.
 * @param {{ n: number, seed?: number }} options n prompts (1 … 100000); seed a non-negative integer (default 0)
 * @returns {import('../headlab').IoiPrompt[]}
 * @throws {TypeError|RangeError} naming the argument
 */
export function ioiPrompts(options) {
  const fn = 'findings.ioiPrompts';
  requireObject(fn, options, ['n', 'seed']);
  const n = requireDim(fn, 'n', options.n);
  if (n > 100000) throw new RangeError(`${fn}: n must be at most 100000, got ${n}`);
  const seed = options.seed === undefined ? 0 : requireSeed(fn, 'seed', options.seed);
  const random = generator(seed);
  const out = [];
  for (let i = 0; i < n; i++) {
    const template = Math.floor(random() * IOI_TEMPLATES.length);
    const io = pick(random, IOI_NAMES);
    let s = pick(random, IOI_NAMES);
    while (s === io) s = pick(random, IOI_NAMES);
    let c = pick(random, IOI_NAMES);
    while (c === io || c === s) c = pick(random, IOI_NAMES);
    const order = i % 2 === 0 ? 'ABBA' : 'BABA';
    const [first, second] = order === 'ABBA' ? [io, s] : [s, io];
    const values = { first, second, PLACE: pick(random, IOI_PLACES), OBJECT: pick(random, IOI_OBJECTS) };
    out.push({
      clean: fill(IOI_TEMPLATES[template], { ...values, S: s }),
      corrupted: fill(IOI_TEMPLATES[template], { ...values, S: c }),
      answer: ` ${io}`,
      wrong: ` ${s}`,
      template,
      order,
      names: [io, s, c],
    });
  }
  return out;
}

/** The `lab.findings` namespace: prompt sets for the findings' checks. */
export const findings = Object.freeze({
  /**
   * IOI prompts in Wang et al.'s form (see {@link ioiPrompts}).
   * @param {{ n: number, seed?: number }} options
   * @returns {import('../headlab').IoiPrompt[]}
   * @example
   * const [p] = lab.findings.ioiPrompts({ n: 1, seed: 3 });
   * p.clean;      // 'When Mary and Lisa got a bone at the station, Lisa decided to give it to'
   * p.corrupted;  // 'When Mary and Lisa got a bone at the station, John decided to give it to'
   * p.answer;     // ' Mary' (p.wrong is ' Lisa')
   */
  ioiPrompts(options) {
    if (options === undefined) throw new TypeError(`findings.ioiPrompts: expected an options object { n, seed }, got ${describe(options)}`);
    return ioiPrompts(options);
  },
});
