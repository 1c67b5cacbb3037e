// The syntax-heads check (issue 35; Clark et al. 2019, "What Does BERT Look At?"): HeadLab's English
// grammar writes sentences whose dependencies are known (determiner → noun, subject → verb, object → verb,
// pronoun → antecedent: cpp/include/headlab/english.hpp, english_dependencies), and each head of a model
// is scored by how often a dependent word's most-attended other word is the word it depends on, against
// the best fixed offset on the same arcs. Word-level attention as in the paper: attention *from* a word
// split into several tokens is the mean over its tokens, attention *to* it the sum.
import { describe, requireDim, requireObject, requireSeed } from './checks.js';
import { abortError } from './pretrained-files.js';
import { innerIds } from './specials.js';

/** The dependencies english_dependencies writes, in its order. */
export const SYNTAX_RELATIONS = Object.freeze(['determiner', 'subject', 'object', 'coreference']);

/**
 * n sentences of the grammar with their dependencies; the same seed gives the same sentences. Words are the
 * grammar's (lower case, the sentence's final '.' included); `text` is them joined by spaces. The grammar
 * writes sequences of a few sentences; no dependency crosses a sentence's end, so each is cut at its '.'.
 * @param {import('./lab.js').Headlab} lab
 * @param {{ n: number, seed?: number }} options
 */
export async function syntaxSentences(lab, options) {
  const fn = 'findings.syntaxSentences';
  if (options === undefined) throw new TypeError(`${fn}: expected an options object { n, seed }, got ${describe(options)}`);
  requireObject(fn, options, ['n', 'seed']);
  const n = requireDim(fn, 'n', options.n);
  if (n > 10000) throw new RangeError(`${fn}: n must be at most 10000, got ${n}`);
  const seed = options.seed === undefined ? 0 : requireSeed(fn, 'seed', options.seed);
  const module = await lab._trainModule();
  const out = [];
  for (const { words, arcs } of module.englishSyntax(n, seed)) {
    for (let start = 0; start < words.length && out.length < n;) {
      const end = words.indexOf('.', start) + 1;
      if (end === 0) throw new Error(`${fn}: the grammar wrote a sequence without a final '.' (a bug in HeadLab)`);
      const inside = (k) => k >= start && k < end;
      const mine = arcs.filter((a) => inside(a.dependent) || inside(a.head));
      if (mine.some((a) => !inside(a.dependent) || !inside(a.head))) throw new Error(`${fn}: a dependency crosses a sentence's end (a bug in HeadLab)`);
      const sentence = words.slice(start, end);
      out.push({ text: sentence.join(' '), words: sentence, arcs: mine.map((a) => ({ ...a, dependent: a.dependent - start, head: a.head - start })) });
      start = end;
    }
    if (out.length === n) break;
  }
  return out;
}

/**
 * Which token positions of `ids` (the model's tokens of the words joined by spaces, special tokens
 * included: `model.tokenize(words.join(' ')).ids`, which the caller already has) belong to each word of
 * `words`: [firstToken, endToken) per word, or null when the model's
 * tokenizer does not split the text at the words' spaces. Tokenizing a prefix of the words must give a
 * prefix of the text's tokens (true of byte-level BPE, SentencePiece-style BPE and WordPiece, whose
 * pre-tokenizers split at spaces); the special tokens the tokenizer adds (those of an empty text: BOS,
 * [CLS] … [SEP]) belong to no word.
 */
export function wordSpans(model, words, ids) {
  const specials = Array.from(model.tokenize('').ids);
  const full = Array.from(ids);
  let lead = 0;
  while (lead < specials.length && full[lead] === specials[lead]) lead++;
  const inner = (t) => innerIds(t, specials);
  const plain = inner(full);
  if (!plain) return null;
  const spans = [];
  let at = 0;
  for (let k = 0; k < words.length; k++) {
    const prefix = k === words.length - 1 ? plain : inner(Array.from(model.tokenize(words.slice(0, k + 1).join(' ')).ids));
    if (!prefix) return null;
    const end = prefix.length;
    if (end <= at || end > plain.length || prefix.some((x, i) => plain[i] !== x)) return null;
    spans.push([lead + at, lead + end]);
    at = end;
  }
  return spans;
}

/**
 * The word-level attention of one head: [W, W], rows the attending word (mean over its tokens), columns
 * the attended word (sum over its tokens). `attention` is [L, H, T, T].
 */
