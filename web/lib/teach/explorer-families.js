// What <headlab-model-explorer> shows that depends on a model's family, without the DOM: which
// query heads share a key-value head (grouped-query attention), which heads are attention sinks,
// and an encoder's mask token in the text. Heads count from 0 here; the words count from 1.

/** The sentence of the course, the default text of every Hugging Face model (explorer-controller.js re-exports it). */
export const COURSE_SENTENCE = 'Virat hit the ball because it was full and outside off.';

/**
 * A head is an attention sink when its first-token score (headScores()' firstToken: its mean attention on
 * position 0) is at least this. The one threshold of the sink line beside the grid and of the findings
 * panel's attention-sink card.
 */
export const SINK = 0.5;

/**
 * The key-value groups of a layer: query head h reads key-value head floor(h / (H / KV)), as
 * Hugging Face's repeat_kv lays them out. [{ kvHead, heads: [h…] }], or [] when every query head
 * has its own key-value head (nothing is shared).
 * @param {{ numHeads: number, numKeyValueHeads?: number }} info  model.info
 */
export function kvGroups(info) {
  const H = info?.numHeads;
  const KV = info?.numKeyValueHeads ?? H;
  if (!Number.isInteger(H) || H < 1) throw new TypeError(`kvGroups: info.numHeads must be a positive integer, got ${JSON.stringify(H)}`);
  if (!Number.isInteger(KV) || KV < 1 || H % KV !== 0) {
    throw new RangeError(`kvGroups: info.numKeyValueHeads must be a positive integer that divides numHeads ${H}, got ${JSON.stringify(KV)}`);
  }
  if (KV === H) return [];
  const size = H / KV;
  return Array.from({ length: KV }, (_, k) => ({ kvHead: k, heads: Array.from({ length: size }, (_, i) => k * size + i) }));
}

/**
 * The heads whose first-token score is at least `threshold`: { heads: [{ layer, head, firstToken }]
 * (strongest first), total (every head in `scores`, as the grid shows them; one without a finite score is
 * no sink), share (heads.length / total), threshold }. What the sink line and the attention-sink card
 * both count (the card through findings-controller.js's sinkFinding).
 * @param {Array<{layer: number, head: number, firstToken: number}>} scores  headScores().scores
 */
export function sinkHeads(scores, threshold = SINK) {
  if (!Array.isArray(scores)) throw new TypeError(`sinkHeads: scores must be headScores().scores (an array), got ${scores === null ? 'null' : typeof scores}`);
  if (typeof threshold !== 'number' || !(threshold >= 0 && threshold <= 1)) throw new RangeError(`sinkHeads: threshold must be in 0..1, got ${threshold}`);
  const heads = scores.filter((s) => Number.isFinite(s.firstToken) && s.firstToken >= threshold)
    .map(({ layer, head, firstToken }) => ({ layer, head, firstToken }))
    .sort((a, b) => b.firstToken - a.firstToken || a.layer - b.layer || a.head - b.head);
  return { heads, total: scores.length, share: scores.length ? heads.length / scores.length : 0, threshold };
}

/**
 * The words for sinkHeads' answer that the sink line and the attention-sink card both write (the line puts
 * "Attention sinks:" before them): the count, the share to 0.1 %, the threshold and the heads.
 * @param {{ heads: Array<{layer: number, head: number}>, total: number, share: number, threshold: number }} sinks
 * @param {{ t: Function, fmt: (value: number, digits: number) => string, headName: (layer: number, head: number) => string }} o
 *   the explorer's message function (explorer.sink.*) and number format, and how the view names a head (given layer and head from 0)
 */
export function sinkSentence(sinks, { t, fmt, headName }) {
  const params = { n: sinks.heads.length, total: sinks.total, percent: fmt(100 * sinks.share, 1), threshold: fmt(sinks.threshold, 1) };
  if (!sinks.heads.length) return t('explorer.sink.none', params);
  return t('explorer.sink.count', { ...params, heads: sinks.heads.map((h) => headName(h.layer, h.head)).join(', ') });
}

/** Whether `text` holds the mask token (an encoder guesses there). */
export function hasMask(text, maskToken) {
  return typeof text === 'string' && typeof maskToken === 'string' && maskToken.length > 0 && text.includes(maskToken);
}

/** The course sentence with its "ball" masked by `maskToken`: an encoder's first text. */
export function maskedCourseSentence(maskToken) {
  if (typeof maskToken !== 'string' || !maskToken) throw new TypeError(`maskedCourseSentence: maskToken must be a string such as '[MASK]', got ${JSON.stringify(maskToken)}`);
  return COURSE_SENTENCE.replace('ball', maskToken);
}

/**
 * An encoder's mask token as its tokenizer knows it: '[MASK]' (BERT, DistilBERT) or '<mask>'
 * (RoBERTa) when the text of that token tokenizes to that one token; null when neither does.
 * @param {{ tokenize: (text: string) => { tokens: string[] } }} model
 */
export function maskTokenOf(model) {
  for (const t of ['[MASK]', '<mask>']) {
    let tokens;
    try { ({ tokens } = model.tokenize(t)); } catch { continue; }
    if (tokens.includes(t)) return t;
  }
  return null;
}
