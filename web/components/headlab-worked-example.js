/**
 * <headlab-worked-example>: the course's worked example (tokens ball, full, it;
 * d_model = 4; two heads with d_k = d_v = 2), stepped through the whole
 * pipeline X → Q_i, K_i, V_i → scores → ÷√d_k → softmax → weighted sum →
 * concat → W^O. Every number comes from the WebAssembly module; embeddings and
 * every projection matrix are editable and everything downstream recomputes.
 * Step 10 turns W^O into a real mixing matrix or zeroes one head's part of it,
 * and switches heads off, to show which heads' information reaches the output.
 *
 * @attr {string} step            "1".."10" or "all" (every step at once); default "1"
 * @attr {boolean} hide-controls  hides the toolbar and step navigation (for a fixed step in a course page)
 * @attr {string} tokens          three token labels, space- or "|"-separated; default "ball full it"
 * @attr {number} query           the highlighted query token, 1..3; default 3 ("it")
 * @attr {string} wo              W^O preset: identity | mix | drop-1 | drop-2 | custom; default identity
 * @attr {string} ablate          heads switched off, comma-separated, e.g. "2"
 * @attr {'light' | 'dark' | 'auto'} theme light | dark | auto (default: light, or dark when the page declares a dark color-scheme)
 *
 * @fires {{ element: string }} headlab-ready  the module is loaded and the first result shown
 * @fires {{ output: number[][], weights: number[][][] }} headlab-change  after every recompute
 * @fires {{ message: string, detail?: unknown }} headlab-error  the inputs cannot be computed, or the module did not load
 * @fires {{ lang: string }} headlab-relocalised  its language changed (the `lang` attribute or an ancestor's)
 * @fires {{ url: string }} headlab-link  a share link was made
 *
 * @csspart heatmap   each attention heatmap figure
 * @csspart export    each download menu
 * @csspart copy-link the copy-link button
 * @csspart steps     the step navigation
 */

import { HeadlabElement } from './shared/elements/base.js';
import { el } from './shared/render/dom.js';
import { parseTokens, clip } from '../lib/teach/format.js';
import { formulaCss } from './shared/render/formula-css.js';
import { typesetFrom } from './shared/render/prerendered.js';
import formulas from 'headlab:formulas/worked-example';
import { stepTex, captionTex } from './worked-example/formulas.js';
import { inputMatrix, resultMatrix } from './shared/render/matrix.js';
import { createHeatmap } from './shared/render/heatmap.js';
import { COURSE_EXAMPLE } from '../lib/teach/examples.js';
import { rows } from '../lib/teach/values.js';
import messages from '../lib/i18n/catalogues/worked-example.js';

// Every formula here is typeset at build time (worked-example/formulas.js): no KaTeX code on the page.
const tex = typesetFrom(formulas);

const D_MODEL = 4, H = 2, D_K = 2, D_V = 2, T = 3;
const PROJ = [{ key: 'q', letter: 'Q' }, { key: 'k', letter: 'K' }, { key: 'v', letter: 'V' }];

