// What <headlab-trainer> and <headlab-language-model> share around their training
// Worker: the Worker's lifecycle (paused when the element is removed, freed when it
// is removed for good, started again when it comes back), pausing while the page is
// hidden, the render throttle (and no drawing far off screen while training), the loss
// and accuracy chart holders (drawn once, then in place) with their export
// menus, the CSS of their settings, run bar and charts, and how they announce and report
// what their controller (web/lib/teach/training-controller.js) does. Each element has
// its controller as `ctl` and implements render(), renderButtons(), curvesCSV(),
// curvesFileName(name), history and task.

import { HeadlabElement } from './base.js';
import { el, announce } from '../render/dom.js';
import { exportMenu } from '../render/export.js';
import { curvesToSVG, forExport, forPage } from '../render/trainer-curves.js';
import { asImage, updateFigure } from '../render/figure.js';
import { LANGUAGES } from '../../../lib/i18n/index.js';
import { pageRefresh } from '../../../lib/teach/paced-refresh.js';
import training from '../../../lib/i18n/catalogues/training.js';

/** Where training runs, in words (fallback-reasons.js, where Node tests it). */
export { modeText } from '../worker/fallback-reasons.js';

/** An element's catalogue with the messages both training elements use (catalogues/training.js) before it. */
export function withTraining(catalogue) {
  return Object.fromEntries(LANGUAGES.map((lang) => [lang, { ...training[lang], ...catalogue[lang] }]));
}

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

/** Why a session pauses (trainer-session.js): a change of state with one of these is reported as a pause. */
const PAUSE_REASONS = new Set(['pause', 'limit', 'error', 'diverged']);
/** The controller's states that were training when a pause took effect. */
const TRAINED = new Set(['running', 'pausing', 'hiding']);

/** The rules both training elements use, before each one's own CSS. */
export const trainingCss = `
.settings { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 8rem), 1fr)); gap: 0.2rem 0.9rem; align-items: end; }
.settings .field { flex-direction: column; align-items: stretch; gap: 0.15rem; margin: 0.25rem 0; }
.settings .field > label { min-width: 0; }
.settings select, .settings input[type="number"] { width: 100%; }
.settings .wide { grid-column: 1 / -1; }
.runbar .progress { font-variant-numeric: tabular-nums; color: var(--hl-muted); font-size: 0.9rem; }
.btn--start { min-width: 6.5rem; }
.btn--primary:hover { background: var(--hl-accent); color: var(--hl-bg); filter: brightness(1.12); }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 21rem), 1fr)); gap: 0.9rem; margin: 0.5rem 0; }
.chart { min-width: 0; }
.chart h3 { margin: 0 0 0.2rem; font-size: 0.98rem; }
.chart svg { max-width: 100%; height: auto; }
.files { display: flex; flex-wrap: wrap; gap: 0.4rem 0.8rem; align-items: center; }
@container (max-width: 30rem) {
  .charts { grid-template-columns: 1fr; }
}
`;

export class TrainingElement extends HeadlabElement {
  /** The prefix of the charts' data-testid (e.g. 'trainer' → trainer-chart-loss). */
  static chartPrefix = 'training';

  connectedCallback() {
    super.connectedCallback();
    // A hidden tab does not need to train: paused, and going on when it is shown again.
    this._onVisibility ??= () => (document.hidden ? this.ctl.hide() : this.ctl.show());
    document.addEventListener('visibilitychange', this._onVisibility);
    // Far from the screen (more than a screen's height away), a training element does not draw; it
    // draws in full when it comes back. Its Worker trains on either way.
    if (typeof IntersectionObserver !== 'undefined') {
      this._onScreen ??= new IntersectionObserver((entries) => {
        const away = !entries[entries.length - 1].isIntersecting;
        if (away === Boolean(this._away)) return;
        this._away = away;
        if (!away && this._missed) {
          this._missed = false;
          this.scheduleRender(true);
        }
      }, { rootMargin: '100% 0px' });
      this._onScreen.observe(this);
    }
    clearTimeout(this._disposeTimer);
    if (this.lab && !this.ctl.client) this.requestUpdate();
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    document.removeEventListener('visibilitychange', this._onVisibility);
    this._onScreen?.disconnect();
    this.pause();
    // Removed for good (not just moved, which re-adds it within the same task): free the Worker and the wasm memory.
    this._disposeTimer = setTimeout(() => {
      if (!this.isConnected && this.ctl.client) this.ctl.dispose();
    }, 0);
  }

