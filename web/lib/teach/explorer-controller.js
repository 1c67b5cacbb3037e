// The logic of <headlab-model-explorer>, without the DOM: which model is loaded or on its
// way, what the text is, which heads are off, and the results the element draws. It holds
// ONE state, changed only by the transitions listed below. Requests go to a client with
// request(type, payload, transfer) (components/shared/worker/trainer-client.js opening an
// explorer-session.js in the explorer Worker; a fake in the Node tests), which reports
// { event: 'progress' } and { event: 'paused', reason: 'error', fatal } messages back.
//
// States
//   empty      no model (nothing loaded yet, or disposed)
//   loading    a model is on its way (download progress in `progress`); the old one is gone
//   ready      a model, with results for the text (or a problem with the text, in `textProblem`)
//   running    a model, and a run for the text and the switched-off heads is on its way
//   error      the model did not load, or the Worker holding it stopped (`error` says why)
//   cancelled  the learner stopped a load
//
// Transitions (TRANSITIONS below is the table go() enforces: any other change throws)
//   empty      load() → loading
//   loading    loaded → ready; failed → error, or ready with the model loaded before (`failed` says
//              what happened); cancel() → cancelled; load() → loading
//   ready      analyze (new text, a head switched) → running; load() → loading; Worker lost → error
//   running    answered or refused → ready; load() → loading; Worker lost → error
//   error      load() → loading
//   cancelled  load() → loading
//   any        dispose() → empty

import { translator } from '../i18n/index.js';
import catalogue from '../i18n/catalogues/model-explorer.js';
import { COURSE_SENTENCE, hasMask, maskedCourseSentence } from './explorer-families.js';

const ENGLISH = translator(catalogue, 'en');

/** Every allowed change of state: from → the states it may go to. */
export const TRANSITIONS = {
  empty: ['loading'],
  loading: ['ready', 'error', 'cancelled', 'loading', 'empty'],
  ready: ['running', 'loading', 'empty', 'error'],
  running: ['ready', 'loading', 'empty', 'error'],
  error: ['loading', 'empty'],
  cancelled: ['loading', 'empty'],
};

/** The sentence of the course, the default text of every Hugging Face model. */
export { COURSE_SENTENCE };

/** The four detectors, in the order of the legend: score field, legend name, one-letter mark. */
export const DETECTORS = [
  { key: 'previousToken', name: 'previous-token', mark: 'P', means: 'looks at the token just before' },
  { key: 'duplicateToken', name: 'duplicate-token', mark: 'D', means: 'looks at an earlier copy of the same token' },
  { key: 'induction', name: 'induction', mark: 'I', means: 'looks at the token after an earlier copy of the current one, and copies it' },
  { key: 'firstToken', name: 'first-token', mark: 'F', means: 'rests on the first token (where heads put weight they have no use for)' },
];

/** A head's score counts as that detector's when at least this (the language models' label threshold). */
export const STRONG = 0.4;

/** The detector a head scores highest on, with its score: { key, name, mark, score } (score NaN when none). */
export function strongest(score) {
  let best = { ...DETECTORS[0], score: NaN };
  for (const d of DETECTORS) {
    const v = score?.[d.key];
    if (Number.isFinite(v) && !(v <= best.score)) best = { ...d, score: v };
  }
  return best;
}

/** Bytes as a learner reads them: "48.6 MB", "548 MB", "46 KB". */
export function sizeText(bytes) {
  if (!Number.isFinite(bytes) || bytes < 0) return '';
  if (bytes >= 1e9) return `${(bytes / 1e9).toPrecision(3)} GB`;
  if (bytes >= 1e6) return `${+(bytes / 1e6).toPrecision(3)} MB`;
  if (bytes >= 1e3) return `${Math.round(bytes / 1e3)} KB`;
  return `${bytes} bytes`;
}

/**
 * Why a load failed, in plain words with what to do next (in the language of `t`): by the error's
 * `code` (the API's coded errors, see pretrained-files.js) where it has one, else from its message;
 * and what the page knows: whether the browser says it is online. Only an error with no code known
 * here quotes the API's (English) message.
 */
