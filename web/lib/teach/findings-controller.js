// The logic of the findings panel (issue 35; web/components/model-explorer/findings-panel.js draws it),
// without the DOM: the IOI check run over a prompt set, one prompt at a time, so a view can show progress
// and the learner can stop it. It holds ONE state, changed only by the transitions below. Every number
// comes from the model it is handed (a PretrainedModel, or the explorer's proxy to one in its Worker):
//   model.info                                         { numLayers, numHeads, kind? ('encoder' | 'decoder') }
//   [await] model.tokenize(text)                       { ids } (with the tokenizer's special tokens, if any)
//   await model.patchHeads({ clean, corrupted, answer, wrong })
//                                                      { effects: [layers × heads], metricClean }
//   await model.directLogitAttribution({ ids, answer, wrong })       { heads: [layers × heads], mlps: [layers] }
//   model.maskToken                                    an encoder's mask token ('[MASK]', '<mask>')
// and prompts come from lab.findings.ioiPrompts. An encoder has no direct logit attribution (its logits are
// no sum of parts): its prompts end with the mask token, where patchHeads reads the metric, and the
// result's DLA fields are null. The induction and attention-sink cards need no run: inductionFinding and
// sinkFinding below read model.headScores()'s answer.
//
// States
//   idle       nothing run yet (or a model was handed over)
//   running    prompts are being measured (`progress` = { done, total })
//   done       `result` holds the means over the prompts measured
//   cancelled  the learner stopped a run; `result` holds the means so far (or null)
//   error      a call failed (`error` says why)
//
// Transitions (TRANSITIONS below is the table go() enforces: any other change throws)
//   idle       run() → running
//   running    finished → done; cancel() → cancelled; failed → error
//   done, cancelled, error    run() → running
//   any but running           setModel() → idle

import { continuationIds, innerIds } from '../api/specials.js';
import { SINK, sinkHeads } from './explorer-families.js';

/** Every allowed change of state: from → the states it may go to. */
export const TRANSITIONS = {
  idle: ['running'],
  running: ['done', 'cancelled', 'error'],
  done: ['running', 'idle'],
  cancelled: ['running', 'idle'],
  error: ['running', 'idle'],
};

/** The IOI paper's heads in GPT-2 small (Wang et al. 2022), by role: what the panel outlines. */
export const IOI_PAPER_HEADS = Object.freeze({
  nameMover: [[9, 9], [9, 6], [10, 0]],
  negativeNameMover: [[10, 7], [11, 10]],
  sInhibition: [[7, 3], [7, 9], [8, 6], [8, 10]],
  induction: [[5, 5], [5, 8], [5, 9], [6, 9]],
  duplicateToken: [[0, 1], [0, 10], [3, 0]],
  previousToken: [[2, 2], [4, 11]],
  backupNameMover: [[10, 10], [10, 6], [10, 2], [10, 1], [11, 2], [9, 7], [9, 0], [11, 9]],
});

/** The IOI paper's roles in the order a legend lists them. */
export const IOI_ROLES = Object.freeze(Object.keys(IOI_PAPER_HEADS));

/** The paper's averages over its prompts, shown beside the measured ones. */
export const IOI_PAPER = Object.freeze({ logitDiff: 3.56, answerWins: 0.993 });

/** GPT-2 small's shape: the papers' head numbers refer to it. */
export const GPT2_SMALL = Object.freeze({ numLayers: 12, numHeads: 12 });

/** Olsson et al. (2022): GPT-2 small's heads with the highest induction scores. */
export const INDUCTION_PAPER_HEADS = Object.freeze([[5, 5], [6, 9], [7, 10], [5, 1]]);

/** Whether a model has GPT-2 small's layers × heads (the papers' outlines mean something only then). */
export function isGpt2SmallShape(info) {
  return info?.numLayers === GPT2_SMALL.numLayers && info?.numHeads === GPT2_SMALL.numHeads;
}

/**
 * The paper's IOI heads that exist in a model of this shape, as [{ layer, head, role }] (a head in two
 * roles is listed once, under its first): what a heatmap outlines.
 */
export function paperOutlines({ numLayers, numHeads }) {
  const seen = new Set();
  const out = [];
  for (const role of IOI_ROLES) {
    for (const [layer, head] of IOI_PAPER_HEADS[role]) {
      const key = `${layer}.${head}`;
      if (layer < numLayers && head < numHeads && !seen.has(key)) {
        seen.add(key);
        out.push({ layer, head, role });
      }
    }
  }
  return out;
}

