// Which score of a head matters for the task, and where that score is heading: the numbers
// <headlab-language-model> puts beside each head's label. A head's label waits for a score
// of 0.5 (the API's threshold), but a learner watching the phase change needs to see the
// scores that are still below it climbing too (bench/results/phase-change.md: the layer-1
// previous-token scores rise with the induction scores, mostly without reaching 0.5).
// Also where a query row points on the drawn text (the cricket coreference note). No DOM; the
// element only draws what these return.

/** Change, over the trend window, under which a score counts as steady. */
export const TREND_FLAT = 0.03;
/** Steps the arrow looks back over, and values a sparkline (of the whole history) keeps. */
export const TREND_WINDOW = 300;
export const TREND_POINTS = 24;

/**
 * The score field that shows a head's part in its task: coreference for cricket; for the
 * induction task the previous-token score below the top layer (where the induction head
 * reads it) and the induction score in the top layer (in a one-layer model, its only one).
 * @param {string} task @param {number} layers @param {number} layer  counting from 0
 */
export function taskScoreKey(task, layers, layer) {
  if (task === 'cricket') return 'coreference';
  return layers > 1 && layer < layers - 1 ? 'previousToken' : 'induction';
}

/**
 * Where a score is going: the latest value against the one TREND_WINDOW steps earlier
 * (the oldest record when the history is shorter).
 * @param {{step: number, value: number}[]} points  oldest first
 * @returns {{from: number, to: number, change: number, direction: 'rising'|'falling'|'steady', arrow: string, points: number[]} | null}
 *   null with fewer than two records; `points`: at most TREND_POINTS values of the whole history, for a sparkline
 */
export function scoreTrend(points, { window = TREND_WINDOW, flat = TREND_FLAT } = {}) {
  const valid = points.filter((p) => Number.isFinite(p.value));
  if (valid.length < 2) return null;
  const last = valid[valid.length - 1];
  let i = valid.length - 2;
  while (i > 0 && valid[i - 1].step >= last.step - window) i--;
  const span = valid.slice(i);
  const from = span[0].value, to = last.value, change = to - from;
  const direction = change > flat ? 'rising' : change < -flat ? 'falling' : 'steady';
  const arrow = { rising: '↑', falling: '↓', steady: '→' }[direction];
  const every = Math.ceil(valid.length / TREND_POINTS);
  const kept = valid.filter((_, k) => (valid.length - 1 - k) % every === 0).map((p) => p.value);
  return { from, to, change, direction, arrow, points: kept };
}

/**
 * Keeps, per head, the history of the scores a snapshot's run carries (previousToken,
 * induction, coreference), one record per new step; returns the trend of each head's
 * task score.
 */
export class ScoreHistory {
  constructor({ task, layers, heads, limit = 400 }) {
    Object.assign(this, { task, layers, heads, limit });
    this.records = [];  // { step, scores: [{previousToken, induction, coreference}] }
  }

  /** Takes in a run's snapshot (scores of every head at step s.step); a step already seen replaces its record. */
  add(s) {
    const rec = { step: s.step, scores: s.scores.map((q) => ({ previousToken: q.previousToken, induction: q.induction,
      coreference: q.coreference, agreement: q.agreement, selection: q.selection })) };
    const last = this.records[this.records.length - 1];
    if (last && last.step >= s.step) {
      if (last.step === s.step) this.records[this.records.length - 1] = rec;
      else this.records = [rec];  // a new model or a loaded one: start over
    } else {
      this.records.push(rec);
    }
    if (this.records.length > this.limit) this.records.splice(0, this.records.length - this.limit);
  }

  /** The task score key and its trend (scoreTrend) for head `head` of layer `layer`. */
  trend(layer, head) {
    const i = layer * this.heads + head;
    const key = this.task === 'english' ? bestRelation(this.records[this.records.length - 1]?.scores[i]) : taskScoreKey(this.task, this.layers, layer);
    return { key, trend: scoreTrend(this.records.map((r) => ({ step: r.step, value: r.scores[i]?.[key] }))) };
  }
}

/** english: the relation a head scores best on (of the latest record), the score its cell shows. */
const ENGLISH_RELATIONS = ['agreement', 'selection', 'coreference', 'induction', 'previousToken'];
function bestRelation(scores) {
  if (!scores) return 'agreement';
  return ENGLISH_RELATIONS.reduce((b, k) => ((scores[k] ?? -1) > (scores[b] ?? -1) ? k : b), 'agreement');
}

/**
 * Where one query row of a head points on the drawn text: the last occurrence of `word` as the
 * query, and the key with the most weight from it.
 * @param {{tokens: string[], weights: Float32Array, shape: number[]}} s  a run's snapshot (weights [L, H, T, T])
 * @param {number} i  layer * H + head
 * @returns {{query: string, queryIndex: number, key: string, keyIndex: number, weight: number} | null}  null when `word` is not in the text
 */
export function rowPeak(s, i, word) {
  const T = s.shape[2];
  const q = s.tokens.lastIndexOf(word);
  if (q < 0) return null;
  const row = (i * T + q) * T;
  let best = 0;
  for (let k = 1; k <= q; k++) if (s.weights[row + k] > s.weights[row + best]) best = k;
  return { query: word, queryIndex: q, key: s.tokens[best], keyIndex: best, weight: s.weights[row + best] };
}
