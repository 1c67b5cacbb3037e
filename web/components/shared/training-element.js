// What <headlab-trainer> and <headlab-language-model> share around their training
// Worker: the Worker's lifecycle (paused when the element is removed, freed when it
// is removed for good, started again when it comes back), pausing while the page is
// hidden, the render throttle, the loss and accuracy chart holders with their export
// menus, and how they announce and report. Each element implements the hooks:
//   hasClient()      whether a trainer client exists
//   freeClient()     frees it (the element was removed for good)
//   pageHidden(hidden)  the page was hidden or shown again
//   pause(), render(), curvesCSV(), curvesFileName(name), history, task

import { HeadlabElement } from './base.js';
import { el, announce } from './dom.js';
import { exportMenu } from './export.js';
import { curvesToSVG, forExport } from './trainer-curves.js';
import { asImage } from './figure.js';

/** An <option>. */
export function option(value, label) {
  return el('option', { value: String(value) }, label ?? String(value));
}

/** Ensures `select` has an option for `value` (attribute values outside the list stay selectable). */
export function selectValue(select, value, label) {
  const v = String(value);
  if (![...select.options].some((o) => o.value === v)) select.append(option(v, label ?? v));
  select.value = v;
}

export class TrainingElement extends HeadlabElement {
  /** The prefix of the charts' data-testid (e.g. 'trainer' → trainer-chart-loss). */
  static chartPrefix = 'training';

  connectedCallback() {
    super.connectedCallback();
    this._onVisibility ??= () => this.pageHidden(document.hidden);
    document.addEventListener('visibilitychange', this._onVisibility);
    clearTimeout(this._disposeTimer);
    if (this.lab && !this.hasClient()) this.requestUpdate();
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    document.removeEventListener('visibilitychange', this._onVisibility);
    this.pause();
    // Removed for good (not just moved, which re-adds it within the same task): free the Worker and the wasm memory.
    this._disposeTimer = setTimeout(() => {
      if (!this.isConnected && this.hasClient()) this.freeClient();
    }, 0);
  }

  /** A chart with its title, a note (holder.note, which the element may rewrite) and an export menu. */
  chartSection(title, note, name) {
    const holder = { box: el('div'), fig: null, note: el('p', { class: 'small muted' }, note) };
    holder.section = el('div', { class: 'chart', part: 'chart', dataset: { testid: `${this.constructor.chartPrefix}-chart-${name}` } },
      el('h3', {}, title), holder.note, holder.box,
      exportMenu({
        what: `${title.toLowerCase()} curves`,
        name: () => this.curvesFileName(name),
        figure: () => holder.fig && forExport(holder.fig),
        csv: () => this.curvesCSV(),
        json: () => this.history.length && { task: this.task, runs: this.history },
        onExport: (format, filename) => this.emit('export', { format, filename }),
      }));
    return holder;
  }

  /** Draws a curves figure into a chart holder; `label` describes it for screen readers. */
  drawChart(holder, fig, label) {
    holder.fig = fig;
    holder.box.replaceChildren(asImage(curvesToSVG(fig), fig, label));
  }

  /**
   * Renders in the next animation frame, at most every 400 ms with reduced motion;
   * `force` also redraws what render() otherwise refreshes less often (text, tables, curves).
   */
  scheduleRender(force = false) {
    if (force) this._forceSlow = true;
    if (this._raf) return;
    const minGap = this._reduced?.matches ? 400 : 0;
    const wait = Math.max(0, (this._lastRender ?? -Infinity) + minGap - performance.now());
    const go = () => {
      this._raf = 0;
      this._lastRender = performance.now();
      this.render();
    };
    this._raf = -1;
    if (wait > 0) setTimeout(() => { this._raf = requestAnimationFrame(go); }, wait);
    else this._raf = requestAnimationFrame(go);
  }

  say(text) {
    announce(this.status, text);
  }

  fail(e, title = 'HeadLab could not do that.') {
    const message = String(e?.message ?? e);
    this.errorBox.replaceChildren(el('strong', {}, title), ` ${message}`);
    this.emit('error', { message });
  }
}