/** headScores()'s list as a layers × heads grid (row-major) of one score. */
export function scoreGrid(scores, { numLayers, numHeads }, key) {
  const grid = new Float64Array(numLayers * numHeads).fill(NaN);
  for (const s of scores) {
    if (s.layer < numLayers && s.head < numHeads) grid[s.layer * numHeads + s.head] = s[key];
  }
  return grid;
}

/**
 * The induction card: headScores()'s induction scores, the `k` highest heads, and where the paper's
 * GPT-2 small heads (5.5, 6.9, 7.10, 5.1) rank in this model (rank from 1; null when the model has no such
 * head). `found` counts the paper's heads among the top k (k = 4 by default, as many as the paper names).
 * @param {Array<{layer: number, head: number, induction: number}>} scores
 * @param {{numLayers: number, numHeads: number}} shape
 */
export function inductionFinding(scores, shape, k = INDUCTION_PAPER_HEADS.length) {
  if (!Array.isArray(scores)) throw new TypeError(`inductionFinding: scores must be headScores().scores, got ${typeof scores}`);
  const grid = scoreGrid(scores, shape, 'induction');
  const ranked = topHeads(grid.map((v) => (Number.isFinite(v) ? v : -Infinity)), shape.numHeads, grid.length);
  const rankOf = new Map(ranked.map((h, i) => [`${h.layer}.${h.head}`, i + 1]));
  const top = ranked.slice(0, k);
  const paper = INDUCTION_PAPER_HEADS.map(([layer, head]) => {
    const inside = layer < shape.numLayers && head < shape.numHeads;
    return { layer, head, value: inside ? grid[layer * shape.numHeads + head] : null, rank: inside ? rankOf.get(`${layer}.${head}`) : null };
  });
  return { grid, top, paper, found: paper.filter((p) => p.rank !== null && p.rank <= k).length, k };
}

/**
 * The attention-sink card: the sink line's count (explorer-families.js's sinkHeads, SINK: the same heads,
 * total and share), with headScores()'s firstToken scores (the mean attention on position 0) as a
 * layers × heads grid for the heatmap, `count` (heads.length) and the `top` 3 heads by that score.
 */
export function sinkFinding(scores, shape, threshold = SINK) {
  if (!Array.isArray(scores)) throw new TypeError(`sinkFinding: scores must be headScores().scores, got ${typeof scores}`);
  const sinks = sinkHeads(scores, threshold);
  const grid = scoreGrid(scores, shape, 'firstToken');
  const top = topHeads(grid.map((v) => (Number.isFinite(v) ? v : -Infinity)), shape.numHeads, 3);
  return { ...sinks, count: sinks.heads.length, grid, top };
}

/** The `k` largest values of a layers × heads grid (row-major) as [{ layer, head, value }], largest first. */
export function topHeads(grid, heads, k = 3) {
  return Array.from(grid, (value, i) => ({ layer: Math.floor(i / heads), head: i % heads, value }))
    .sort((a, b) => b.value - a.value || a.layer - b.layer || a.head - b.head)
    .slice(0, k);
}

/**
 * The model contract above over a session's requests (explorer-session.js's 'findings' request, in the
 * explorer's Worker or on the page): `request(type, payload)` resolves to the session's result.
 * @param {(type: string, payload: object) => Promise<any>} request
 * @param {{ numLayers: number, numHeads: number }} shape  the loaded model's
 */
export async function sessionModel(request, { numLayers, numHeads }) {
  const ask = (op, options) => request('findings', { op, options });
  const described = await ask('describe');
  return {
    info: { numLayers, numHeads, kind: described.kind },
    maskToken: described.maskToken,
    causal: described.causal,
    tokenize: (text) => ask('tokenize', text),
    patchHeads: (o) => ask('patchHeads', o),
    directLogitAttribution: (o) => ask('directLogitAttribution', o),
    syntaxHeads: (o) => ask('syntaxHeads', o),
    stopSyntax: () => ask('stopSyntax'),
  };
}

/**
 * What the IOI and the syntax controllers share: the states of TRANSITIONS, the model, the run's
 * number (a cancelled or replaced run's late answers are dropped) and the checks of run()'s options.
 * `name` starts each error message.
 */
