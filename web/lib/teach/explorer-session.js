// The model side of <headlab-model-explorer>: holds ONE model (a PretrainedModel from
// lab.loadPretrained, or one of HeadLab's own LanguageModels from lab.loadLanguageModel, which has
// the same explorer-facing methods: info, tokenize, run, headScores) and answers the page. No DOM:
// the same code runs in the explorer Worker (components/shared/worker/explorer-worker.js) and,
// where no Worker can start (file://), on the page. Every number comes from the model.
//
// Requests (handle(type, payload) → Promise<{ result, transfer }>):
//   load    { kind: 'shipped', name, bytes }          one of HeadLab's models (.hlm bytes)
//           { kind: 'hub', id, revision?, hubUrl? }     a Hugging Face repository
//           { kind: 'files', files }                    dropped or chosen File objects
//           → { info, scores }   (the old model is freed first; scores: model.headScores())
//   cancel                                              aborts a load on its way and frees any model
//   analyze { text, ablate, topK, lens }                → { ids, tokens, attention, shape, next, baseline, lens, lensNote,
//                                                           fill, fillBaseline }
//           baseline: the top tokens with every head on (null when none is off); lens: the logit
//           lens with the same heads off, when asked for (or already computed), else null.
//           An encoder (info.kind 'encoder') has no next token: `fill` is model.fill's masks
//           ([{ position, top }]) when the text holds info.maskToken, else null; fillBaseline the
//           masks with every head on (null when none is off); it has no logit lens. An encoder without a
//           head (info.head 'none', BertModel) has no fill either: attention only.
//   lens    { ids, ablate }                             → the logit lens of those ids with those heads off (kept for analyze)
//   importance { text, scores }                         → head-importance.js's answer: each head's and each label's loss change
//   findings { op, options }                            the findings panel's calls on the model (findings())
//   revision { id, revision, hubUrl? }                  → { scores, info }: another revision of the hub model, loaded
//                                                        beside the explorer's (cache on), its headScores() taken and
//                                                        the model freed; one at a time (revision-trend.js)
//   revisionCancel                                      aborts the revision on its way
//   dispose
// Events: { event: 'progress', file, loaded, total } while a load downloads (at most every 100 ms per file;
// an update held back is sent late, never dropped).

import { headImportance } from './head-importance.js';
import { hasMask, maskTokenOf } from './explorer-families.js';

/** The switched-off heads as one key, order-free. */
const offKey = (ablate) => ablate.map((a) => `${a.layer}.${a.head}`).sort().join(',');

const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());

/**
 * The headScores() options of every load: TransformerLens's sequence is 2n + 1 tokens, n = 20 where the
 * context allows it; HeadLab's own models score on 500 held-out sequences of their task.
 */
export function headScoreOptions(info) {
  if (info.architecture === 'headlab') return { examples: 500 };
  return { length: Math.max(1, Math.min(20, Math.floor(((info.contextLength ?? 41) - 1) / 2))), seed: 1 };
}

export class ExplorerSession {
  /**
   * @param {object} lab  the Headlab instance
   * @param {(message: object, transfer?: Transferable[]) => void} emit
   * @param {{ loadPretrained?: (source: unknown, options: object) => Promise<object> }} [o]
   *   how hub ids and files are loaded (default lab.loadPretrained; tests pass a fake)
   */
  constructor(lab, emit, { loadPretrained } = {}) {
    this.lab = lab;
    this.emit = emit;
    this.loadPretrained = loadPretrained ?? ((source, options) => {
      if (typeof lab.loadPretrained !== 'function') {
        throw new Error('this build of HeadLab cannot load Hugging Face models (lab.loadPretrained is missing)');
      }
      return lab.loadPretrained(source, options);
    });
    this.model = null;
    this._abort = null;
    this._job = 0;
    /** The last Content-Security-Policy violation seen (the Worker records it): names what was blocked. */
    this.violation = null;
  }

  static async open(lab, emit, options) {
    return new ExplorerSession(lab, emit, options);
  }

  async handle(type, payload = {}) {
    switch (type) {
      case 'load': return { result: await this.load(payload) };
      case 'cancel': this.cancel(); return { result: null };
      case 'analyze': {
        const result = await this.analyze(payload);
        return { result, transfer: result.attention ? [result.attention.buffer] : [] };
      }
      case 'lens': return { result: await this.lens(payload.ids, payload.ablate) };
      case 'importance': return { result: await this.importance(payload) };
      case 'findings': return { result: await this.findings(payload) };
      case 'revision': return { result: await this.revision(payload) };
      case 'revisionCancel': this._revisionAbort?.abort(); return { result: null };
      case 'dispose': this.dispose(); return { result: null };
      default: throw new TypeError(`explorer session: unknown request ${JSON.stringify(String(type))}`);
    }
  }

  _free() {
    this.model?.dispose();
    this.model = null;
    this._kept = null;
  }