export function wordAttention(attention, T, heads, layer, head, spans) {
  const W = spans.length;
  const out = new Float64Array(W * W);
  const base = (layer * heads + head) * T * T;
  for (let i = 0; i < W; i++) {
    const [a, b] = spans[i];
    for (let q = a; q < b; q++) {
      for (let j = 0; j < W; j++) {
        let sum = 0;
        for (let k = spans[j][0]; k < spans[j][1]; k++) sum += attention[base + q * T + k];
        out[i * W + j] += sum / (b - a);
      }
    }
  }
  return out;
}

/**
 * Scores every head of `model` on `sentences` (from syntaxSentences): per relation, each head's accuracy
 * (the share of arcs whose dependent's most-attended other word is its head word), the best head, and
 * the best fixed offset's accuracy on the same arcs. A sentence the tokenizer does not split at its
 * words' spaces, or longer than the model's context, is skipped and counted.
 * @param {{ model: object, sentences: Array<{ text: string, words: string[], arcs: object[] }>,
 *   onProgress?: Function, signal?: AbortSignal }} options
 */
export async function syntaxHeads(options) {
  const fn = 'findings.syntaxHeads';
  requireObject(fn, options, ['model', 'sentences', 'onProgress', 'signal']);
  const { model, sentences, onProgress, signal } = options;
  if (!model || typeof model.run !== 'function' || typeof model.tokenize !== 'function' || !model.info) {
    throw new TypeError(`${fn}: model must be a model from lab.loadPretrained, got ${describe(model)}`);
  }
  if (!Array.isArray(sentences) || sentences.length === 0) {
    throw new TypeError(`${fn}: sentences must be a non-empty array from lab.findings.syntaxSentences, got ${describe(sentences)}`);
  }
  sentences.forEach((s, i) => {
    if (!s || !Array.isArray(s.words) || !Array.isArray(s.arcs)) throw new TypeError(`${fn}: sentences[${i}] must be { words, arcs } (lab.findings.syntaxSentences), got ${describe(s)}`);
  });
  if (onProgress !== undefined && typeof onProgress !== 'function') throw new TypeError(`${fn}: onProgress must be a function, got ${describe(onProgress)}`);
  const { numLayers: L, numHeads: H } = model.info;
  const hits = Object.fromEntries(SYNTAX_RELATIONS.map((r) => [r, new Float64Array(L * H)]));
  const arcs = Object.fromEntries(SYNTAX_RELATIONS.map((r) => [r, 0]));
  const offsets = Object.fromEntries(SYNTAX_RELATIONS.map((r) => [r, new Map()]));
  let used = 0, skipped = 0;
  for (let s = 0; s < sentences.length; s++) {
    if (signal?.aborted) throw abortError(fn, null, signal);
    const { words, arcs: sentenceArcs } = sentences[s];
    const text = words.join(' ');
    // Tokenized once: the length check, the run and the words' spans all read these ids.
    const ids = Array.from(model.tokenize(text).ids);
    const tooLong = model.info.contextLength !== undefined && ids.length > model.info.contextLength;
    const run = tooLong ? null : await model.run(ids, { attention: true });
    const spans = run && wordSpans(model, words, ids);
    if (!spans) {
      skipped++;
    } else {
      used++;
      const T = run.ids.length;
      const W = words.length;
      for (let l = 0; l < L; l++) {
        for (let h = 0; h < H; h++) {
          const A = wordAttention(run.attention, T, H, l, h, spans);
          for (const a of sentenceArcs) {
            // The most-attended other word; none when the row gives no other word any attention.
            let best = -1, bestValue = 0;
            for (let j = 0; j < W; j++) {
              if (j !== a.dependent && A[a.dependent * W + j] > bestValue) { best = j; bestValue = A[a.dependent * W + j]; }
            }
            if (best === a.head) hits[a.relation][l * H + h]++;
          }
        }
      }
      for (const a of sentenceArcs) {
        arcs[a.relation]++;
        const k = a.head - a.dependent;
        offsets[a.relation].set(k, (offsets[a.relation].get(k) ?? 0) + 1);
      }
    }
    onProgress?.({ done: s + 1, total: sentences.length });
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  const relations = SYNTAX_RELATIONS.filter((r) => arcs[r] > 0).map((relation) => {
    const n = arcs[relation];
    const accuracy = Float64Array.from(hits[relation], (x) => x / n);
    let best = 0;
    for (let i = 1; i < accuracy.length; i++) if (accuracy[i] > accuracy[best]) best = i;
    const [offset, count] = [...offsets[relation]].sort((a, b) => b[1] - a[1] || Math.abs(a[0]) - Math.abs(b[0]))[0];
    return {
      relation, arcs: n, accuracy,
      best: { layer: Math.floor(best / H), head: best % H, accuracy: accuracy[best] },
      baseline: { offset, accuracy: count / n },
    };
  });
  return { sentences: used, skipped, shape: [L, H], relations };
}