export function explainLoadError(message, { online = true, what, t = ENGLISH, code = '', params = {}, shipped = false } = {}) {
  const m = String(message ?? '');
  const thing = what ?? t('explorer.err.whatModel');
  const file = params?.file ?? '';
  if (code === 'csp' || /security policy|Content-Security-Policy|CSP/i.test(m)) return t('explorer.err.csp', { detail: m });
  if (!online) return t(shipped ? 'explorer.err.offlineShipped' : 'explorer.err.offline', { what: thing });
  // HeadLab's own model with no answer from the network and no copy in the cache (shipped-cache.js): offline as far as
  // the page can tell, though the browser may still say it is online (a network that is up but reaches nothing).
  if (shipped && code === 'network') return t('explorer.err.offlineShipped', { what: thing });
  if (code === 'not-found' || code === 'http' && params?.status === 404) return t('explorer.err.notFoundFile', { file: file || '?' });
  if (code === 'forbidden') return t('explorer.err.forbidden', { file });
  if (code === 'pytorch-only') return t('explorer.err.pytorchOnly');
  if (code === 'cut') return t('explorer.err.cutFile', { file });
  if (code === 'network') return t('explorer.err.networkPlain');
  if (code === 'too-large' && Number.isFinite(params?.bytes) && Number.isFinite(params?.limit)) {
    // The API's numbers (pretrained.js): what the model needs beside a run's activations, and the engine's cap.
    return t('explorer.err.tooLargeSize', { size: sizeText(params.bytes), limit: sizeText(params.limit) });
  }
  if (code === 'too-large') return t('explorer.err.tooLarge');
  if (code === 'http') return t('explorer.err.http', { status: params?.status ?? '?', file });
  if (/\b404\b|not found/i.test(m)) return t('explorer.err.notFound', { detail: m });
  if (/pytorch_model\.bin|only.*pickle/i.test(m)) return t('explorer.err.pytorch', { detail: m });
  if (/\bwas cut\b|incomplete|truncat/i.test(m)) return t('explorer.err.cut', { detail: m });
  if (/Failed to fetch|NetworkError|Load failed|fetch failed|network/i.test(m)) return t('explorer.err.network', { detail: m });
  if (/memory|too large|maxBytes|cannot fit/i.test(m)) return t('explorer.err.memory', { detail: m });
  const text = t('explorer.err.other', { what: thing, detail: m });
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}

export class ExplorerController {
  /**
   * @param {object} o
   * @param {(onEvent: (m: object) => void) => {request: Function, dead: boolean, dispose: Function}} o.createClient
   * @param {(name: string) => Promise<Uint8Array>} o.readShipped   the bytes of one of HeadLab's models
   * @param {(type: string, detail: object) => void} o.emit  state, progress, loaded, results, error, head
   * @param {() => boolean} [o.online]  whether the browser says it is online
   * @param {string} [o.name]  prefixes the errors of the methods
   * @param {number} [o.lensBudget]  the logit lens comes with every run up to this many multiply-adds (see lensIsCheap)
   * @param {() => Function} [o.t]  the message function the words of `error` come from (catalogues/model-explorer.js; English)
   */
  constructor({ createClient, readShipped, emit, online = () => true, name = 'headlab-model-explorer', lensBudget = 6e9, t = () => ENGLISH }) {
    Object.assign(this, { createClient, readShipped, emit, online, name, lensBudget, t });
    this.state = 'empty';
    this.client = null;
    this.source = null;         // what is loaded or on its way: { kind, name | id | files, revision? }
    this.info = null;           // the model's info
    this.scores = null;         // { sequence, basis, scores: [...] }
    this.progress = null;       // { file, loaded, total } during a download
    this.error = '';            // why the state is error, or why the last load failed (plain words)
    this.failed = null;         // the last load that failed while a model was kept: { source, code, message }
    this.text = COURSE_SENTENCE;
    this.off = new Set();       // switched-off heads as "layer.head" (from 0)
    this.results = null;        // the last analyze answer
    this.importance = null;     // the last computeImportance answer, with its text
    this.textProblem = '';      // why the text could not be run ('' when it could)
    this.open = null;           // { layer, head } whose heatmap is shown
    this._job = 0;
    this._again = false;        // a change arrived while running: run again when the answer comes
  }