  /** Loads a model; the one loaded before stays until the new one is in (a failed load keeps it). */
  async load(source) {
    this._job += 1;
    this._abort?.abort();
    const job = this._job;
    const abort = (this._abort = typeof AbortController === 'function' ? new AbortController() : null);
    this.violation = null;
    let model;
    if (source.kind === 'shipped') {
      model = await this.lab.loadLanguageModel(source.bytes);
    } else {
      // At most one event per file every 100 ms, and never one dropped for good: an update held
      // back is sent when its 100 ms are up (a download that stalls shows the bytes it did get).
      const last = new Map();    // file → when its last event was sent
      const held = new Map();    // file → { loaded, total, timer } not sent yet
      const send = (file) => {
        const p = held.get(file);
        held.delete(file);
        clearTimeout(p?.timer);
        if (!p || job !== this._job) return;
        last.set(file, now());
        this.emit({ event: 'progress', file, loaded: p.loaded, total: p.total ?? null });
      };
      const onProgress = ({ file, loaded, total }) => {
        if (job !== this._job) return;
        const timer = held.get(file)?.timer;
        held.set(file, { loaded, total, timer });
        const wait = 100 - (now() - (last.get(file) ?? -Infinity));
        if ((total && loaded >= total) || wait <= 0) send(file);
        else if (timer === undefined) held.get(file).timer = setTimeout(() => send(file), wait);
      };
      const options = { onProgress, signal: abort?.signal, cache: true };
      if (source.revision) options.revision = source.revision;
      if (source.hubUrl) options.hubUrl = source.hubUrl;
      try {
        model = await this.loadPretrained(source.kind === 'hub' ? source.id : source.files, options);
      } catch (e) {
        // A blocked fetch rejects before its securitypolicyviolation event is dispatched: give it a moment.
        if (e?.name !== 'AbortError' && !this.violation) await new Promise((resolve) => setTimeout(resolve, 50));
        if (this.violation && !/security policy/i.test(String(e?.message))) {
          throw new Error(`${e?.message ?? e} (this page's Content-Security-Policy blocked ${this.violation.blockedURI || 'a download'}: ${this.violation.directive})`, { cause: e });
        }
        throw e;
      } finally {
        // Once the load has settled, an update still held back is stale: it never goes out.
        for (const p of held.values()) clearTimeout(p.timer);
        held.clear();
      }
    }
    if (job !== this._job) {
      model.dispose();
      throw new DOMException('the load was cancelled', 'AbortError');
    }
    this._abort = null;
    this._free();
    this.model = model;
    const scores = await model.headScores(headScoreOptions(model.info));
    const info = { ...model.info };
    // An encoder's mask token, as its tokenizer writes it: the explorer's hint and first text.
    if (info.kind === 'encoder' && info.head !== 'none') info.maskToken = maskTokenOf(model);
    this._maskToken = info.maskToken ?? null;
    return { info, scores };
  }

  /**
   * Another revision of a hub model, scored beside the model the explorer holds (which stays): loaded with
   * the cache on (a revision fetched before loads offline), headScores() as a load takes them, then freed.
   * A request that arrives while one is on its way waits for it, so at most one extra model is in memory.
   */
  async revision({ id, revision, hubUrl } = {}) {
    if (typeof id !== 'string' || !id) throw new TypeError(`explorer session: revision: id must be a hub id, got ${JSON.stringify(id)}`);
    if (typeof revision !== 'string' || !revision) throw new TypeError(`explorer session: revision: revision must be a revision name, got ${JSON.stringify(revision)}`);
    const before = this._revisionBusy;
    let done;
    this._revisionBusy = new Promise((resolve) => { done = resolve; });
    try {
      await before;
      const abort = (this._revisionAbort = typeof AbortController === 'function' ? new AbortController() : null);
      const options = { revision, cache: true, signal: abort?.signal };
      if (hubUrl) options.hubUrl = hubUrl;
      const model = await this.loadPretrained(id, options);
      try {
        if (abort?.signal.aborted) throw new DOMException('the revision was cancelled', 'AbortError');
        const scores = await model.headScores(headScoreOptions(model.info));
        const { numLayers, numHeads, architecture } = model.info;
        return { scores, info: { numLayers, numHeads, architecture } };
      } finally {
        model.dispose();
      }
    } finally {
      this._revisionAbort = null;
      done();
    }
  }

  cancel() {
    this._job += 1;
    this._abort?.abort();
    this._abort = null;
    this._free();
  }