const WO_PRESETS = {
  identity: COURSE_EXAMPLE.wO,
  // An invertible mixing matrix (det ≈ 0.27): every output number blends both heads.
  mix: [[0.8, 0.2, 0.3, -0.1], [-0.2, 0.7, 0.1, 0.4], [0.3, -0.1, 0.9, 0.2], [0.1, 0.5, -0.3, 0.6]],
  'drop-1': [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
  'drop-2': [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
};
const WO_CHOICES = ['identity', 'mix', 'drop-1', 'drop-2', 'custom'];

// Step titles are messages we.step.1 … we.step.10; the short names are notation, the same in every language.
const STEPS = ['X', 'Q', 'K', 'V', 'QKᵀ', '÷√dₖ', 'softmax', '·V', 'concat', 'Wᴼ'].map((short, i) => ({ short, n: i + 1 }));

const concatLabels = [];
const concatHeads = [];
for (let h = 0; h < H; h++) {
  for (let c = 0; c < D_V; c++) {
    concatLabels.push(`h${h + 1} · ${c + 1}`);
    concatHeads.push({ h: h + 1, c: c + 1 });
  }
}

const CSS = `
.top { display: flex; flex-wrap: wrap; justify-content: space-between; gap: 0.4rem 1rem; align-items: baseline; }
.top h2 { margin: 0; }
nav.stepnav ol { list-style: none; display: flex; flex-wrap: wrap; align-items: center; gap: 0.3rem; padding: 0; margin: 0.6rem 0; }
nav.stepnav ol ol { margin: 0; }
nav.stepnav .btn { font-size: 0.82rem; padding: 0.25rem 0.5rem; min-height: 2rem; }
nav.stepnav .btn .n { font-variant-numeric: tabular-nums; }
/* Arrows between stages show the flow; the per-head stages sit in one frame, drawn as a stack of two. */
nav.pipeline li.stage + li::before, nav.pipeline li.per-head + li::before { content: "→"; color: var(--hl-muted); margin-right: 0.3rem; }
nav.pipeline li.stage:not(:first-child)::before { content: "→"; color: var(--hl-muted); margin-right: 0.3rem; }
nav.pipeline li.per-head { position: relative; border: 1px solid var(--hl-border); border-radius: 8px; padding: 1.1rem 0.4rem 0.35rem;
  box-shadow: 4px 4px 0 -1px var(--hl-bg), 4px 4px 0 0 var(--hl-border); }
nav.pipeline li.per-head::before { content: "→"; color: var(--hl-muted); position: absolute; left: -0.95rem; top: 50%; transform: translateY(-50%); }
nav.pipeline li.per-head { margin-left: 1rem; margin-right: 0.3rem; }
nav.pipeline .per-head__label { position: absolute; top: 0.1rem; left: 0.5rem; font-size: 0.72rem; color: var(--hl-muted); }
nav.pipeline li.per-head > ol li.stage:first-child::before, nav.pipeline li.stage.stage--parallel:not(:first-child)::before { content: none; }
nav.pipeline .btn[aria-current="step"] { outline: 2px solid var(--hl-accent); outline-offset: 1px; }
section.step { border-top: 1px solid var(--hl-border); padding-top: 0.4rem; margin-top: 0.6rem; }
section.step > h3 { margin-top: 0.3rem; }
section.step > h3 .n { color: var(--hl-muted); font-weight: 400; }
.pager { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; justify-content: space-between; margin: 0.8rem 0; }
.pager .where { color: var(--hl-muted); font-size: 0.9rem; }
.heads { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 16rem), 1fr)); gap: 0.8rem; }
.summary { margin-top: 1rem; border-top: 2px solid var(--hl-border); padding-top: 0.4rem; }
.survive ul { margin: 0.3rem 0; padding-left: 1.2rem; }
.survive li { margin: 0.2rem 0; }
.lost { color: var(--hl-error); font-weight: 600; }
.kept { color: var(--hl-ok); font-weight: 600; }
.switches { display: flex; flex-wrap: wrap; gap: 0.4rem 1.2rem; }
`;

export class HeadlabWorkedExample extends HeadlabElement {
  static tag = 'headlab-worked-example';
  static stateKey = 'worked';
  static css = formulaCss + CSS;
  static formulas = true;
  static messages = messages;
  static props = {
    step: { type: 'enum', values: ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', 'all'], default: '1', state: true },
    hideControls: { attr: 'hide-controls', type: 'bool', default: false },
    tokens: { type: 'string', default: 'ball full it' },
    query: { type: 'int', default: 3, min: 1, max: 3 },
    wo: { type: 'enum', values: ['identity', 'mix', 'drop-1', 'drop-2', 'custom'], default: 'identity', state: true },
    ablate: { type: 'string', default: '', state: true },
  };

  build() {
    const t = this.t;
    this.stepTitle = (n) => t(`we.step.${n}`);
    this.features = [0, 1, 2, 3].map((i) => t(`we.feature.${i}`));
    this.featuresShort = [0, 1, 2, 3].map((i) => t(`we.featureShort.${i}`));
    this.outLabels = [1, 2, 3, 4].map((n) => t('we.out', { n }));
    this.concatNames = concatHeads.map(({ h, c }) => t('we.concatName', { h, c }));
    this.cells = new Map();      // id → { input, label, fallback }
    this.views = [];             // { update(result) }
    this.labelTargets = [];      // objects with setRowLabels / setLabels, refreshed when tokens change
    this._appliedWo = null;
    this._tokens = this.tokenLabels();
    const tokens = this._tokens;
    const q = this.query - 1;

    this.statusLine = el('p', { class: 'status', role: 'status' }, t('we.loading'));
    this.resetButton = el('button', { type: 'button', class: 'btn', id: 'reset', dataset: { testid: 'reset' } }, t('we.reset'));
    this.allToggle = el('input', { type: 'checkbox', id: 'show-all' });
    this.toolbar = el('div', { class: 'toolbar' },
      this.resetButton,
      el('label', { class: 'check', for: 'show-all' }, this.allToggle, t('we.showAll')),
      this.copyLink());

    // Named by their own text (visible "1 X", read "Step 1 X: Token embeddings"), so the name holds what is seen.
    this.navButtons = STEPS.map((s, i) => el('button', { type: 'button', class: 'btn', dataset: { step: String(i + 1) } },
      el('span', { class: 'sr-only' }, t('we.stepWord')), el('span', { class: 'n' }, String(i + 1)), ' ', s.short,
      el('span', { class: 'sr-only' }, `: ${this.stepTitle(s.n)}`)));
    // The whole pipeline as one figure: X, then what every head does on its own (steps 2-8, once per
    // head, in parallel), then concatenation and W^O. Each stage is the button that opens its step.
    // Q, K and V are three projections of the same X, made side by side: no arrows between them.
    const stage = (i) => el('li', { class: i === 2 || i === 3 ? 'stage stage--parallel' : 'stage' }, this.navButtons[i]);
    this.nav = el('nav', { class: 'stepnav pipeline', 'aria-label': t('we.navLabel'), part: 'steps' },
      el('ol', {},
        stage(0),
        el('li', { class: 'per-head' },
          el('span', { class: 'per-head__label' }, t('we.perHead')),
          el('ol', {}, [1, 2, 3, 4, 5, 6, 7].map(stage))),
        stage(8), stage(9)));

    this.errorBox = el('div', { class: 'alert', role: 'alert', id: 'error', dataset: { testid: 'error' } });
    this.resultsNote = el('p', { class: 'stale-note', dataset: { testid: 'results-note' } });

    this.form = el('form', { id: 'editor', novalidate: true, autocomplete: 'off' });
    this.sections = STEPS.map((s, i) => this.buildStep(i, tokens, q));
    this.form.append(...this.sections);
    const summary = this.buildSummary(tokens, q);
    // Only the step shown is laid out, from the first frame on (the module may still be loading).
    this.showStep(this.step);

    this.prevButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'prev' } }, t('we.prev'));
    this.nextButton = el('button', { type: 'button', class: 'btn btn--primary', dataset: { action: 'next' } }, t('we.next'));
    this.where = el('span', { class: 'where', 'aria-live': 'polite' });
    this.pager = el('div', { class: 'pager' }, this.prevButton, this.where, this.nextButton);

    this.root.append(
      el('div', { class: 'top' }, el('h2', {}, t('we.title')), this.statusLine),
      this.toolbar, this.nav, this.errorBox, this.resultsNote, this.form, this.pager, summary);

    this.form.addEventListener('input', (event) => {
      if (event.target.matches?.('input.cell')) {
        if (event.target.id.startsWith('wo-') && this.wo !== 'custom') {
          this._appliedWo = 'custom';
          this.wo = 'custom';
        }
        this.recompute();
      }
    });
    this.form.addEventListener('submit', (event) => event.preventDefault());
    this.resetButton.addEventListener('click', () => {
      this.setInputs(COURSE_EXAMPLE);
      this._appliedWo = 'identity';
      this.wo = 'identity';
      this.ablate = '';
      this.recompute();
    });
    this.allToggle.addEventListener('change', () => {
      this.step = this.allToggle.checked ? 'all' : String(this._lastStep ?? 1);
    });
    this.navButtons.forEach((b, i) => b.addEventListener('click', () => { this.step = String(i + 1); }));
    this.prevButton.addEventListener('click', () => this.go(-1));
    this.nextButton.addEventListener('click', () => this.go(1));
    this.setInputs(COURSE_EXAMPLE);
  }

  /** Shows step `step` ('1'..'10') or every step ('all'), and the summary's weight maps unless step 7 shows them. */
  showStep(step) {
    this.sections.forEach((s, i) => { s.hidden = step !== 'all' && Number(step) !== i + 1; });
    for (const map of this.summaryMaps) map.hidden = step === 'all' || step === '7';
  }

  tokenLabels() {
    const list = parseTokens(this.tokens);
    return list.length === T ? list : parseTokens('ball full it');
  }

  go(delta) {
    const current = this.step === 'all' ? (this._lastStep ?? 1) : Number(this.step);
    const next = Math.min(STEPS.length, Math.max(1, current + delta));
    this.step = String(next);
  }

  // ------------------------------------------------------------- building

  buildStep(i, tokens, q) {
    const t = this.t;
    const n = i + 1;
    const FEATURES = this.features, FEATURES_SHORT = this.featuresShort, OUT_LABELS = this.outLabels, concatNames = this.concatNames;
    const heading = el('h3', { id: `step-${n}-title` }, el('span', { class: 'n' }, t('we.stepOf', { n, total: STEPS.length })), this.stepTitle(n));
    const section = el('section', { class: 'step', dataset: { step: String(n) }, 'aria-labelledby': `step-${n}-title` }, heading);
    const formula = () => el('div', { class: 'formula' }, stepTex(n, t).map((src) => tex(src, { display: true })));
    const perHead = (make, titled = true) => el('div', { class: 'heads' }, [0, 1].map((h) => el('div', { class: 'card' }, titled ? el('h4', {}, t('we.head', { h: h + 1 })) : null, make(h))));
    const tokenSpan = (k) => el('q', {}, tokens[k]);
    const tokenText = (k) => {
      const span = tokenSpan(k);
      this.labelTargets.push({ setToken: (list) => { span.textContent = list[k]; } });
      return span;
    };

    switch (n) {
      case 1: {
        section.append(formula(),
          el('p', { class: 'explain' }, t('we.s1.explain')));
        const m = inputMatrix({
          caption: el('span', {}, t('we.s1.caption'), el('span', { class: 'shape' }, t('we.s1.shape'))),
          t, idPrefix: 'x', rowLabels: tokens, colLabels: FEATURES_SHORT.map((f) => f.replace('/', '/\u200b')),
          describe: (r, c) => t('we.s1.describe', { token: tokens[r], feature: FEATURES[c] }), highlightRow: q,
        });
        this.registerInputs(m, 'x', (r, c) => t('we.s1.describe', { token: tokens[r], feature: FEATURES[c] }));
        this.labelTargets.push(m);
        section.append(m.element);
        break;
      }
      case 2: case 3: case 4: {
        const p = PROJ[n - 2];
        section.append(formula());
        const what = t(`we.proj.${p.key}`);
        section.append(el('p', { class: 'explain' }, t(`we.s${n}.explain`)));
        section.append(perHead((h) => {
          const m = inputMatrix({
            caption: el('span', {}, tex(captionTex.weights(p.letter, h + 1)), el('span', { class: 'shape' }, t('we.proj.caption', { what }))),
            t, idPrefix: `w${p.key}-${h + 1}`, rowLabels: FEATURES_SHORT, colLabels: ['1', '2'],
            describe: (r, c) => t('we.proj.describe', { h: h + 1, letter: p.letter, what, row: FEATURES_SHORT[r], c: c + 1 }),
          });
          this.registerInputs(m, `w${p.key}-${h + 1}`, (r, c) => t('we.proj.describe', { h: h + 1, letter: p.letter, what, row: FEATURES_SHORT[r], c: c + 1 }));
          const result = resultMatrix({
            caption: el('span', {}, tex(captionTex.projected(p.letter, h + 1)), el('span', { class: 'shape' }, t('we.proj.result', { plural: t(`we.projPlural.${p.key}`) }))),
            rowLabels: tokens, colLabels: ['1', '2'], testid: `${p.key}-head-${h + 1}`, markRow: q, t,
          });
          this.labelTargets.push(result);
          this.views.push({ update: (r) => result.update(r && r.intermediates[p.key], h * T * 2) });
          return el('div', { class: 'row' }, m.element, result.element);
        }));
        break;
      }
      case 5: case 6: {
        const scaled = n === 6;
        section.append(formula());
        section.append(el('p', { class: 'explain' }, scaled
          ? t('we.s6.explain')
          : t.parts('we.s5.explain', { query: () => tokenText(q), first: () => tokenText(0) })));
        section.append(perHead((h) => {
          const result = resultMatrix({
            caption: el('span', {}, tex(captionTex.scores(h + 1, scaled)), el('span', { class: 'shape' }, t('we.scores.shape'))),
            rowLabels: tokens, colLabels: tokens, testid: `${scaled ? 'scaled-scores' : 'scores'}-head-${h + 1}`, markRow: q, t,
          });
          this.labelTargets.push(result);
          this.views.push({ update: (r) => result.update(r && r.intermediates[scaled ? 'scaledScores' : 'scores'], h * T * T) });
          return result.element;
        }));
        break;
      }
      case 7: {
        section.append(formula());
        section.append(el('p', { class: 'explain' }, t.parts('we.s7.explain', { query: () => tokenText(q), first: () => tokenText(0), second: () => tokenText(1) })));
        section.append(perHead((h) => {
          const hm = createHeatmap({
            title: t('we.s7.heatmap', { h: h + 1 }), rowLabels: tokens, colLabels: tokens, t,
            testid: `weights-table-head-${h + 1}`, markRow: q, markRowTestid: `weights-head-${h + 1}`,
            fileName: `worked-example-head-${h + 1}-weights`,
          });
          this.labelTargets.push({ setLabels: (list) => hm.setLabels(list, list) });
          this.views.push({ update: (r) => hm.update(r && r.weights, h * T * T) });
          return hm.element;
        }, false));
        // The softmax arithmetic for the query row, and why the largest weight lands where it does.
        const why = el('div', { class: 'why', dataset: { testid: 'weights-why' } });
        this.views.push({ update: (r) => this.explainWeights(why, r) });
        section.append(why);
        break;
      }
      case 8: {
        section.append(formula());
        section.append(el('p', { class: 'explain' }, t('we.s8.explain')));
        section.append(perHead((h) => {
          const result = resultMatrix({
            caption: el('span', {}, tex(captionTex.head(h + 1)), el('span', { class: 'shape' }, t('we.s8.shape'))),
            rowLabels: tokens, colLabels: ['1', '2'], testid: `head-output-table-${h + 1}`, markRow: q, markRowTestid: `head-output-${h + 1}`, t,
          });
          this.labelTargets.push(result);
          this.views.push({ update: (r) => result.update(r && r.intermediates.headOutputs, h * T * D_V) });
          return result.element;
        }));
        break;
      }
      case 9: {
        section.append(formula());
        section.append(el('p', { class: 'explain' }, t('we.s9.explain')));
        const result = resultMatrix({
          caption: el('span', {}, 'Concat(head', el('sub', {}, '1'), ', head', el('sub', {}, '2'), ')', el('span', { class: 'shape' }, ' (3 × 4)')),
          rowLabels: tokens, colLabels: concatLabels, testid: 'concat-table', markRow: q, markRowTestid: 'concat', t,
        });
        this.labelTargets.push(result);
        this.views.push({ update: (r) => result.update(r && r.intermediates.concat, 0) });
        section.append(result.element);
        break;
      }
      case 10: {
        section.append(formula());
        const W = () => ['W', el('sup', {}, 'O')];
        section.append(el('p', { class: 'explain' }, t.parts('we.s10.explain', { W, dmodel: () => ['d', el('sub', {}, 'model')] })));
        this.woSelect = el('select', { id: 'wo-preset' },
          WO_CHOICES.map((value) => el('option', { value }, t(`we.wo.${value}`))));
        this.woSelect.addEventListener('change', () => {
          this.wo = this.woSelect.value;
        });
        this.headSwitches = [0, 1].map((h) => {
          const box = el('input', { type: 'checkbox', id: `head-on-${h + 1}`, checked: true, dataset: { testid: `head-on-${h + 1}` } });
          box.addEventListener('change', () => {
            const off = [0, 1].filter((k) => !this.headSwitches[k].checked).map((k) => k + 1);
            this.ablate = off.join(',');
          });
          return box;
        });
        section.append(el('div', { class: 'toolbar' },
          el('label', { for: 'wo-preset' }, t.parts('we.s10.woIs', { W })), this.woSelect));
        section.append(el('fieldset', {}, el('legend', {}, t('we.s10.switches')),
          el('div', { class: 'switches' }, this.headSwitches.map((box, h) => el('label', { class: 'check', for: box.id }, box, t('we.head', { h: h + 1 }))))));
        const m = inputMatrix({
          caption: el('span', {}, tex(captionTex.wo), el('span', { class: 'shape' }, t('we.s10.woShape'))),
          t, idPrefix: 'wo', rowLabels: concatLabels, colLabels: OUT_LABELS,
          describe: (r, c) => t('we.s10.describe', { row: concatNames[r], c: c + 1 }),
        });
        this.registerInputs(m, 'wo', (r, c) => t('we.s10.describe', { row: concatNames[r], c: c + 1 }));
        const result = resultMatrix({
          caption: el('span', {}, t('we.s10.output'), tex(captionTex.wo), el('span', { class: 'shape' }, ' (3 × 4)')),
          rowLabels: tokens, colLabels: OUT_LABELS, testid: 'output-table', markRow: q, markRowTestid: 'output', t,
        });
        this.labelTargets.push(result);
        this.views.push({ update: (r) => result.update(r && r.output, 0) });
        this.survive = el('div', { class: 'note survive', 'aria-live': 'polite', dataset: { testid: 'survive' } });
        section.append(el('div', { class: 'row' }, m.element, result.element), this.survive);
        break;
      }
      default: break;
    }
    return section;
  }

  buildSummary(tokens, q) {
    const t = this.t;
    const out = resultMatrix({
      caption: el('span', {}, t('we.summary.output'), el('span', { class: 'shape' }, ' (3 × 4)')),
      rowLabels: tokens, colLabels: this.outLabels, testid: 'summary-output', markRow: q, t,
    });
    this.labelTargets.push(out);
    this.views.push({ update: (r) => out.update(r && r.output, 0) });
    const maps = [0, 1].map((h) => {
      const hm = createHeatmap({
        title: t('we.summary.heatmap', { h: h + 1 }), rowLabels: tokens, colLabels: tokens, testid: `summary-weights-head-${h + 1}`, markRow: q, t,
        fileName: `worked-example-head-${h + 1}-weights`,
      });
      this.labelTargets.push({ setLabels: (list) => hm.setLabels(list, list) });
      this.views.push({ update: (r) => hm.update(r && r.weights, h * T * T) });
      return hm.element;
    });
    // The weight maps are what step 7 shows in full: while step 7 (or every step) is open they are not repeated here.
    this.summaryMaps = maps;
    return el('section', { class: 'summary', 'aria-labelledby': 'summary-title' },
      el('h3', { id: 'summary-title' }, t('we.summary.title')),
      el('p', { class: 'small muted explain' }, t('we.summary.explain')),
      el('div', { class: 'heads' }, maps, el('div', {}, out.element)));
  }

  registerInputs(m, prefix, describe) {
    m.inputs.forEach((row, r) => row.forEach((input, c) => {
      this.cells.set(`${prefix}-${r}-${c}`, { input, label: describe(r, c) });
    }));
  }

  // --------------------------------------------------------------- values

  setInputs(example) {
    const set = (id, value) => {
      const cell = this.cells.get(id);
      cell.input.value = String(value);
      cell.input.removeAttribute('aria-invalid');
    };
    example.x.forEach((row, r) => row.forEach((v, c) => set(`x-${r}-${c}`, v)));
    example.heads.forEach((head, h) => {
      for (const p of PROJ) head[p.key].forEach((row, r) => row.forEach((v, c) => set(`w${p.key}-${h + 1}-${r}-${c}`, v)));
    });
    example.wO.forEach((row, r) => row.forEach((v, c) => set(`wo-${r}-${c}`, v)));
  }

  read(id) {
    const { input } = this.cells.get(id);
    const value = input.valueAsNumber;
    if (Number.isFinite(value)) input.removeAttribute('aria-invalid');
    else input.setAttribute('aria-invalid', 'true');
    return value;
  }

  /** The API's flat row-major arrays; head h of wQ/wK/wV in columns h*2..h*2+1. */
  readOptions() {
    const query = new Float32Array(T * D_MODEL);
    for (let r = 0; r < T; r++) for (let c = 0; c < D_MODEL; c++) query[r * D_MODEL + c] = this.read(`x-${r}-${c}`);
    const combined = (key, width) => {
      const m = new Float32Array(D_MODEL * H * width);
      for (let h = 0; h < H; h++) {
        for (let r = 0; r < D_MODEL; r++) {
          for (let c = 0; c < width; c++) m[r * H * width + h * width + c] = this.read(`w${key}-${h + 1}-${r}-${c}`);
        }
      }
      return m;
    };
    const wO = new Float32Array(H * D_V * D_MODEL);
    for (let r = 0; r < H * D_V; r++) for (let c = 0; c < D_MODEL; c++) wO[r * D_MODEL + c] = this.read(`wo-${r}-${c}`);
    return { query, dModel: D_MODEL, numHeads: H, dK: D_K, dV: D_V, wQ: combined('q', D_K), wK: combined('k', D_K), wV: combined('v', D_V), wO };
  }

  ablated() {
    return new Set(this.ablate.split(',').map((s) => Number.parseInt(s, 10)).filter((n) => n >= 1 && n <= H));
  }

  attributeProblems() {
    const out = super.attributeProblems();
    const n = parseTokens(this.tokens).length;
    if (n !== T) out.push(this.t.plural('we.problem.tokens', n, { needed: T }));
    const unknown = this.ablate.split(',').map((x) => x.trim()).filter((x) => x && x !== '1' && x !== '2');
    if (unknown.length) out.push(this.t('we.problem.ablate', { list: unknown.slice(0, 3).map((x) => JSON.stringify(clip(x, 20))).join(', ') }));
    return out;
  }

  /** The module's headMask (1 = on) with `heads` (numbered from 1) switched off. */
  static headMask(heads) {
    return Uint8Array.from({ length: H }, (_, i) => (heads.has(i + 1) ? 0 : 1));
  }

  // --------------------------------------------------------------- update

  update() {
    const tokens = this.tokenLabels();
    if (tokens.join('\u0000') !== this._tokens.join('\u0000')) {
      this._tokens = tokens;
      for (const target of this.labelTargets) {
        if (target.setRowLabels) target.setRowLabels(tokens);
        if (target.setLabels) target.setLabels(tokens);
        if (target.setToken) target.setToken(tokens);
      }
    }
    const hide = this.hideControls;
    this.toolbar.hidden = hide;
    this.nav.hidden = hide;
    this.pager.hidden = hide || this.step === 'all';

    const step = this.step;
    if (step !== 'all') this._lastStep = Number(step);
    this.allToggle.checked = step === 'all';
    this.showStep(step);
    this.navButtons.forEach((b, i) => {
      if (step !== 'all' && Number(step) === i + 1) b.setAttribute('aria-current', 'step');
      else b.removeAttribute('aria-current');
    });
    const n = step === 'all' ? 0 : Number(step);
    this.prevButton.disabled = n <= 1;
    this.nextButton.disabled = n >= STEPS.length;
    this.where.textContent = n ? this.t('we.where', { n, total: STEPS.length, title: this.stepTitle(n) }) : '';

    const wo = this.wo;
    this.woSelect.value = wo;
    if (wo !== this._appliedWo) {
      if (WO_PRESETS[wo]) WO_PRESETS[wo].forEach((row, r) => row.forEach((v, c) => { this.cells.get(`wo-${r}-${c}`).input.value = String(v); }));
      this._appliedWo = wo;
    }
    const off = this.ablated();
    this.headSwitches.forEach((box, h) => { box.checked = !off.has(h + 1); });
    this.recompute();
  }

  recompute() {
    if (!this.lab) return;
    const off = this.ablated();
    let options, result;
    try {
      options = this.readOptions();
      result = this.lab.multiHeadAttention({
        ...options, headMask: HeadlabWorkedExample.headMask(off), returnWeights: true, returnIntermediates: true,
      });
    } catch (e) {
      const bad = [...this.cells.values()].filter(({ input }) => !Number.isFinite(input.valueAsNumber));
      // The reader is told which cells to fix, in words; the API's own message goes to the console
      // (and to the headlab-error event) for developers.
      const detail = e instanceof Error ? e.message : String(e);
      const t = this.t;
      const cells = bad.slice(0, 3).map((b) => b.label).join('; ') + (bad.length > 3 ? t('we.error.more', { n: bad.length - 3 }) : '');
      const message = bad.length === 0 ? t('we.error.cannot', { detail }) : t.plural('we.error.cells', bad.length, { cells });
      console.info(`headlab-worked-example: ${detail}`);
      this.errorBox.textContent = message;
      this.resultsNote.textContent = bad.length > 0 ? t('we.note.cells') : t('we.note.error');
      this.form.classList.add('stale');
      for (const v of this.views) v.update(null);
      this.survive.replaceChildren();
      this.emit('error', { message, detail });
      return;
    }
    if (this.errorBox.textContent) this.errorBox.textContent = '';
    if (this.resultsNote.textContent) this.resultsNote.textContent = '';
    this.form.classList.remove('stale');
    this.statusLine.textContent = this.t('we.status', { version: this.lab.info().version, kind: this.lab.info().simd ? 'WebAssembly SIMD' : 'WebAssembly' });
    for (const v of this.views) v.update(result);
    this.explainSurvival(options, off, result);
    this.emit('change', { output: rows(result.output, T, D_MODEL), weights: [0, 1].map((h) => rows(result.weights.slice(h * T * T), T, T)) });
  }

  /**
   * For each head, the softmax of the query row written out as in the course
   * (e^s for each key, their sum, each share) from the module's scaled scores and
   * weights, and one sentence on where the largest weight goes and why: when the
   * query's best match is its own key (its edited embedding moved its key along
   * with its query), the sentence says so.
   */
  explainWeights(box, result) {
    if (!result) { box.replaceChildren(); return; }
    const q = this.query - 1;
    const tokens = this._tokens;
    const t = this.t;
    const fmt = (v, d) => this.fmt(v, d);
    const name = (k) => (t.lang === 'es' ? `«${tokens[k]}»` : `“${tokens[k]}”`);
    const items = [0, 1].map((h) => {
      const scores = Array.from(result.intermediates.scaledScores.slice(h * T * T + q * T, h * T * T + (q + 1) * T));
      const weights = Array.from(result.weights.slice(h * T * T + q * T, h * T * T + (q + 1) * T));
      // Display only: e^s of each scaled score from the module (the exponents are printed to 4
      // decimals, the values are of the unrounded scores). The weights shown are the module's.
      const exps = scores.map((v) => Math.exp(v));
      const sum = exps.reduce((a, b) => a + b, 0);
      const big = (v) => (v >= 1e6 ? v.toExponential(3) : fmt(v));
      const top = weights.indexOf(Math.max(...weights));
      const arithmetic = Number.isFinite(sum)
        ? `${scores.map((v) => `exp(${fmt(v)})`).join(' + ')} = ${exps.map(big).join(' + ')} = ${big(sum)}; ${t('we.why.weights')} ${exps.map((v) => `${big(v)} / ${big(sum)}`).join(t('list.sep'))} = ${weights.map((v) => fmt(v)).join(t('list.sep'))}`
        : `${t('we.why.weights')} ${weights.map((v) => fmt(v)).join(t('list.sep'))}`;
      let reason;
      if (top !== q && Math.abs(weights[top] - weights[q]) < 1e-3) {
        reason = t('we.why.split', { h: h + 1, query: name(q), top: name(top), weight: fmt(weights[top]), self: fmt(scores[q]) });
      } else if (top === q) {
        const rival = scores.map((v, k) => (k === q ? -Infinity : v)).reduce((b, v, k, a) => (v > a[b] ? k : b), q === 0 ? 1 : 0);
        reason = t('we.why.self', { h: h + 1, query: name(q), weight: fmt(weights[q]), self: fmt(scores[q]), rival: name(rival), rivalScore: fmt(scores[rival]) });
      } else {
        reason = t('we.why.top', { h: h + 1, query: name(q), top: name(top), score: fmt(scores[top]), weight: fmt(weights[top]) });
      }
      return el('li', { dataset: { head: String(h + 1), top: String(top) } }, el('span', {}, reason), el('br'), el('span', { class: 'small muted' }, arithmetic));
    });
    box.replaceChildren(el('p', {}, el('strong', {}, t('we.why.title'), el('q', {}, tokens[q]))), el('ul', {}, items));
  }

  /** For each head, how far the output moves when that head alone is switched off. */
  explainSurvival(options, off, result) {
    const q = this.query - 1;
    const tokens = this._tokens;
    const t = this.t;
    const items = [0, 1].map((h) => {
      if (off.has(h + 1)) {
        return el('li', {}, t('we.survive.off', { h: h + 1 }));
      }
      const without = new Set([...off, h + 1]);
      const r = this.lab.multiHeadAttention({ ...options, headMask: HeadlabWorkedExample.headMask(without) });
      let delta = 0;
      for (let i = 0; i < r.output.length; i++) delta = Math.max(delta, Math.abs(r.output[i] - result.output[i]));
      const kept = delta > 5e-5;
      return el('li', { dataset: { head: String(h + 1), reaches: String(kept) } },
        t('we.survive.move', { h: h + 1, delta: this.fmt(delta) }),
        el('span', { class: kept ? 'kept' : 'lost' }, kept ? t('we.survive.kept') : t('we.survive.lost', { W: 'W\u1D3C', h: h + 1 })));
    });
    const outIt = Array.from(result.output.slice(q * D_MODEL, (q + 1) * D_MODEL), (v) => this.fmt(v)).join(t('list.sep'));
    this.survive.replaceChildren(
      el('strong', {}, t('we.survive.title')),
      el('p', { class: 'small' }, t('we.survive.output'), el('q', {}, tokens[q]), `: [${outIt}]`),
      el('ul', {}, items));
  }

  getExtraState() {
    const out = {};
    const matrix = (prefix, rows, cols, expected) => {
      const values = [];
      let differs = false;
      for (let r = 0; r < rows; r++) {
        const row = [];
        for (let c = 0; c < cols; c++) {
          const text = this.cells.get(`${prefix}-${r}-${c}`).input.value;
          row.push(text);
          if (Number(text) !== expected[r][c]) differs = true;
        }
        values.push(row.join(','));
      }
      if (differs) out[prefix] = values.join(';');
    };
    matrix('x', T, D_MODEL, COURSE_EXAMPLE.x);
    for (let h = 0; h < H; h++) for (const p of PROJ) matrix(`w${p.key}-${h + 1}`, D_MODEL, 2, COURSE_EXAMPLE.heads[h][p.key]);
    // A custom W^O is always written out (NaN never equals a cell, so it counts as different).
    if (this.wo === 'custom') matrix('wo', H * D_V, D_MODEL, Array.from({ length: H * D_V }, () => Array(D_MODEL).fill(NaN)));
    return out;
  }

  setExtraState(map) {
    const prefixes = ['x', 'wo'];
    for (let h = 0; h < H; h++) for (const p of PROJ) prefixes.push(`w${p.key}-${h + 1}`);
    for (const prefix of prefixes) {
      if (!map.has(prefix)) continue;
      map.get(prefix).split(';').forEach((row, r) => row.split(',').forEach((text, c) => {
        const cell = this.cells.get(`${prefix}-${r}-${c}`);
        if (cell) cell.input.value = text;
      }));
      if (prefix === 'wo') this._appliedWo = 'custom';
    }
  }
}
