// "One layer against two", the side-by-side panel of <headlab-language-model>: why one
// layer cannot do the task, a table of each model's best task score and held-out
// results, the one-layer model's heads (a HeadGrid and HeadDetail of their own), and a
// button that trains both from step 0. Every number comes from the controller's runs
// and the session's snapshots.

import { el, setText } from '../shared/render/dom.js';
import { fixed } from '../../lib/i18n/index.js';
import { PHASE_ACCURACY } from '../../lib/teach/lm-controller.js';
import { HeadGrid, HeadDetail } from './head-grid.js';

export class ComparePanel {
  /**
   * @param {object} o
   * @param {() => void} o.onCompare  the button: train one layer and the chosen layers side by side
   * @param {(layer: number, head: number) => void} o.onOpen  a head of the one-layer model was opened
   * @param {(head: number) => string} o.fileName  the file name of the opened head's exports
   * @param {(format: string, filename: string) => void} o.onExport
   * @param {(action: string, label: string, click: () => void) => HTMLButtonElement} o.button  the element's button maker
   * @param {Function} o.t  the element's message function
   */
  constructor({ onCompare, onOpen, fileName, onExport, button, t }) {
    this.t = t;
    this.body = el('div', { dataset: { testid: 'lm-compare-table' } });
    this.button = button('compare', t('lm.compare.button'), onCompare);
    // The one-layer model's heads, drawn and opened as the main model's are.
    this.grid = new HeadGrid({ prefix: 'lm-one', onOpen, t });
    this.detail = new HeadDetail({ prefix: 'lm-one', name: t('lm.compare.oneModel'), fileName: (layer, head) => fileName(head), onExport, t });
    this.detail.element.hidden = true;
    this.heads = el('div', { hidden: true, dataset: { testid: 'lm-one-heads' } },
      el('p', { class: 'small muted' }, t('lm.compare.oneHeads')), this.grid.element, this.detail.element);
    this.text = el('p', { class: 'small explain' });
    this.open = null;
    /** @type {{ layout: string, caption: HTMLElement, cells: HTMLElement[][] } | null} the table drawn, to update in place */
    this.table = null;
    this.element = el('section', { class: 'part compare' }, el('h3', {}, t('lm.compare.title')), this.text, this.body, this.heads, this.button);
  }

  /** New runs: the one-layer grid laid out for the second run, if there is one; no head of it open. */
  layout(runs) {
    this.heads.hidden = !runs[1];
    this.open = null;
    this.detail.element.hidden = true;
    this.detail.shown = null;
    if (runs[1]) this.grid.build(runs[1], { layer: 0, head: 0 });
  }

  /** Opens a head of the one-layer model (run 1), drawn from `s` (its snapshot run) when there is one. */
  openHead(layer, head, s, running) {
    this.open = { layer, head };
    this.grid.select(this.open);
    this.detail.element.hidden = false;
    this.detail.shown = null;
    if (s) this.detail.draw(s, this.open, { full: true, running });
  }

  /**
   * Draws the panel for the controller's `runs` and snapshot `snap`.
   * @param {{task: string, pretrained: boolean, compare: boolean, running: boolean, step: number}} o
   */
  render(runs, snap, { task, pretrained, compare, running, step }) {
    const t = this.t;
    const num = (v, d) => fixed(t.lang, v, d);
    const best = (s, key) => s.scores.reduce((b, q) => (Number.isFinite(q[key]) && (!b || q[key] > b[key]) ? q : b), null);
    const key = task === 'cricket' ? 'coreference' : 'induction';
    this.button.hidden = runs.length > 1 || runs[0].layers === 1;
    setText(this.text, t(task === 'cricket' ? 'lm.compare.cricket' : 'lm.compare.induction'));
    if (runs.length < 2 && runs[0].layers !== 1) {
      this.table = null;
      this.body.replaceChildren(el('p', { class: 'small muted' }, t(pretrained && compare ? 'lm.compare.noShipped' : 'lm.compare.train')));
      return;
    }
    // Each row's cells as text: the model, its best score, that head, accuracy, loss, the phase change.
    const rows = runs.map((r, k) => {
      const s = snap.runs[k];
      const b = best(s, key);
      return [t.plural('lm.layers', r.layers), b ? num(b[key], 2) : '—', b ? t('lm.compare.head', { layer: b.layer + 1, head: b.head + 1 }) : '—',
        num(s.eval.accuracy, 3), num(s.eval.loss, 3),
        r.phase ? t('lm.compare.atStep', { step: r.phase.step })
          : t(!r.below && r.history.length && s.eval.accuracy >= PHASE_ACCURACY ? 'lm.compare.beforeSaved'
            : task === 'induction' && r.layers === 1 ? 'lm.compare.never' : 'lm.compare.notYet')];
    });
    const one = runs[1] && snap.runs[1];
    if (one && one.shape[0] === runs[1].layers && one.shape[1] === runs[1].heads) {
      this.grid.draw(one, (l, h) => runs[1].scores.trend(l, h));
      this.grid.select(this.open);
      if (this.open) this.detail.draw(one, this.open, { full: false, running });
    }
    // The table is made when its rows or language change; each refresh while training only sets the text
    // that changed (it was a new table every 250 ms).
    const layout = `${t.lang}|${key}|${runs.map((r) => r.layers).join(',')}`;
    if (this.table?.layout !== layout) {
      const caption = el('caption');
      // The best score, accuracy and loss are numbers; the head and the phase change are words.
      const numeric = [false, true, false, true, true, false];
      const cells = rows.map(() => numeric.map((isNum, j) => (j === 0 ? el('th', { scope: 'row' }) : el('td', isNum ? { class: 'num' } : {}))));
      this.body.replaceChildren(el('div', { class: 'table-scroll' }, el('table', { class: 'matrix', dataset: { testid: 'lm-compare-rows' } },
        caption,
        el('thead', {}, el('tr', {}, [t('lm.compare.model'), t(`lm.compare.best.${key}`), t('lm.compare.headCol'), t('lm.compare.accuracy'), t('lm.compare.loss'),
          t('lm.compare.phase')].map((c) => el('th', { scope: 'col' }, c)))),
        el('tbody', {}, cells.map((c, k) => el('tr', { dataset: { layers: String(runs[k].layers) } }, c))))));
      this.table = { layout, caption, cells };
    }
    setText(this.table.caption, t(`lm.compare.caption.${key}`, { step }));
    rows.forEach((row, k) => row.forEach((text, j) => setText(this.table.cells[k][j], text)));
  }
}