  /** Moves to `to`; a change the table does not allow is a bug, and throws. */
  go(to, reason = '') {
    const from = this.state;
    if (from === to && to !== 'loading') return;
    if (!TRANSITIONS[from].includes(to)) throw new Error(`explorer controller: no transition from ${from} to ${to}`);
    this.state = to;
    this.emit('state', { from, to, reason });
  }

  get hasModel() { return this.state === 'ready' || this.state === 'running'; }

  /** The switched-off heads as the API takes them. */
  get ablate() {
    return [...this.off].map((k) => k.split('.').map(Number)).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map(([layer, head]) => ({ layer, head }));
  }

  _client() {
    if (!this.client || this.client.dead) {
      this.client?.dispose?.();
      this.client = this.createClient((m) => this.onEvent(m));
    }
    return this.client;
  }

  /**
   * Loads a model; resolves once it is loaded and its first results are in (or it failed or
   * was cancelled: the state says which).
   * @param {{kind: 'shipped', name: string} | {kind: 'hub', id: string, revision?: string, hubUrl?: string}
   *   | {kind: 'files', files: File[]}} source
   * @param {{ text?: string }} [o]  the text to run once loaded (default: the text so far)
   */
  async load(source, { text } = {}) {
    if (!source || !['shipped', 'hub', 'files'].includes(source.kind)) {
      throw new TypeError(`${this.name}: load(source): source.kind must be 'shipped', 'hub' or 'files', got ${JSON.stringify(source?.kind)}`);
    }
    const job = ++this._job;
    // What a failed load goes back to: the model loaded before stays in the session until a new one is in.
    const kept = this.hasModel && this.info && this.client && !this.client.dead
      ? {
        source: this.source, info: this.info, scores: this.scores, results: this.results, off: new Set(this.off), open: this.open,
        importance: this.importance,
      }
      : null;
    this.failed = null;
    this.source = source;
    this.info = null;
    this.scores = null;
    this.results = null;
    this.progress = null;
    this.error = '';
    this.textProblem = '';
    this.off.clear();
    this.open = null;
    this.importance = null;
    this._again = false;
    this.go('loading', source.kind);
    if (text !== undefined) this.text = text;
    let answer;
    try {
      const client = this._client();
      let payload = source, transfer = [];
      if (source.kind === 'shipped') {
        const bytes = await this.readShipped(source.name);
        if (job !== this._job) return;
        payload = { kind: 'shipped', name: source.name, bytes };
        transfer = [bytes.buffer];
      }
      answer = await client.request('load', payload, transfer);
    } catch (e) {
      if (job !== this._job) return;
      const t = this.t();
      const shipped = source.kind === 'shipped';
      this.error = explainLoadError(e?.message ?? e, {
        online: this.online(), what: t(shipped ? 'explorer.err.whatShipped' : 'explorer.err.whatModel'), t, code: e?.code, params: e?.params, shipped,
      });
      this.failed = { source, code: e?.code ?? (this.online() ? 'other' : 'offline'), message: this.error };
      if (kept && this.client && !this.client.dead) {
        Object.assign(this, kept);
        this.go('ready', 'load-failed');
      } else {
        this.go('error', 'load-failed');
      }
      this.emit('error', { message: this.error, cause: e, kept: Boolean(kept) });
      return;
    }
    if (job !== this._job) return;
    this.info = answer.info;
    this.scores = answer.scores;
    this.progress = null;
    // An encoder guesses masked words: the course sentence gets its mask where "ball" was.
    if (this.info.kind === 'encoder' && this.info.maskToken && this.text === COURSE_SENTENCE && !hasMask(this.text, this.info.maskToken)) {
      this.text = maskedCourseSentence(this.info.maskToken);
    }
    this.go('ready', 'loaded');
    this.emit('loaded', { info: this.info, scores: this.scores, source });
    await this.analyze();
  }

