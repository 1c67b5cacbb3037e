// The findings panel of <headlab-model-explorer> (issue 35): one card per paper finding, each saying
// what the paper reports and what the loaded model shows. It renders state only: the IOI check runs in
// web/lib/teach/findings-controller.js (DOM-free, tested in Node), whose model is a proxy that sends the
// calls to the explorer's Worker (explorer-session.js's 'findings' request); the induction and
// attention-sink cards read the head scores the explorer computed when the model loaded
// (inductionFinding, sinkFinding). Words come from the explorer's catalogue (explorer.find.*); nothing
// from a model or a user goes in as HTML. Heads are named as the papers name them: layer.head from 0.

import { el, uid, setText, announce } from '../shared/render/dom.js';
import { createHeatmap } from '../shared/render/heatmap.js';
import { SCALES } from '../shared/render/colormap.js';
import {
  FindingsController, IOI_PAPER, IOI_PAPER_HEADS, IOI_ROLES, INDUCTION_PAPER_HEADS, GPT2_SMALL,
  isGpt2SmallShape, paperOutlines, inductionFinding, sinkFinding, sessionModel, SyntaxController,
} from '../../lib/teach/findings-controller.js';
import { sinkSentence } from '../../lib/teach/explorer-families.js';
import { ioiPrompts } from '../../lib/api/findings.js';

/** How each role's heads are framed: Okabe–Ito colours and dash patterns, so no role rests on colour alone. */
export const ROLE_STYLE = Object.freeze({
  nameMover: { stroke: '#000000', dash: undefined },
  backupNameMover: { stroke: '#000000', dash: '5 3' },
  negativeNameMover: { stroke: '#000000', dash: '1.5 2.5' },
  sInhibition: { stroke: '#009e73', dash: undefined },
  induction: { stroke: '#e69f00', dash: undefined },
  duplicateToken: { stroke: '#cc79a7', dash: undefined },
  previousToken: { stroke: '#56b4e9', dash: '5 3' },
});

export const FINDINGS_CSS = `
.findings .cards { display: grid; gap: 0.8rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 22rem), 1fr)); align-items: start; }
.findings .card.wide { grid-column: 1 / -1; }
.findings .card h4 { margin: 0 0 0.3rem; font-size: 1rem; }
.findings .card p { margin: 0.35rem 0; overflow-wrap: anywhere; }
.findings .run-row { display: flex; flex-wrap: wrap; gap: 0.4rem 0.8rem; align-items: end; margin: 0.5rem 0; }
.findings .run-row .field { display: flex; flex-direction: column; gap: 0.1rem; font-size: 0.85rem; }
.findings .run-row input[type="number"] { width: 5.5rem; }
.findings .run-progress { display: flex; flex-wrap: wrap; gap: 0.3rem 0.7rem; align-items: center; }
.findings .run-progress progress { flex: 1 1 10rem; height: 1rem; accent-color: var(--hl-accent); }
.findings .run-progress .what { font-variant-numeric: tabular-nums; font-size: 0.88rem; }
.findings table.compare { margin: 0.4rem 0; }
.findings table.compare th[scope="row"] { white-space: normal; max-width: none; }
.findings table.compare td.num, .findings table.compare th { font-variant-numeric: tabular-nums; }
.findings .maps { display: grid; gap: 0.8rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 20rem), 1fr)); align-items: start; }
.findings .maps > * { min-width: 0; }
.findings .maps svg { max-width: 100%; height: auto; }
.findings .roles { display: flex; flex-wrap: wrap; gap: 0.25rem 0.9rem; list-style: none; padding: 0; margin: 0.4rem 0; font-size: 0.82rem; }
.findings .roles li { display: inline-flex; gap: 0.35rem; align-items: center; }
.findings .roles svg { flex: none; background: var(--hl-fig-swatch-bg, #f7f7f7); border-radius: 2px; }
.findings ol.top { margin: 0.3rem 0; padding-left: 1.4rem; font-variant-numeric: tabular-nums; }
.findings .sink-count { font-size: 1.05rem; font-weight: 600; }
`;