class RunController {
  constructor(name, emit) {
    this.name = name;
    this.emit = emit;
    this.state = 'idle';
    this.model = null;
    this.result = null;
    this.error = null;
    this._run = 0;
  }

  /** Moves to `to`; a change the table does not allow is a bug, and throws. */
  go(to, reason = '') {
    const from = this.state;
    if (!TRANSITIONS[from].includes(to)) throw new Error(`${this.name}: no transition from ${from} to ${to}`);
    this.state = to;
    this.emit('state', { from, to, reason });
  }

  /** The model to measure; results of another model are dropped. */
  setModel(model) {
    if (this.state === 'running') this.cancel();
    this.model = model;
    this.result = null;
    if (this.state !== 'idle') this.go('idle', 'model');
  }

  /** Checks run()'s options, stops a run under way; returns the new run's number. */
  _begin(n, seed) {
    if (!this.model) throw new Error(`${this.name}: run() before setModel()`);
    if (!Number.isInteger(n) || n < 1 || n > 1000) throw new RangeError(`${this.name}: n must be an integer in 1..1000, got ${n}`);
    if (!Number.isInteger(seed) || seed < 0) throw new RangeError(`${this.name}: seed must be an integer ≥ 0, got ${seed}`);
    if (this.state === 'running') this.cancel();
    this.result = null;
    this.error = null;
    return ++this._run;
  }

  /** Ends run `run` in the error state with `e`'s message (nothing if the run was cancelled meanwhile). */
  _fail(run, e) {
    if (run !== this._run) return;
    this.error = e instanceof Error ? e.message : String(e);
    this.go('error', 'failed');
    this.emit('error', { message: this.error });
  }

  /** Ends the run with `result`. */
  _finish(result) {
    this.result = result;
    this.go('done', 'finished');
    this.emit('result', this.result);
  }

  /** Stops a run under way: its late answers are dropped. */
  cancel() {
    if (this.state !== 'running') return;
    this._run++;
    this._cancelled();
    this.go('cancelled', 'cancel');
  }

  _cancelled() {}
}

export class FindingsController extends RunController {
  /**
   * @param {object} o
   * @param {{ findings: { ioiPrompts: Function } }} o.lab the lab, for the prompt sets
   * @param {(type: string, detail: object) => void} o.emit  state, progress, result, error
   */
  constructor({ lab, emit }) {
    super('findings controller', emit);
    this.lab = lab;
    this.progress = null;
    this._partial = null;  // the means of the run under way
  }