  /** Stops a load on its way (the Worker aborts the download and frees what it had). */
  cancel() {
    if (this.state !== 'loading') return false;
    this._job += 1;
    this.progress = null;
    this.go('cancelled', 'cancel');
    this.client?.request('cancel').catch(() => {});
    return true;
  }

  /** A download's progress from the session. */
  onEvent(m) {
    if (m.event === 'progress') {
      if (this.state !== 'loading') return;
      this.progress = { file: m.file, loaded: m.loaded, total: m.total ?? null };
      this.emit('progress', this.progress);
    } else if (m.event === 'paused' && m.reason === 'error' && m.fatal) {
      // The Worker (and the model in it) is gone: a new one starts on the next load.
      this._job += 1;
      const t = this.t();
      const message = t('explorer.err.dead', { detail: m.message ?? t('explorer.err.noReason') });
      this.client = null;
      this.info = null;
      this.results = null;
      if (this.state !== 'empty' && this.state !== 'error') {
        this.error = message;
        if (TRANSITIONS[this.state].includes('error')) this.go('error', 'dead');
        else this.go('empty', 'dead');
      }
      this.emit('error', { message });
    }
  }

  /** New text: runs it once a model is there. */
  setText(text) {
    if (typeof text !== 'string') throw new TypeError(`${this.name}: setText(text): text must be a string, got ${text === null ? 'null' : typeof text}`);
    this.text = text;
    return this.analyze();
  }

  /** Switches a head off (on = false) or back on, and runs the text again. */
  setHeadEnabled(layer, head, on) {
    this._checkHead('setHeadEnabled', layer, head);
    const key = `${layer}.${head}`;
    if (on) this.off.delete(key); else this.off.add(key);
    this.emit('head', { layer, head, enabled: Boolean(on) });
    return this.analyze();
  }

  headEnabled(layer, head) {
    return !this.off.has(`${layer}.${head}`);
  }

  /** Every head back on. */
  allHeadsOn() {
    if (!this.off.size) return Promise.resolve();
    this.off.clear();
    return this.analyze();
  }

  /** Chooses the head whose heatmap and lines are shown (no request: the attention is in the results). */
  openHead(layer, head) {
    this._checkHead('openHead', layer, head);
    this.open = { layer, head };
    this.emit('open', { layer, head });
  }

  _checkHead(fn, layer, head) {
    if (!this.info) throw new Error(`${this.name}: ${fn}: no model is loaded yet`);
    const { numLayers: L, numHeads: H } = this.info;
    if (!Number.isInteger(layer) || layer < 0 || layer >= L) throw new RangeError(`${this.name}: ${fn}: layer must be an integer in 0..${L - 1}, got ${layer}`);
    if (!Number.isInteger(head) || head < 0 || head >= H) throw new RangeError(`${this.name}: ${fn}: head must be an integer in 0..${H - 1}, got ${head}`);
  }

  /**
   * Runs the text with the switched-off heads (one run at a time: a change that arrives while
   * one is on its way is run after it, once).
   */
  async analyze() {
    if (this.state === 'running') { this._again = true; return; }
    if (this.state !== 'ready') return;
    const job = this._job;
    this.go('running', 'analyze');
    let answer = null, problem = '';
    const ablate = this.ablate;
    try {
      answer = await this.client.request('analyze', { text: this.text, ablate, topK: 5, lens: false });
    } catch (e) {
      problem = String(e?.message ?? e);
    }
    if (job !== this._job || this.state !== 'running') return;
    if (answer) {
      this.results = { ...answer, text: this.text, ablate };
      this.textProblem = '';
      if (!this.open) this.open = this.defaultHead();
    } else {
      this.textProblem = problem;
    }
    this.go('ready', answer ? 'answered' : 'refused');
    this.emit('results', { results: this.results, problem: this.textProblem });
    if (this._again) {
      this._again = false;
      await this.analyze();
    } else if (answer && !answer.lens && !answer.lensNote && this.lensIsCheap()) {
      // The run's answers first; the lens (kept for this text from then on) follows when it is cheap.
      await this.computeLens();
    }
  }