/** The state that outlives a rebuild in another language: the controller and the model it measures. */
const kept = new WeakMap();

/** A head as the papers write it: layer.head, both from 0. */
const headText = (layer, head) => `${layer}.${head}`;
/** Heads as "layer.head" from 0, space-separated: the data-heads attribute the sink line carries too. */
export const sinkKeys = (heads) => heads.map((h) => `${h.layer}.${h.head}`).join(' ');

/**
 * Builds the panel after `anchor` for the explorer element `host` (called from its build(), again after
 * a change of language); it follows the host's events from then on. It shows whenever a model is loaded,
 * whether or not the text could be run.
 * @param {HTMLElement & { t: Function, fmt: Function, controller: object }} host
 * @param {HTMLElement} anchor
 */
export function mountFindings(host, anchor) {
  const panel = new FindingsPanel(host);
  anchor.after(panel.element);
  return panel;
}

export class FindingsPanel {
  constructor(host) {
    this.host = host;
    let state = kept.get(host);
    if (!state) {
      state = { controller: null, modelKey: null, listeners: new Set() };
      const emit = (type, detail) => { for (const f of state.listeners) f(type, detail); };
      state.controller = new FindingsController({ lab: { findings: { ioiPrompts } }, emit });
      state.syntax = new SyntaxController({ emit });
      kept.set(host, state);
      // The host's events: a new model, scores, a state change. The newest panel listens (one per language build).
      const rerender = () => state.panel?.render();
      for (const type of ['headlab-load', 'headlab-state', 'headlab-results']) host.addEventListener(type, rerender);
    }
    this.state = state;
    state.panel = this;
    state.listeners.clear();
    state.listeners.add((type, detail) => this.onController(type, detail));
    this.build();
    this.render();
  }

  get t() { return this.host.t; }
  get c() { return this.state.controller; }
  get sc() { return this.state.syntax; }

