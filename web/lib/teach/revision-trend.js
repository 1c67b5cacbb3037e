// Each head's induction score across a model's training revisions (issue 34): Pythia publishes its
// checkpoints as git revisions `step0` … `step143000` of one hub repository. The explorer's "Across
// training" section (components/model-explorer/revision-trend.js) draws what this collects. No DOM:
// a revision is scored by `score(revision, signal)`, which the explorer sends to its Worker
// (explorer-session.js's 'revision' request: a second model loaded, headScores() taken, freed),
// a fake in the Node tests. One revision at a time, so at most one extra model is in memory.
//
// States
//   idle       nothing run yet (or a new model)
//   running    revisions being scored, one after another (`progress`)
//   done       every revision tried (some may have failed: `failures`)
//   cancelled  stop() during a run: the revisions scored so far are kept
// Transitions: idle|done|cancelled run() → running; running → done | cancelled; any reset() → idle.

/**
 * Olsson et al. (2022) see induction heads form in a phase change early in training (within the
 * first few billion tokens; Pythia's step 1000 is ~2B tokens): a few steps across it, spaced about
 * ×2, and the final checkpoint. Each revision is a whole model download, so the list is short.
 */
export const DEFAULT_REVISIONS = Object.freeze(['step0', 'step1000', 'step2000', 'step4000', 'step8000', 'step143000']);

/** Pythia's last training step: its `main` revision is this checkpoint. */
export const PYTHIA_LAST_STEP = 143000;

export const TRANSITIONS = {
  idle: ['running', 'idle'],
  running: ['done', 'cancelled', 'idle'],
  done: ['running', 'idle'],
  cancelled: ['running', 'idle'],
};

/** Whether a model has Pythia's training revisions: a GPT-NeoX checkpoint, or a hub id EleutherAI/pythia-*. */
export function hasTrainingRevisions(info, source) {
  if (source?.kind === 'hub' && /^EleutherAI\/pythia-/i.test(String(source.id ?? ''))) return true;
  return info?.architecture === 'GPTNeoXForCausalLM' && source?.kind === 'hub';
}

/** The training step a revision names: `step1000` → 1000, `main` → Pythia's last step; null for any other name. */
export function stepOf(revision) {
  const m = /^step(\d+)$/.exec(revision);
  if (m) return Number(m[1]);
  return revision === 'main' ? PYTHIA_LAST_STEP : null;
}

/**
 * Revisions from what a learner typed: separated by commas, spaces or new lines; duplicates dropped,
 * order kept. A name a hub revision cannot have (`..`, a space, nothing) is refused, naming it.
 * @returns {{ revisions: string[], bad: string[] }}
 */
export function parseRevisions(text) {
  if (typeof text !== 'string') throw new TypeError(`parseRevisions(text): text must be a string, got ${text === null ? 'null' : typeof text}`);
  const revisions = [], bad = [];
  for (const word of text.split(/[\s,;]+/).filter(Boolean)) {
    if (word.includes('..') || !/^[A-Za-z0-9._\-/]+$/.test(word) || word.length > 100) bad.push(word);
    else if (!revisions.includes(word)) revisions.push(word);
  }
  return { revisions, bad };
}

/**
 * headScores()'s answer as a grid of induction scores: grid[layer][head] (NaN where a head has none).
 * @param {{ scores: {layer: number, head: number, induction: number}[] } | {layer: number, head: number, induction: number}[]} scores
 */
export function inductionGrid(scores, layers, heads) {
  const list = Array.isArray(scores) ? scores : scores?.scores;
  if (!Array.isArray(list)) throw new TypeError('inductionGrid(scores): scores must be headScores()\'s answer or its scores list');
  const grid = Array.from({ length: layers }, () => new Array(heads).fill(NaN));
  for (const s of list) if (s.layer < layers && s.head < heads) grid[s.layer][s.head] = s.induction;
  return grid;
}

/** The points in training order (by step; revisions without a step after them, in the order run). */
export function ordered(points) {
  return points.map((p, i) => ({ p, i }))
    .sort((a, b) => (a.p.step ?? Infinity) - (b.p.step ?? Infinity) || a.i - b.i).map((x) => x.p);
}