  async analyze({ text, ablate = [], topK = 5, lens = true }) {
    const model = this.model;
    if (!model) throw new Error('explorer session: no model is loaded');
    const r = await model.run(text, { attention: true, ablate, topK });
    const L = model.info.numLayers, H = model.info.numHeads, T = r.ids.length;
    const out = {
      ids: Array.from(r.ids), tokens: r.tokens, attention: r.attention, shape: [L, H, T, T],
      next: r.next, baseline: null, lens: null, lensNote: '',
    };
    // The all-on top tokens are kept per text; the lens per text and switched-off heads.
    const kept = this._keep(model, topK, out.ids);
    if (model.info.kind === 'encoder') {
      out.fill = null;
      out.fillBaseline = null;
      if (model.info.head === 'none') {
        // BertModel: attention and hidden states, no words to guess.
        out.lensNote = 'This model has no output layer that turns its vectors into words, so it has no logit lens.';
        out.lensNoteKey = 'explorer.lensNoHead';
        return out;
      }
      if (hasMask(text, this._maskToken)) {
        out.fill = (await model.fill(text, { topK, ablate })).masks;
        if (!ablate.length) kept.fill = out.fill;
        else out.fillBaseline = kept.fill ??= (await model.fill(text, { topK })).masks;
      }
      out.lensNote = 'An encoder reads the whole text at once and guesses masked words, so it has no logit lens of the next token.';
      out.lensNoteKey = 'explorer.lensEncoder';
      return out;
    }
    if (!ablate.length) kept.next = r.next;
    else out.baseline = kept.next ??= (await model.run(r.ids, { topK })).next;
    if (typeof model.logitLens !== 'function') {
      out.lensNote = 'HeadLab’s own small models do not expose what each layer adds, so they have no logit lens; a Hugging Face model has one.';
      out.lensNoteKey = 'explorer.lensNone';  // the same in the element's language (catalogues/model-explorer.js)
    } else if (lens || kept.lens.has(offKey(ablate))) {
      out.lens = await this._lensOf(model, kept, out.ids, ablate);
    }
    return out;
  }

  /** @private What is kept for this model and text (one text at a time). */
  _keep(model, topK, ids) {
    const key = `${topK}|${ids.join(',')}`;
    if (this._kept?.key !== key || this._kept.model !== model) this._kept = { key, model, next: null, lens: new Map() };
    return this._kept;
  }

  /** @private The lens of `ids` with `ablate` off (the same heads as the run beside it). */
  async _lensOf(model, kept, ids, ablate) {
    const k = offKey(ablate);
    if (!kept.lens.has(k)) kept.lens.set(k, (await model.logitLens(Int32Array.from(ids), { topK: 3, ablate })).layers);
    return kept.lens.get(k);
  }

  /** The logit lens of `ids` with the heads of `ablate` off, kept with the text's other answers. */
  async lens(ids, ablate = []) {
    const model = this.model;
    if (!model) throw new Error('explorer session: no model is loaded');
    if (typeof model.logitLens !== 'function' || model.info.kind === 'encoder') return null;
    return this._lensOf(model, this._keep(model, 5, Array.from(ids)), ids, ablate);
  }

  /** Head importance by ablation on `text` (head-importance.js), labels from the head scores given. */
  async importance({ text, scores }) {
    if (!this.model) throw new Error('explorer session: no model is loaded');
    return headImportance(this.model, text, { scores });
  }

  /**
   * The findings panel's calls (teach/findings-controller.js's model contract): op 'describe' → { kind,
   * maskToken, causal }, 'tokenize' (options: the text) → { ids }, 'patchHeads' and 'directLogitAttribution'
   * (their options) → their answers; 'syntaxHeads' ({ n, seed }) → lab.findings.syntaxHeads on that many of the
   * grammar's sentences, 'stopSyntax' stops it.
   */
  async findings({ op, options }) {
    const model = this.model;
    if (!model) throw new Error('explorer session: no model is loaded');
    const causal = typeof model.patchHeads === 'function';
    if (op === 'describe') {
      // The mask token is one token more than the special tokens every text gets ([CLS] … [SEP]).
      const bare = causal ? model.tokenize('').ids.length : 0;
      const maskToken = ['[MASK]', '<mask>'].find((m) => causal && model.tokenize(m).ids.length === bare + 1) ?? null;
      return { kind: model.info.kind ?? 'decoder', maskToken, causal };
    }
    if (op === 'tokenize') return { ids: Array.from(model.tokenize(String(options)).ids) };
    if (op === 'syntaxHeads') {
      // The grammar's sentences scored on this model (lab.findings.syntaxHeads); stopSyntax aborts it.
      this._syntaxAbort?.abort();
      const abort = (this._syntaxAbort = new AbortController());
      const sentences = await this.lab.findings.syntaxSentences({ n: options?.n, seed: options?.seed });
      return this.lab.findings.syntaxHeads({ model, sentences, signal: abort.signal });
    }
    if (op === 'stopSyntax') { this._syntaxAbort?.abort(); return null; }
    if (!causal) throw new Error('explorer session: HeadLab’s own models have no patching or attribution; load a Hugging Face model');
    if (op === 'patchHeads') return model.patchHeads(options);
    if (op === 'directLogitAttribution') return model.directLogitAttribution(options);
    throw new TypeError(`explorer session: unknown findings call ${JSON.stringify(String(op))}`);
  }

  dispose() {
    this._revisionAbort?.abort();
    this.cancel();
  }
}
