// The logic of the coming findings panel (issue 35), without the DOM: the IOI check run over a prompt set,
// one prompt at a time, so a view can show progress and the learner can stop it. It holds ONE state,
// changed only by the transitions below. Every number comes from the model it is handed, which implements
// the contract (the causal tools are coming; docs/findings.md):
//   model.info                                         { numLayers, numHeads }
//   model.tokenize(text)                               { ids }
//   await model.run(ids)                               { logits: [vocab] at the last position }
//   await model.patchHeads({ clean, corrupted, answer, wrong })      { effects: [layers × heads] }
//   await model.directLogitAttribution({ ids, answer, wrong })       { heads: [layers × heads], mlps: [layers] }
// and prompts come from lab.findings.ioiPrompts.
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

/** The paper's averages over its prompts, shown beside the measured ones. */
export const IOI_PAPER = Object.freeze({ logitDiff: 3.56, answerWins: 0.993 });

/** The `k` largest values of a layers × heads grid (row-major) as [{ layer, head, value }], largest first. */
export function topHeads(grid, heads, k = 3) {
  return Array.from(grid, (value, i) => ({ layer: Math.floor(i / heads), head: i % heads, value }))
    .sort((a, b) => b.value - a.value || a.layer - b.layer || a.head - b.head)
    .slice(0, k);
}

export class FindingsController {
  /**
   * @param {object} o
   * @param {{ findings: { ioiPrompts: Function } }} o.lab the lab, for the prompt sets
   * @param {(type: string, detail: object) => void} o.emit  state, progress, result, error
   */
  constructor({ lab, emit }) {
    Object.assign(this, { lab, emit });
    this.state = 'idle';
    this.model = null;
    this.progress = null;
    this.result = null;
    this.error = null;
    this._run = 0;  // a run's number: a cancelled run's late answers are dropped
    this._partial = null;  // the means of the run under way
  }

  /** Moves to `to`; a change the table does not allow is a bug, and throws. */
  go(to, reason = '') {
    const from = this.state;
    if (!TRANSITIONS[from].includes(to)) throw new Error(`findings controller: no transition from ${from} to ${to}`);
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

  /**
   * Measures the IOI check on `n` prompts of `seed`: for each, the logit difference, whether the answer
   * wins, patchHeads (clean → corrupted) and direct logit attribution on the clean prompt; the result is
   * their means. A prompt whose clean and corrupted texts tokenise to different lengths, or whose names are
   * not one token each, is skipped and counted (`skipped`).
   * @returns {Promise<void>} settles when the run ends (done, cancelled or error)
   */
  async run({ n = 20, seed = 0 } = {}) {
    if (!this.model) throw new Error('findings controller: run() before setModel()');
    const run = ++this._run;
    const { numLayers, numHeads } = this.model.info;
    const prompts = this.lab.findings.ioiPrompts({ n, seed });
    const size = numLayers * numHeads;
    const sum = { effects: new Float64Array(size), dla: new Float64Array(size), mlps: new Float64Array(numLayers), logitDiff: 0, wins: 0 };
    let measured = 0;
    let skipped = 0;
    this.result = null;
    this.error = null;
    this.progress = { done: 0, total: prompts.length };
    this.go('running', 'run');
    const means = () => (measured === 0 ? null : {
      prompts: measured,
      skipped,
      logitDiff: sum.logitDiff / measured,
      answerWins: sum.wins / measured,
      effects: Float64Array.from(sum.effects, (v) => v / measured),
      dlaHeads: Float64Array.from(sum.dla, (v) => v / measured),
      dlaMlps: Float64Array.from(sum.mlps, (v) => v / measured),
      topPatch: topHeads(Float64Array.from(sum.effects, (v) => v / measured), numHeads),
      topDla: topHeads(Float64Array.from(sum.dla, (v) => v / measured), numHeads),
      shape: [numLayers, numHeads],
    });
    this._partial = means;
    try {
      for (const p of prompts) {
        const clean = Array.from(this.model.tokenize(p.clean).ids);
        const corrupted = Array.from(this.model.tokenize(p.corrupted).ids);
        const answer = this.model.tokenize(p.answer).ids;
        const wrong = this.model.tokenize(p.wrong).ids;
        if (clean.length !== corrupted.length || answer.length !== 1 || wrong.length !== 1) {
          skipped++;
        } else {
          const args = { answer: answer[0], wrong: wrong[0] };
          const { logits } = await this.model.run(clean);
          if (run !== this._run) return;
          const patched = await this.model.patchHeads({ clean, corrupted, ...args });
          if (run !== this._run) return;
          const dla = await this.model.directLogitAttribution({ ids: clean, ...args });
          if (run !== this._run) return;
          for (let i = 0; i < size; i++) {
            sum.effects[i] += patched.effects[i];
            sum.dla[i] += dla.heads[i];
          }
          for (let l = 0; l < numLayers; l++) sum.mlps[l] += dla.mlps[l];
          const diff = logits[args.answer] - logits[args.wrong];
          sum.logitDiff += diff;
          sum.wins += diff > 0 ? 1 : 0;
          measured++;
        }
        this.progress = { done: this.progress.done + 1, total: prompts.length };
        this.emit('progress', { ...this.progress });
      }
    } catch (e) {
      if (run !== this._run) return;
      this.error = e instanceof Error ? e.message : String(e);
      this.go('error', 'failed');
      this.emit('error', { message: this.error });
      return;
    }
    this.result = means();
    this.go('done', 'finished');
    this.emit('result', this.result);
  }

  /** Stops a run between prompts; the means so far stay in `result`. */
  cancel() {
    if (this.state !== 'running') return;
    this._run++;
    this.result = this._partial?.() ?? null;
    this.go('cancelled', 'cancel');
  }
}