/** The `k` heads with the highest induction score at the last revision in training order: [{ layer, head, score }]. */
export function topHeads(points, k = 3) {
  const last = ordered(points).at(-1);
  if (!last) return [];
  const all = [];
  last.scores.forEach((row, layer) => row.forEach((score, head) => { if (Number.isFinite(score)) all.push({ layer, head, score }); }));
  return all.sort((a, b) => b.score - a.score || a.layer - b.layer || a.head - b.head).slice(0, k);
}

export class RevisionTrend {
  /**
   * @param {object} o
   * @param {(revision: string, signal: AbortSignal | null) => Promise<{ scores: object, info: { numLayers: number, numHeads: number } }>}
   *   o.score
   *   loads one revision, takes headScores(), frees it
   * @param {(type: string, detail: object) => void} [o.emit]  'state', 'progress', 'point', 'failure'
   */
  constructor({ score, emit = () => {} }) {
    if (typeof score !== 'function') throw new TypeError('RevisionTrend: score must be a function (revision, signal) => Promise<{ scores, info }>');
    this.score = score;
    this.emit = emit;
    this.state = 'idle';
    this.points = [];      // { revision, step, scores: [layer][head] }
    this.failures = [];    // { revision, message }
    this.progress = null;  // { done, total, revision } while running
    this.revisions = [];
    this._abort = null;
    this._job = 0;
  }

  go(to, reason = '') {
    const from = this.state;
    if (!TRANSITIONS[from].includes(to)) throw new Error(`revision trend: no transition from ${from} to ${to}`);
    this.state = to;
    this.emit('state', { from, to, reason });
  }

  /**
   * Scores each revision in turn. A revision that fails is reported (`failures`) and the others kept.
   * Resolves when every revision was tried or stop() was called.
   * @param {string[]} revisions
   */
  async run(revisions) {
    if (!Array.isArray(revisions) || revisions.length === 0 || !revisions.every((r) => typeof r === 'string' && r.length > 0)) {
      throw new TypeError(`RevisionTrend.run(revisions): revisions must be a non-empty list of revision names, got ${JSON.stringify(revisions)}`);
    }
    if (this.state === 'running') throw new Error('RevisionTrend.run: a run is on its way; stop() it first');
    const job = ++this._job;
    this.revisions = [...revisions];
    this.points = [];
    this.failures = [];
    this.go('running', 'run');
    let shape = null;
    for (let i = 0; i < revisions.length; i++) {
      const revision = revisions[i];
      this.progress = { done: i, total: revisions.length, revision };
      this.emit('progress', this.progress);
      const abort = (this._abort = typeof AbortController === 'function' ? new AbortController() : null);
      try {
        const { scores, info } = await this.score(revision, abort?.signal ?? null);
        if (job !== this._job) return;
        const L = info.numLayers, H = info.numHeads;
        if (shape && (shape[0] !== L || shape[1] !== H)) {
          throw new Error(`it has ${L} layers × ${H} heads where ${this.points[0].revision} has ${shape[0]} × ${shape[1]}: not the same model`);
        }
        shape ??= [L, H];
        const point = { revision, step: stepOf(revision), scores: inductionGrid(scores, L, H) };
        this.points.push(point);
        this.emit('point', point);
      } catch (e) {
        if (job !== this._job) return;
        const failure = { revision, message: String(e?.message ?? e), code: e?.code ?? '', params: e?.params ?? {} };
        this.failures.push(failure);
        this.emit('failure', failure);
      }
    }
    this._abort = null;
    this.progress = { done: revisions.length, total: revisions.length, revision: null };
    this.go('done', 'finished');
  }

  /** Stops a run: the revision on its way is abandoned (its download aborted), the ones scored are kept. */
  stop() {
    if (this.state !== 'running') return false;
    this._job += 1;
    this._abort?.abort();
    this._abort = null;
    this.go('cancelled', 'stop');
    return true;
  }

  /** A new model: forget the points. */
  reset() {
    this.stop();
    this._job += 1;
    this.points = [];
    this.failures = [];
    this.progress = null;
    this.go('idle', 'reset');
  }

  /** The heads to draw strongly: the top `k` of the last revision in training order. */
  top(k = 3) { return topHeads(this.points, k); }
}