  build() {
    const t = this.t;
    // IOI
    this.nInput = el('input', { type: 'number', id: uid('n'), min: '1', max: '200', step: '1', value: '20', dataset: { testid: 'findings-ioi-n' } });
    this.seedInput = el('input', { type: 'number', id: uid('seed'), min: '0', step: '1', value: '0', dataset: { testid: 'findings-ioi-seed' } });
    this.runButton = el('button', { type: 'button', class: 'btn btn--primary', dataset: { action: 'findings-ioi-run', testid: 'findings-ioi-run' },
      on: { click: () => this.runIoi() } }, t('explorer.find.run'));
    this.stopButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'findings-ioi-stop', testid: 'findings-ioi-stop' },
      on: { click: () => this.c.cancel() } }, t('explorer.find.stop'));
    this.progressBar = el('progress', { max: 1, value: 0, 'aria-label': t('explorer.find.progress'), dataset: { testid: 'findings-ioi-progress' } });
    this.progressText = el('span', { class: 'what', 'aria-live': 'polite', dataset: { testid: 'findings-ioi-progress-text' } });
    this.progressBox = el('div', { class: 'run-progress', hidden: true }, this.progressBar, this.progressText);
    this.ioiNote = el('p', { class: 'note note--warn small', hidden: true, dataset: { testid: 'findings-ioi-note' } });
    this.ioiError = el('p', { class: 'text-error', role: 'alert', dataset: { testid: 'findings-ioi-error' } });
    this.ioiResult = el('div', { dataset: { testid: 'findings-ioi-result' } });
    this.ioiCard = el('article', { class: 'card wide', dataset: { testid: 'findings-ioi' } },
      el('h4', {}, t('explorer.find.ioi.title')),
      el('p', { class: 'small' }, t('explorer.find.ioi.paper', { diff: this.host.fmt(IOI_PAPER.logitDiff, 2), wins: this.percent(IOI_PAPER.answerWins) })),
      el('p', { class: 'small' }, t('explorer.find.ioi.heads', {
        movers: this.heads(IOI_PAPER_HEADS.nameMover), negative: this.heads(IOI_PAPER_HEADS.negativeNameMover),
        inhibition: this.heads(IOI_PAPER_HEADS.sInhibition), backup: this.heads(IOI_PAPER_HEADS.backupNameMover),
      })),
      el('p', { class: 'small muted' }, t('explorer.find.ioi.how')),
      this.ioiNote,
      el('div', { class: 'run-row' },
        el('div', { class: 'field' }, el('label', { for: this.nInput.id }, t('explorer.find.prompts')), this.nInput),
        el('div', { class: 'field' }, el('label', { for: this.seedInput.id }, t('explorer.find.seed')), this.seedInput),
        this.runButton, this.stopButton),
      this.progressBox, this.ioiError, this.ioiResult);
    this._maps = null;

    // Induction
    this.inductionBody = el('div', { dataset: { testid: 'findings-induction-result' } });
    this.inductionCard = el('article', { class: 'card', dataset: { testid: 'findings-induction' } },
      el('h4', {}, t('explorer.find.induction.title')),
      el('p', { class: 'small' }, t('explorer.find.induction.paper', { heads: this.heads(INDUCTION_PAPER_HEADS) })),
      this.inductionBody);

    // Attention sinks
    this.sinkBody = el('div', { dataset: { testid: 'findings-sinks-result' } });
    this.sinkCard = el('article', { class: 'card', dataset: { testid: 'findings-sinks' } },
      el('h4', {}, t('explorer.find.sinks.title')),
      el('p', { class: 'small' }, t('explorer.find.sinks.paper')),
      this.sinkBody);
    this._sinkMap = null;

    // Syntax heads in BERT: what the paper reports; the check is coming.
    this.syntaxN = el('input', { type: 'number', id: uid('sn'), min: '1', max: '500', step: '1', value: '30', dataset: { testid: 'findings-syntax-n' } });
    this.syntaxRun = el('button', { type: 'button', class: 'btn btn--primary', dataset: { testid: 'findings-syntax-run' },
      on: { click: () => this.runSyntax() } }, t('explorer.find.run'));
    this.syntaxStop = el('button', { type: 'button', class: 'btn', dataset: { testid: 'findings-syntax-stop' }, on: { click: () => this.sc.cancel() } },
      t('explorer.find.stop'));
    this.syntaxProgress = el('progress', { 'aria-label': t('explorer.find.progress'), hidden: true });
    this.syntaxStatus = el('p', { class: 'small', 'aria-live': 'polite', dataset: { testid: 'findings-syntax-status' } });
    this.syntaxBody = el('div', { dataset: { testid: 'findings-syntax-result' } });
    this.syntaxCard = el('article', { class: 'card wide', dataset: { testid: 'findings-syntax' } },
      el('h4', {}, t('explorer.find.syntax.title')),
      el('p', { class: 'small' }, t('explorer.find.syntax.paper')),
      el('p', { class: 'small muted' }, t('explorer.find.syntax.how')),
      el('div', { class: 'run-row' }, el('div', { class: 'field' }, el('label', { for: this.syntaxN.id }, t('explorer.find.sentences')), this.syntaxN),
        this.syntaxRun, this.syntaxStop),
      this.syntaxProgress, this.syntaxStatus, this.syntaxBody);

    this.status = el('p', { class: 'sr-only', role: 'status' });
    this.element = el('section', { class: 'part findings', dataset: { testid: 'explorer-findings' } },
      el('h3', {}, t('explorer.find.title')),
      el('p', { class: 'small muted explain' }, t('explorer.find.explain')),
      this.status,
      el('div', { class: 'cards' }, this.ioiCard, this.inductionCard, this.sinkCard, this.syntaxCard));
  }

  percent(x) { return `${this.host.fmt(100 * x, 1)} %`; }
  heads(list) { return list.map(([l, h]) => headText(l, h)).join(', '); }

  /** The host's model: its key, shape, whether it is HeadLab's own. */
  model() {
    const hc = this.host.controller;
    const info = hc?.hasModel ? hc.info : null;
    if (!info) return null;
    const s = hc.source ?? {};
    return { info, key: `${s.kind}|${s.name ?? s.id ?? (s.files ?? []).map((f) => f.name).join(',')}|${info.numLayers}x${info.numHeads}|${info.name ?? ''}`,
      own: info.architecture === 'headlab', noHead: info.head === 'none', scores: hc.scores?.scores ?? null };
  }

  /** Both checks' model: a proxy that sends every call to the explorer's Worker, made once per model. */
  async ensureModel(m) {
    if (this.state.modelKey !== m.key || !this.c.model || !this.sc.model) {
      const client = this.host.controller.client;
      const model = await sessionModel((type, payload) => client.request(type, payload), m.info);
      this.state.modelKey = m.key;
      this.c.setModel(model);
      this.sc.setModel(model);
    }
  }

  /** Measures the IOI check on the loaded model. */
  async runIoi() {
    const m = this.model();
    if (!m || m.own) return;
    const n = Number(this.nInput.value), seed = Number(this.seedInput.value);
    setText(this.ioiError, '');
    try {
      await this.ensureModel(m);
      await this.c.run({ n, seed });
    } catch (e) {
      setText(this.ioiError, this.t('explorer.find.failed', { detail: String(e?.message ?? e) }));
    }
    this.render();
  }

  /** Scores every head against the grammar's dependencies. */
  async runSyntax() {
    const m = this.model();
    if (!m || m.own) return;
    try {
      await this.ensureModel(m);
      await this.sc.run({ n: Number(this.syntaxN.value), seed: 0 });
    } catch (e) {
      setText(this.syntaxStatus, this.t('explorer.find.failed', { detail: String(e?.message ?? e) }));
      return;
    }
    this.render();
  }

  onController(type) {
    if (type === 'state') {
      const s = this.c.state;
      if (s === 'running') announce(this.status, this.t('explorer.find.started'));
      else if (s === 'done') announce(this.status, this.t('explorer.find.finished'));
      else if (s === 'cancelled') announce(this.status, this.t('explorer.find.stopped'));
      else if (s === 'error') setText(this.ioiError, this.t('explorer.find.failed', { detail: this.c.error }));
    }
    this.render();
  }

  render() {
    const m = this.model();
    this.element.hidden = !m;
    if (!m) {
      // A model on its way replaces the one measured: a run under way stops, and the next run asks anew.
      if (this.host.controller?.state === 'loading' && this.state.modelKey !== null) {
        this.state.modelKey = null;
        this.c.setModel(null);
        this.sc.setModel(null);
        this._maps = null;
      }
      return;
    }
    // Another model: what was measured on the one before no longer applies.
    if (this.state.modelKey !== null && this.state.modelKey !== m.key) {
      this.state.modelKey = null;
      this.c.setModel(null);
      this.sc.setModel(null);
      this._maps = null;
    }
    this.renderIoi(m);
    this.renderInduction(m);
    this.renderSinks(m);
    this.renderSyntax(m);
  }

  renderSyntax(m) {
    const t = this.t, sc = this.sc;
    const running = sc.state === 'running';
    this.syntaxRun.disabled = running || m.own;
    this.syntaxStop.disabled = !running;
    this.syntaxN.disabled = running || m.own;
    this.syntaxProgress.hidden = !running;
    const status = m.own ? t('explorer.find.syntax.own')
      : running ? t('explorer.find.syntax.running', { n: sc.n })
        : sc.state === 'cancelled' ? t('explorer.find.stopped')
          : sc.state === 'error' ? t('explorer.find.failed', { detail: sc.error }) : '';
    setText(this.syntaxStatus, status);
    const r = sc.result;
    if (!r) { this.syntaxBody.replaceChildren(); return; }
    const pct = (x) => (x === null || x === undefined ? '—' : this.percent(x));
    const rows = r.relations.map((rel) => el('tr', { dataset: { relation: rel.relation } },
      el('th', { scope: 'row' }, t(`explorer.find.syntax.rel.${rel.relation}`)),
      el('td', { class: 'num', dataset: { head: headText(rel.best.layer, rel.best.head) } }, `${headText(rel.best.layer, rel.best.head)} · ${pct(rel.best.accuracy)}`),
      el('td', { class: 'num' }, t('explorer.find.syntax.offset', { k: rel.baseline.offset > 0 ? `+${rel.baseline.offset}` : String(rel.baseline.offset), acc: pct(rel.baseline.accuracy) })),
      el('td', { class: 'num' }, rel.paper ? `${rel.paper.head} · ${pct(rel.paper.accuracy)} (${pct(rel.paper.baseline)})` : '—')));
    this.syntaxBody.replaceChildren(
      el('p', { class: 'small' }, t.plural('explorer.find.syntax.caption', r.sentences, { skipped: r.skipped })),
      el('div', { class: 'table-scroll' }, el('table', { class: 'matrix compare', dataset: { testid: 'findings-syntax-table' } },
        el('caption', { class: 'sr-only' }, t('explorer.find.syntax.title')),
        el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, t('explorer.find.syntax.relation')), el('th', { scope: 'col' }, t('explorer.find.syntax.bestHere')),
          el('th', { scope: 'col' }, t('explorer.find.syntax.bestOffset')), el('th', { scope: 'col' }, t('explorer.find.syntax.paperCol')))),
        el('tbody', {}, rows))),
      el('p', { class: 'small muted' }, t(m.info.kind === 'encoder' ? 'explorer.find.syntax.read' : 'explorer.find.syntax.readDecoder')));
  }

  renderIoi(m) {
    const t = this.t, c = this.c;
    const running = c.state === 'running';
    // The check compares two names' logits: HeadLab's own models and a model without a head have none.
    const cannot = m.own || m.noHead;
    this.runButton.disabled = running || cannot;
    this.stopButton.disabled = !running;
    this.nInput.disabled = running || cannot;
    this.seedInput.disabled = running || cannot;
    const notes = [];
    if (m.own) notes.push(t('explorer.find.ioi.own'));
    else if (m.noHead) notes.push(t('explorer.find.ioi.noHead', { architecture: m.info.architecture }));
    else if (!isGpt2SmallShape(m.info)) notes.push(t('explorer.find.ioi.shape', { layers: m.info.numLayers, heads: m.info.numHeads, gl: GPT2_SMALL.numLayers, gh: GPT2_SMALL.numHeads }));
    if (c.result?.encoder) notes.push(t('explorer.find.ioi.encoder'));
    this.ioiNote.hidden = notes.length === 0;
    setText(this.ioiNote, notes.join(' '));
    this.progressBox.hidden = !c.progress || c.state === 'idle';
    if (c.progress && c.state !== 'idle') {
      this.progressBar.max = Math.max(1, c.progress.total);
      this.progressBar.value = c.progress.done;
      setText(this.progressText, t(running ? 'explorer.find.progressText' : `explorer.find.progress.${c.state}`, { done: c.progress.done, total: c.progress.total }));
    }
    const r = c.result;
    if (!r) {
      // A run that measured nothing: every prompt was skipped (names of several tokens in this tokenizer).
      const none = c.state === 'done' && c.progress?.total > 0;
      this.ioiResult.replaceChildren(...(none ? [el('p', { class: 'note note--warn small', dataset: { testid: 'findings-ioi-none' } }, t('explorer.find.ioi.none'))] : []));
      this._maps = null;
      return;
    }
    this.renderIoiResult(r);
  }

  renderIoiResult(r) {
    const t = this.t, host = this.host;
    const [L, H] = r.shape;
    const row = (label, measured, paper) => el('tr', {}, el('th', { scope: 'row' }, label), el('td', { class: 'num' }, measured), el('td', { class: 'num' }, paper));
    const table = el('div', { class: 'table-scroll' }, el('table', { class: 'matrix compare', dataset: { testid: 'findings-ioi-compare' } },
      el('caption', { class: 'small' }, t.plural('explorer.find.ioi.caption', r.prompts, { skipped: r.skipped })),
      el('thead', {}, el('tr', {}, el('td', {}), el('th', { scope: 'col' }, t('explorer.find.thisModel')), el('th', { scope: 'col' }, t('explorer.find.paperGpt2')))),
      el('tbody', {},
        row(t('explorer.find.ioi.diff'), host.fmt(r.logitDiff, 2), host.fmt(IOI_PAPER.logitDiff, 2)),
        row(t('explorer.find.ioi.wins'), this.percent(r.answerWins), this.percent(IOI_PAPER.answerWins)))));
    const top = (list, testid) => el('ol', { class: 'top', dataset: { testid } },
      list.map((h) => el('li', { dataset: { head: headText(h.layer, h.head) } }, t('explorer.find.topItem', { head: headText(h.layer, h.head), value: host.fmt(h.value, 2) }))));
    const tops = [el('div', {}, el('p', { class: 'small' }, t('explorer.find.ioi.topPatch')), top(r.topPatch, 'findings-ioi-top-patch'))];
    if (r.topDla) tops.push(el('div', {}, el('p', { class: 'small' }, t('explorer.find.ioi.topDla')), top(r.topDla, 'findings-ioi-top-dla')));

    // The heatmaps are made once per shape and language; a new result updates them.
    const key = `${L}x${H}|${Boolean(r.dlaHeads)}`;
    if (!this._maps || this._maps.key !== key) {
      const outlines = paperOutlines({ numLayers: L, numHeads: H }).map((o) => ({ r: o.layer, c: o.head, ...ROLE_STYLE[o.role] }));
      const labels = (k) => Array.from({ length: k }, (_, i) => String(i));
      const make = (title, legend, testid) => createHeatmap({ title, rowLabels: labels(L), colLabels: labels(H), rowAxis: t('explorer.find.layer'),
        colAxis: t('explorer.find.head'), legend, testid, t, digits: 2, min: -1, max: 1, maxGrid: 380, scale: SCALES.diverging, outlines,
        fileName: `findings-${testid}`, onExport: (format, filename) => host.emit('export', { format, filename }) });
      const patch = make(t('explorer.find.ioi.patchTitle'), t('explorer.find.ioi.patchLegend'), 'findings-ioi-patch-table');
      const dla = r.dlaHeads ? make(t('explorer.find.ioi.dlaTitle'), t('explorer.find.ioi.dlaLegend'), 'findings-ioi-dla-table') : null;
      patch.element.dataset.testid = 'findings-ioi-patch';
      if (dla) dla.element.dataset.testid = 'findings-ioi-dla';
      this._maps = { key, patch, dla, box: el('div', { class: 'maps' }, patch.element, dla?.element ?? null), legend: this.roleLegend({ numLayers: L, numHeads: H }) };
    }
    const show = (map, grid) => {
      const m = Math.max(1e-6, ...Array.from(grid, Math.abs));
      map.setRange(-m, m);
      map.update(Float32Array.from(grid));
    };
    show(this._maps.patch, r.effects);
    if (this._maps.dla) show(this._maps.dla, r.dlaHeads);
    this.ioiResult.replaceChildren(table, el('div', { class: 'maps' }, ...tops), this._maps.legend, this._maps.box,
      el('p', { class: 'small muted' }, t(r.dlaHeads ? 'explorer.find.ioi.read' : 'explorer.find.ioi.readEncoder')));
  }

  /** The roles' frames as a legend: a sample frame and the role's heads, for the roles present in this shape. */
  roleLegend(shape) {
    const present = new Set(paperOutlines(shape).map((o) => o.role));
    const items = IOI_ROLES.filter((role) => present.has(role)).map((role) => {
      const s = ROLE_STYLE[role];
      const swatch = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
      swatch.setAttribute('width', '18');
      swatch.setAttribute('height', '18');
      swatch.setAttribute('aria-hidden', 'true');
      const rect = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
      for (const [k, v] of Object.entries({ x: 2, y: 2, width: 14, height: 14, fill: 'none', stroke: s.stroke, 'stroke-width': 3 })) rect.setAttribute(k, String(v));
      if (s.dash) rect.setAttribute('stroke-dasharray', s.dash);
      swatch.append(rect);
      return el('li', { dataset: { role } }, swatch, this.t('explorer.find.role', { role: this.t(`explorer.find.role.${role}`), heads: this.heads(IOI_PAPER_HEADS[role]) }));
    });
    return el('div', {}, el('p', { class: 'small' }, this.t(items.length ? 'explorer.find.outlined' : 'explorer.find.noOutlines')),
      el('ul', { class: 'roles', dataset: { testid: 'findings-ioi-roles' } }, items));
  }

  renderInduction(m) {
    const t = this.t, host = this.host;
    if (!m.scores) { this.inductionBody.replaceChildren(el('p', { class: 'small muted' }, t('explorer.find.noScores'))); return; }
    const f = inductionFinding(m.scores, m.info);
    const items = f.top.map((h) => el('li', { dataset: { head: headText(h.layer, h.head) } }, t('explorer.find.topItem', { head: headText(h.layer, h.head), value: host.fmt(h.value, 2) })));
    const body = [el('p', { class: 'small' }, t('explorer.find.induction.top', { k: f.k })), el('ol', { class: 'top', dataset: { testid: 'findings-induction-top' } }, items)];
    if (isGpt2SmallShape(m.info)) {
      body.push(el('table', { class: 'matrix compare', dataset: { testid: 'findings-induction-paper' } },
        el('caption', { class: 'small' }, t('explorer.find.induction.caption')),
        el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, t('explorer.find.paperHead')), el('th', { scope: 'col' }, t('explorer.find.score')), el('th', { scope: 'col' }, t('explorer.find.rank')))),
        el('tbody', {}, f.paper.map((p) => el('tr', {}, el('th', { scope: 'row' }, headText(p.layer, p.head)), el('td', { class: 'num' }, host.fmt(p.value, 2)),
          el('td', { class: 'num' }, t('explorer.find.rankOf', { rank: p.rank, of: f.grid.length })))))));
      body.push(el('p', { class: 'small' }, t.plural('explorer.find.induction.found', f.found, { k: f.k })));
    } else {
      body.push(el('p', { class: 'small muted' }, t('explorer.find.induction.shape', { layers: m.info.numLayers, heads: m.info.numHeads })));
    }
    this.inductionBody.replaceChildren(...body);
  }

  /** The attention-sink card alone, from the host's scores now: the host redraws it with its sink line. */
  renderSinksNow() {
    const m = this.model();
    if (m && !this.element.hidden) this.renderSinks(m);
  }

  renderSinks(m) {
    const t = this.t, host = this.host;
    if (!m.scores) { this.sinkBody.replaceChildren(el('p', { class: 'small muted' }, t('explorer.find.noScores'))); this._sinkMap = null; return; }
    const f = sinkFinding(m.scores, m.info);
    const { numLayers: L, numHeads: H } = m.info;
    const key = `${L}x${H}|${m.key}`;
    if (!this._sinkMap || this._sinkMap.key !== key) {
      const labels = (k) => Array.from({ length: k }, (_, i) => String(i));
      const map = createHeatmap({ title: t('explorer.find.sinks.mapTitle'), rowLabels: labels(L), colLabels: labels(H), rowAxis: t('explorer.find.layer'),
        colAxis: t('explorer.find.head'), legend: t('explorer.find.sinks.legend'), testid: 'findings-sinks-table', t, digits: 2, min: 0, max: 1, maxGrid: 300,
        fileName: 'findings-first-token', onExport: (format, filename) => host.emit('export', { format, filename }) });
      map.element.dataset.testid = 'findings-sinks-map';
      this._sinkMap = { key, map };
    }
    this._sinkMap.map.update(Float32Array.from(f.grid));
    // The sink line's words and numbers (sinkSentence), heads named as this panel names them.
    this.sinkBody.replaceChildren(
      el('p', { class: 'sink-count', dataset: { testid: 'findings-sinks-count', sinks: String(f.count), heads: sinkKeys(f.heads) } },
        sinkSentence(f, { t, fmt: (v, d) => host.fmt(v, d), headName: headText })),
      el('p', { class: 'small muted' }, t('explorer.find.sinks.read', { threshold: host.fmt(f.threshold, 1) })),
      this._sinkMap.map.element);
  }
}
