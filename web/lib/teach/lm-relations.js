// The relations view of <headlab-language-model> (english task), without the DOM: from
// lm-session.js's relationsReply (the grammar's arcs of a sentence, every head's attention
// on it, the head scores and the baselines) to what the view draws for each relation the
// sentence holds: the head with the best score for it, the true arc(s), that head's
// attention row at each arc's query, and what position alone scores. Every number is the
// API's; this file only picks and slices.

/** The relations in the order the view shows them, with the course's name for each kind. */
export const RELATIONS = [
  { key: 'agreement', kind: 'syntax' },
  { key: 'selection', kind: 'semantics' },
  { key: 'coreference', kind: 'entities' },
  { key: 'induction', kind: 'long range' },
  { key: 'previousToken', kind: 'local context' },
];

/** Arcs shown per relation at most (a sentence has one previous-token arc per word: one of them is shown). */
export const MAX_ARCS = 3;

/**
 * @param {{tokens: string[], arcs: object[], weights: Float32Array, shape: number[], heads: object[], baselines: object}} reply
 * @returns {{tokens: string[], relations: {key: string, kind: string,
 *   head: {layer: number, head: number, score: number, labelled: boolean, relation: string|null, label: string|null},
 *   baseline: {best: number, fixedOffset: number, offset: number, lastNoun: number}, arcs: object[], more: number}[]}}
 *   each arc: { query, target, queryWord, targetWord, answer, foil, attractor, class, row (weights from the query onto
 *   positions 0..query), onTarget (row[target]), peak (the position row weighs most) }
 */
export function relationRows(reply) {
  const { tokens, arcs, weights, shape, heads, baselines } = reply;
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
        layer: best.layer, head: best.head, score: best[key], labelled: best.relation === key, relation: best.relation ?? null,
        label: best.label ?? null,
      },
      baseline: baselines[key],
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
