// The relations view of <headlab-language-model> (english task), without the DOM: from
// lm-session.js's relationsReply (the grammar's arcs of a sentence, every head's attention
// on it, the head scores and the baselines) to what the view draws for each relation the
// sentence holds: the head with the best score for it, the true arc(s), that head's
// attention row at each arc's query, and what position alone scores, over held-out sentences
// (the API's baselines) and on this sentence's own arcs (sentenceVerdict). Arcs point from the
// word that looks (the query) to the word it should look at (the target); an arc from a word to
// itself (a subject just before its verb) is not shown. A head is labelled only with the
// relations it leads (leadingLabels).

/** The relations in the order the view shows them, with the course's name for each kind. */
export const RELATIONS = [
  { key: 'agreement', kind: 'syntax' },
  { key: 'selection', kind: 'semantics' },
  { key: 'coreference', kind: 'entities' },
  { key: 'induction', kind: 'long range' },
  { key: 'previousToken', kind: 'local context' },
];

/** The score a label needs (the API's headReport threshold for english). */
export const LABEL_THRESHOLD = 0.3;

const KEYS = RELATIONS.map((r) => r.key);

/**
 * Labels that say which head leads each relation: a head is labelled with relation r only when
 * its r score is at least LABEL_THRESHOLD and no other head scores higher on r (ties lead
 * together). `leads` lists every relation it leads, highest score first; `relation` is the first
 * (or null). Heads without the english scores come back unchanged.
 * @param {object[]} heads  headScores()
 * @returns {object[]} copies with `relation` and `leads`
 */
export function leadingLabels(heads) {
  if (!heads.length || !Number.isFinite(heads[0].agreement)) return heads;
  const top = Object.fromEntries(KEYS.map((k) => [k, Math.max(...heads.map((h) => h[k]))]));
  return heads.map((h) => {
    const leads = KEYS.filter((k) => h[k] >= LABEL_THRESHOLD && h[k] === top[k]).sort((a, b) => h[b] - h[a]);
    return { ...h, relation: leads[0] ?? null, leads };
  });
}

/**
 * What one head does on this sentence's arcs of one relation (self-arcs left out), against
 * position alone on the same arcs: the held-out baseline's offset k, chosen before the sentence
 * was seen, puts all its weight k words back (on the start token when k reaches past it).
 * verdict: 'beats' (more weight on the targets than position and the head's largest weight on
 * the target at every arc), 'partly' (more weight, but its largest weight elsewhere at `missed`
 * arcs), 'notBeats' (no more weight than position).
 * @param {{weights: Float32Array, shape: number[]}} reply  attention of every head
 * @param {{query: number, target: number}[]} arcs
 * @param {{layer: number, head: number}} head
 * @param {number} offset  the fixed offset k
 * @returns {{arcs: number, head: number, position: number, offset: number, missed: number, verdict: string}}
 */
export function sentenceVerdict({ weights, shape }, arcs, { layer, head }, offset) {
  const [, H, T] = shape;
  const base = (layer * H + head) * T * T;
  const mine = arcs.filter((a) => a.query !== a.target);
  if (!mine.length) throw new Error('sentenceVerdict: arcs holds no arc between two different words');
  let sum = 0;
  let hits = 0;
  let missed = 0;
  for (const { query, target } of mine) {
    const row = weights.subarray(base + query * T, base + query * T + query + 1);
    sum += row[target];
    if (Math.max(0, query - offset) === target) hits++;
    if (row.some((w) => w > row[target])) missed++;
  }
  const mean = sum / mine.length;
  const position = hits / mine.length;
  const verdict = mean <= position ? 'notBeats' : missed ? 'partly' : 'beats';
  return { arcs: mine.length, head: mean, position, offset, missed, verdict };
}

/** Arcs shown per relation at most (a sentence has one previous-token arc per word: one of them is shown). */
export const MAX_ARCS = 3;

/**
 * @param {{tokens: string[], arcs: object[], weights: Float32Array, shape: number[], heads: object[], baselines: object}} reply
 * @returns {{tokens: string[], relations: {key: string, kind: string,
 *   head: {layer: number, head: number, score: number, labelled: boolean, relation: string|null, label: string|null},
 *   baseline: {best: number, fixedOffset: number, offset: number, lastNoun: number}, sentence: object, arcs: object[], more: number}[]}}
 *   `baseline` is over held-out sentences; `sentence` is sentenceVerdict on this sentence's arcs.
 *   each arc: { query, target, queryWord, targetWord, answer, foil, attractor, class, row (weights from the query onto
 *   positions 0..query), onTarget (row[target]), peak (the position row weighs most) }
 */
export function relationRows(reply) {
  const { tokens, weights, shape, baselines } = reply;
  const arcs = reply.arcs.filter((a) => a.query !== a.target);
  const heads = leadingLabels(reply.heads);
  const [, H, T] = shape;
  const relations = [];
  for (const { key, kind } of RELATIONS) {
    const mine = arcs.filter((a) => a.relation === key);
    if (!mine.length) continue;
    const best = heads.reduce((b, h) => (Number.isFinite(h[key]) && (!b || h[key] > b[key]) ? h : b), null);
    if (!best) continue;
    const shown = key === 'previousToken' ? [previousTokenArc(mine, arcs)] : mine.slice(0, MAX_ARCS);
    const base = (best.layer * H + best.head) * T * T;
    relations.push({
      key, kind,
      head: {
        layer: best.layer, head: best.head, score: best[key], labelled: best.leads.includes(key), relation: best.relation ?? null,
        label: best.label ?? null,
      },
      baseline: baselines[key],
      sentence: sentenceVerdict(reply, mine, best, baselines[key].offset),
      arcs: shown.map((a) => {
        const row = weights.slice(base + a.query * T, base + a.query * T + a.query + 1);
        let peak = 0;
        for (let k = 1; k < row.length; k++) if (row[k] > row[peak]) peak = k;
        return { query: a.query, target: a.target, queryWord: tokens[a.query], targetWord: tokens[a.target], answer: a.answer ?? null,
          foil: a.foil ?? null, attractor: a.attractor ?? null, class: a.class ?? null, row, onTarget: row[a.target], peak };
      }),
      more: mine.length - shown.length,
    });
  }
  return { tokens, relations };
}

/**
 * The previous-token arc shown: the one at the agreement query when there is one (the same place as
 * the syntax arc), else the middle one.
 */
function previousTokenArc(mine, arcs) {
  const agreement = arcs.find((a) => a.relation === 'agreement');
  return (agreement && mine.find((a) => a.query === agreement.query)) ?? mine[Math.floor(mine.length / 2)];
}