  get running() { return this.ctl.running; }
  /** Paces the costly part of render() (text, tables, curves) while training: see paced-refresh.js. */
  get _paced() { return (this._pace ??= pageRefresh()); }
  /** Milliseconds between those refreshes while training (every second with reduced motion). */
  get _pacedGap() { return this._reduced?.matches ? 1000 : 250; }
  get snapshot() { return this.ctl.snapshot; }
  get computeMode() { return this.ctl.client?.mode ?? null; }
  /** Where training runs: 'worker' or 'main-thread' (the page's, in short slices), null until known. Read-only. */
  get runsIn() { return this.ctl.client?.runsIn ?? null; }

  start() { this.ctl.start(); }

  pause() { this.ctl.pause(); }

  /** What "Training started" says (the trainer names both runs). */
  startedText() { return this.t('training.started'); }

  /** The Start button's label for the controller's controls() ('Start' | 'Pause' | 'Continue'). */
  startText(c) { return this.t(`training.${c.start.toLowerCase()}`); }

  /** The controller changed state: the running attribute, what is announced, headlab-run, the buttons. */
  onRunState({ from, to, reason }) {
    const ctl = this.ctl;
    this.toggleAttribute('data-running', ctl.running);
    if (to === 'running') {
      this.say(this.startedText());
      this.emit('run', { running: true, reason: 'start' });
    } else if (PAUSE_REASONS.has(reason) && !ctl.running) {
      const { currentStep: step, settings: { maxSteps } } = ctl;
      if (to === 'held') this.say(this.t('training.held', { step }));
      else if (reason === 'limit') this.say(this.t('training.limit', { step, maxSteps }));
      else if ((to === 'paused' || to === 'hidden') && TRAINED.has(from)) this.say(this.t('training.paused', { step }));
      this.emit('run', { running: false, reason });
    }
    this.renderButtons();
  }

  /** A chart with its title, a note (holder.note, which the element may rewrite) and an export menu. */
  chartSection(title, note, name) {
    const holder = { box: el('div'), fig: null, svg: null, note: el('p', { class: 'small muted' }, note) };
    holder.section = el('div', { class: 'chart', part: 'chart', dataset: { testid: `${this.constructor.chartPrefix}-chart-${name}` } },
      el('h3', {}, title), holder.note, holder.box,
      exportMenu({
        t: this.t,
        what: this.t('training.curves', { title: title.toLowerCase() }),
        name: () => this.curvesFileName(name),
        figure: () => holder.fig && forExport(holder.fig),
        csv: () => this.curvesCSV(),
        json: () => this.history.length && { task: this.task, runs: this.history },
        onExport: (format, filename) => this.emit('export', { format, filename }),
      }));
    return holder;
  }

  /**
   * Draws a curves figure into a chart holder; `label` describes it for screen readers. The first
   * figure builds the SVG; every later one changes that SVG's nodes in place (figure.js's updateFigure).
   */
  drawChart(holder, fig, label) {
    holder.fig = fig;
    if (!holder.svg) {
      holder.svg = asImage(curvesToSVG(fig), fig, label);
      holder.box.replaceChildren(holder.svg);
      return;
    }
    holder.last = updateFigure(holder.svg, forPage(fig));
    if (holder.svg.getAttribute('aria-label') !== label) holder.svg.setAttribute('aria-label', label);
    const max = `${fig.width}px`;
    if (holder.svg.style.maxWidth !== max) holder.svg.style.maxWidth = max;
  }

  /**
   * Renders in the next animation frame, at most every 400 ms with reduced motion, and not while the
   * element trains far off screen; `force` also redraws what render() otherwise refreshes less often
   * (text, tables, curves).
   */
  scheduleRender(force = false) {
    if (force) this._paced.force();
    // Off screen while training: drawn when it comes back (a paused element draws, so what it shows is final).
    if (this._away && this.ctl.running) {
      this._missed = true;
      this._paced.force();
      return;
    }
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

  fail(e, title = this.t('training.failed')) {
    const message = String(e?.message ?? e);
    this.errorBox.replaceChildren(el('strong', {}, title), ` ${message}`);
    this.emit('error', { message });
  }
}
