// HeadLab's own small language models (web/models/*.hlm, a LanguageModel of
// web/lib/api/language-model.js) behind the methods of a PretrainedModel
// (web/lib/api/pretrained.js), so <headlab-model-explorer> drives both the same way.
// Every number comes from the LanguageModel; this file only reshapes.
//
// What differs from a PretrainedModel, and why:
//   tokenize   the model's words, not BPE: the text is lower-cased and "." , ! ? are split
//              off as words (the cricket vocabulary holds "."); an unknown word is the
//              LanguageModel's RangeError, which names it
//   run        `logits` are log-probabilities (the logits shifted by their log-sum-exp: the
//              same softmax); ablation switches heads off for the call and back after it
//   headScores the model's own detectors (LanguageModel#headScores): means over held-out
//              sequences of its task, not TransformerLens's one repeated random sequence,
//              so `sequence` is null and `basis` says 'task'. All four scores are there;
//              the cricket model adds `coreference`
//   logitLens  not there: the LanguageModel does not expose its residual stream

/** The models HeadLab ships (web/models/, `npm run train:models`), with a text each reads. */
export const SHIPPED_MODELS = [
  { name: 'induction', file: 'induction.hlm', title: 'Induction, 2 layers', bytes: 46299,
    text: 'j 4 e p x 2 m q b k r p x 2 m q', about: 'copies a repeated stretch of letters and digits' },
  { name: 'induction-1-layer', file: 'induction-1-layer.hlm', title: 'Induction, 1 layer', bytes: 29143,
    text: 'j 4 e p x 2 m q b k r p x 2 m q', about: 'the same task with one layer: it cannot copy' },
  { name: 'cricket', file: 'cricket.hlm', title: 'Cricket commentary', bytes: 47869,
    text: 'virat hit the ball because it was', about: 'toy commentary: what “it” refers to' },
];

/** Text → the model's words: lower case, sentence marks as words of their own. */
export function shippedWords(text) {
  if (typeof text !== 'string') throw new TypeError(`ShippedModel.tokenize: text must be a string, got ${text === null ? 'null' : typeof text}`);
  return text.toLowerCase().replace(/([.,!?])/g, ' $1 ').split(/\s+/).filter((w) => w.length > 0);
}

export class ShippedModel {
  /**
   * @param {import('../api/language-model.js').LanguageModel} lm  a loaded model (this object owns it)
   * @param {{ name: string, bytes?: number }} [o]
   */
  constructor(lm, { name = 'headlab', bytes = 0 } = {}) {
    this._lm = lm;
    const c = lm.config();
    const task = lm.task;
    this._vocabulary = task.vocabulary;
    this._seqLen = task.seqLen;
    this.info = {
      architecture: 'headlab', name, task: task.name, numLayers: c.numLayers, numHeads: c.numHeads, dModel: c.dModel,
      vocabSize: task.vocabulary.length, contextLength: task.seqLen, parameters: null, dtype: 'float32', bytes,
    };
  }

  /** { ids, tokens } with the start token first, as the LanguageModel reads the text. */
  tokenize(text) {
    // LanguageModel#tokenize gives { ids, tokens: words } from HeadLab 0.3 on, { tokens: ids, words } before.
    const r = this._lm.tokenize(shippedWords(text).join(' '));
    return { ids: r.ids ?? r.tokens, tokens: r.words };
  }

  _ids(textOrIds) {
    if (typeof textOrIds === 'string') return this.tokenize(textOrIds).ids;
    return Int32Array.from(textOrIds);
  }

  /** Runs `fn` with the heads in `ablate` switched off, then puts every switch back. */
  _withAblation(ablate, fn) {
    const lm = this._lm;
    const changed = [];
    try {
      for (const { layer, head } of ablate) {
        if (lm.headEnabled(layer, head)) {
          lm.setHeadEnabled(layer, head, false);
          changed.push([layer, head]);
        }
      }
      return fn();
    } finally {
      for (const [layer, head] of changed) lm.setHeadEnabled(layer, head, true);
    }
  }

  /** log p over the vocabulary after the last of `ids`, in id order. */
  _logProbs(ids) {
    const v = this._vocabulary.length;
    const out = new Float32Array(v);
    for (const { id, probability } of this._lm.predict(ids, { topK: v })) out[id] = Math.log(probability);
    return out;
  }

  /**
   * PretrainedModel#run: { ids, tokens, logits, next, attention? }.
   * @param {string|Int32Array|number[]} textOrIds
   * @param {{ attention?: boolean, ablate?: {layer: number, head: number}[], allLogits?: boolean, topK?: number }} [o]
   */
  async run(textOrIds, { attention = false, ablate = [], allLogits = false, topK = 10 } = {}) {
    const ids = this._ids(textOrIds);
    return this._withAblation(ablate, () => {
      const v = this._vocabulary.length;
      let logits;
      if (allLogits) {
        logits = new Float32Array(ids.length * v);
        for (let t = 1; t <= ids.length; t++) logits.set(this._logProbs(ids.subarray(0, t)), (t - 1) * v);
      } else {
        logits = this._logProbs(ids);
      }
      const next = this._lm.predict(ids, { topK: Math.min(topK, v) }).map(({ id, token, probability }) => ({ id, token, probability }));
      const out = { ids, tokens: Array.from(ids, (i) => this._vocabulary[i]), logits, next };
      if (attention) out.attention = this._lm.attention(ids).weights;
      return out;
    });
  }

  /**
   * The LanguageModel's detector scores (see the top of this file): { sequence: null, basis: 'task',
   * examples, scores: [{ layer, head, previousToken, duplicateToken, induction, firstToken, coreference? }] }.
   */
  async headScores({ examples = 500 } = {}) {
    const scores = this._lm.headScores(examples).map((s) => {
      const out = { layer: s.layer, head: s.head, previousToken: s.previousToken, duplicateToken: s.duplicateToken,
        induction: s.induction, firstToken: s.firstToken };
      if (Number.isFinite(s.coreference)) out.coreference = s.coreference;
      return out;
    });
    return { sequence: null, basis: 'task', examples, scores };
  }

  /** PretrainedModel#generate: { ids, tokens, text } of the new tokens. */
  async generate(prompt, { maxTokens = 20, temperature = 1, seed = 1 } = {}) {
    const r = this._lm.generate({ prompt: shippedWords(prompt).join(' '), maxTokens, temperature, seed });
    const ids = Int32Array.from(r.newTokens, (t) => this._vocabulary.indexOf(t));
    return { ids, tokens: r.newTokens, text: r.newTokens.join(' ') };
  }

  dispose() {
    this._lm.dispose();
  }
}