  /**
   * Measures the IOI check on `n` prompts of `seed`: for each, the logit difference (patchHeads'
   * metricClean), whether the answer wins, patchHeads (clean → corrupted) and direct logit attribution on
   * the clean prompt; the result is their means. A prompt whose clean and corrupted texts tokenise to
   * different lengths, or whose names are not one token each, is skipped and counted (`skipped`).
   * @returns {Promise<void>} settles when the run ends (done, cancelled or error)
   */
  async run({ n = 20, seed = 0 } = {}) {
    const run = this._begin(n, seed);
    const { numLayers, numHeads } = this.model.info;
    const encoder = this.model.info.kind === 'encoder';
    const mask = encoder ? ` ${this.model.maskToken ?? '[MASK]'}.` : '';
    const prompts = this.lab.findings.ioiPrompts({ n, seed }).map((p) => ({ ...p, clean: p.clean + mask, corrupted: p.corrupted + mask }));
    const size = numLayers * numHeads;
    const sum = { effects: new Float64Array(size), dla: new Float64Array(size), mlps: new Float64Array(numLayers), logitDiff: 0, wins: 0 };
    let measured = 0;
    let skipped = 0;
    this.progress = { done: 0, total: prompts.length };
    this.go('running', 'run');
    const means = () => (measured === 0 ? null : {
      prompts: measured,
      skipped,
      logitDiff: sum.logitDiff / measured,
      answerWins: sum.wins / measured,
      effects: Float64Array.from(sum.effects, (v) => v / measured),
      dlaHeads: encoder ? null : Float64Array.from(sum.dla, (v) => v / measured),
      dlaMlps: encoder ? null : Float64Array.from(sum.mlps, (v) => v / measured),
      topPatch: topHeads(Float64Array.from(sum.effects, (v) => v / measured), numHeads),
      topDla: encoder ? null : topHeads(Float64Array.from(sum.dla, (v) => v / measured), numHeads),
      shape: [numLayers, numHeads],
      encoder,
    });
    this._partial = means;
    try {
      const specials = Array.from((await this.model.tokenize('')).ids);  // what the tokenizer adds around any text
      for (const p of prompts) {
        // A name's token as it follows the prompt (a decoder: ' Mary' after "… to" is one token in GPT-2's
        // BPE and in Llama's SentencePiece, where ' Mary' alone is two); an encoder's fills the mask (no space).
        const texts = encoder ? [p.clean, p.corrupted, p.answer.trim(), p.wrong.trim()]
          : [p.clean, p.corrupted, p.clean + p.answer, p.clean + p.wrong];
        const [clean, corrupted, withAnswer, withWrong] = (await Promise.all(texts.map((text) => this.model.tokenize(text))))
          .map((r) => Array.from(r.ids));
        if (run !== this._run) return;
        const answer = encoder ? innerIds(withAnswer, specials) : continuationIds(clean, withAnswer, specials);
        const wrong = encoder ? innerIds(withWrong, specials) : continuationIds(clean, withWrong, specials);
        if (clean.length !== corrupted.length || answer?.length !== 1 || wrong?.length !== 1) {
          skipped++;
        } else {
          const args = { answer: answer[0], wrong: wrong[0] };
          const patched = await this.model.patchHeads({ clean, corrupted, ...args });
          if (run !== this._run) return;
          if (!encoder) {
            const dla = await this.model.directLogitAttribution({ ids: clean, ...args });
            if (run !== this._run) return;
            for (let i = 0; i < size; i++) sum.dla[i] += dla.heads[i];
            for (let l = 0; l < numLayers; l++) sum.mlps[l] += dla.mlps[l];
          }
          for (let i = 0; i < size; i++) sum.effects[i] += patched.effects[i];
          const diff = patched.metricClean;
          sum.logitDiff += diff;
          sum.wins += diff > 0 ? 1 : 0;
          measured++;
        }
        this.progress = { done: this.progress.done + 1, total: prompts.length };
        this.emit('progress', { ...this.progress });
      }
    } catch (e) {
      this._fail(run, e);
      return;
    }
    this._finish(means());
  }

  /** A run stops between prompts; the means so far stay in `result`. */
  _cancelled() {
    this.result = this._partial?.() ?? null;
  }
}

/**
 * Clark et al. (2019) on bert-base-uncased, as the paper names its heads (layer-head): the relations
 * HeadLab's grammar also writes (it has no possessives), with the paper's head accuracy and best fixed
 * offset where it gives one.
 */
export const CLARK_PAPER = Object.freeze({
  determiner: { head: '8-11', accuracy: 0.943, baseline: 0.517 },
  object: { head: '8-10', accuracy: 0.868, baseline: 0.4 },
  coreference: { head: '5-4', accuracy: 0.65, baseline: null },
});

/**
 * The syntax-heads card's run, without the DOM: one call of the model's `syntaxHeads({ n, seed })` (the
 * explorer session scores the grammar's sentences in its Worker with lab.findings.syntaxHeads) and
 * `stopSyntax()` to stop it. States and transitions as FindingsController's (TRANSITIONS): idle, running,
 * done, cancelled, error. `result` is syntaxHeads' answer with each relation's paper numbers (`paper`,
 * null for a relation the paper does not report).
 */
export class SyntaxController extends RunController {
  /** @param {{ emit: (type: string, detail: object) => void }} o */
  constructor({ emit }) {
    super('syntax controller', emit);
    this.n = 0;
  }

  /** Scores every head on `n` of the grammar's sentences (seed `seed`). */
  async run({ n = 30, seed = 0 } = {}) {
    const run = this._begin(n, seed);
    this.n = n;
    this.go('running', 'run');
    let answer;
    try {
      answer = await this.model.syntaxHeads({ n, seed });
    } catch (e) {
      this._fail(run, e);
      return;
    }
    if (run !== this._run) return;
    this._finish({ ...answer, relations: answer.relations.map((r) => ({ ...r, paper: CLARK_PAPER[r.relation] ?? null })) });
  }

  /** The model is told to stop; its late answer is dropped. */
  _cancelled() {
    Promise.resolve(this.model?.stopSyntax?.()).catch(() => {});
  }
}