  /**
   * Whether the logit lens of the text on screen follows each new text by itself: it costs layers ×
   * positions × vocabulary × d_model multiply-adds (every layer's residual through the unembedding),
   * up to `lensBudget`. Above it the learner asks for it (computeLens()): it would hold up every
   * head switch while it runs.
   */
  lensIsCheap() {
    const i = this.info, T = this.results?.tokens?.length;
    return Boolean(i && T) && i.numLayers * T * i.vocabSize * i.dModel <= this.lensBudget;
  }

  /** Computes the logit lens of the text on screen (when it did not come with the run). */
  async computeLens() {
    if (this.state !== 'ready' || !this.results || this.results.lens || this.results.lensNote) return;
    const job = this._job;
    const results = this.results;
    this.go('running', 'lens');
    let lens = null, problem = '';
    try {
      lens = await this.client.request('lens', { ids: results.ids, ablate: results.ablate ?? [] });
    } catch (e) {
      problem = String(e?.message ?? e);
    }
    if (job !== this._job || this.state !== 'running') return;
    if (lens && this.results === results) this.results = { ...results, lens };
    this.go('ready', lens ? 'lens' : 'refused');
    this.emit('results', { results: this.results, problem: problem || this.textProblem });
    if (this._again) {
      this._again = false;
      await this.analyze();
    }
  }

  /**
   * Ranks the heads by what switching each off (and each label's group) costs on the text on screen
   * (head-importance.js): `importance` holds the answer for `importance.text`.
   */
  async computeImportance() {
    if (this.state !== 'ready' || !this.results) return;
    const job = this._job;
    const text = this.text;
    this.go('running', 'importance');
    let answer = null, problem = '';
    try {
      answer = await this.client.request('importance', { text, scores: this.scores?.scores ?? [] });
    } catch (e) {
      problem = String(e?.message ?? e);
    }
    if (job !== this._job || this.state !== 'running') return;
    this.importance = answer && { ...answer, text };
    this.go('ready', answer ? 'importance' : 'refused');
    this.emit('importance', { importance: this.importance, problem });
    if (this._again) {
      this._again = false;
      await this.analyze();
    }
  }

  /** Switches every head of `heads` ([{ layer, head }]) off, or back on, and runs the text once. */
  setHeadsEnabled(heads, on) {
    for (const { layer, head } of heads) {
      this._checkHead('setHeadsEnabled', layer, head);
      if (on) this.off.delete(`${layer}.${head}`); else this.off.add(`${layer}.${head}`);
      this.emit('head', { layer, head, enabled: Boolean(on) });
    }
    return this.analyze();
  }

  /**
   * Scores another revision of the hub model on screen (the session loads it beside this one, takes
   * headScores() and frees it): what revision-trend.js's RevisionTrend calls. Aborting `signal`
   * aborts its download.
   * @returns {Promise<{ scores: object, info: { numLayers: number, numHeads: number } }>}
   */
  async scoreRevision(revision, signal = null) {
    if (!this.hasModel || this.source?.kind !== 'hub' || !this.client || this.client.dead) {
      throw new Error(`${this.name}: scoreRevision: load a model from the hub first`);
    }
    const client = this.client;
    const onAbort = () => client.request('revisionCancel').catch(() => {});
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await client.request('revision', { id: this.source.id, revision, ...(this.source.hubUrl ? { hubUrl: this.source.hubUrl } : {}) });
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The head shown first: the strongest induction head, else the last layer's first. */
  defaultHead() {
    const s = this.scores?.scores ?? [];
    const best = s.filter((q) => Number.isFinite(q.induction)).sort((a, b) => b.induction - a.induction)[0];
    if (best) return { layer: best.layer, head: best.head };
    return { layer: Math.max(0, (this.info?.numLayers ?? 1) - 1), head: 0 };
  }

  /** The element was removed for good: frees the client and the model. */
  dispose() {
    this._job += 1;
    this.client?.dispose();
    this.client = null;
    this.info = null;
    this.results = null;
    if (this.state !== 'empty') this.go('empty', 'disposed');
  }
}
