// The base class of every HeadLab element: attributes mirrored to properties
// from one static table, a shadow root with the shared styles, state in the
// URL (copy link), the shared wasm instance, and prefixed events.

import { el, onWidthChange, hintScroll, setText } from '../render/dom.js';
import { sharedCss } from './styles.js';
import { installFonts, formulaFontsReady } from '../render/fonts.js';
import { getLab } from '../lab/lab.js';
import { BASE_URL } from '../lab/assets.js';
import { cspCause, refusals, watchRefusals } from '../lab/refusals.js';
import { readState, urlWithState } from '../../../lib/teach/url-state.js';
import { copyLinkControl } from './copy-link.js';
import { reserveRoom, releaseRoom } from './reserve.js';
import { ElementBase, canDefineElements } from './platform.js';
import { languageOf, translator, fixed, integer, formatNumber } from '../../../lib/i18n/index.js';
import shared from '../../../lib/i18n/catalogues/shared.js';

function camelToKebab(name) {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** Shortens an attribute value for a message (values can be anything a page sets). */
function quote(raw) {
  const chars = Array.from(raw);
  return JSON.stringify(chars.length > 40 ? `${chars.slice(0, 39).join('')}…` : raw);
}

/**
 * Parses an attribute value according to its prop spec:
 * { value, problem } where problem (a sentence, or null) says why the value
 * was not used as given. Numbers that are not numbers (or not whole, for 'int')
 * fall back to the default; numbers out of range are clamped to it; enum values
 * not in the list fall back to the default.
 */
function parse(spec, raw, t = null) {
  if (spec.type === 'bool') return { value: raw !== null && raw !== 'false', problem: null };
  if (raw === null || raw === undefined) return { value: spec.default, problem: null };
  if (!t) return parse(spec, raw, translator(shared, 'en'));
  const attr = `${spec.attr}=${quote(raw)}`;
  if (spec.type === 'int' || spec.type === 'number') {
    const text = raw.trim();
    const n = text === '' ? NaN : Number(text);
    const range = t('attr.range', { min: spec.min ?? '−∞', max: spec.max ?? '∞' });
    if (!Number.isFinite(n) || (spec.type === 'int' && !Number.isInteger(n))) {
      const key = `attr.${spec.type === 'int' ? 'notWhole' : 'notNumber'}${spec.default === null ? '' : 'Default'}`;
      return { value: spec.default, problem: t(key, { attr, range, default: spec.default }) };
    }
    if (n < (spec.min ?? -Infinity)) return { value: spec.min, problem: t('attr.below', { attr, limit: spec.min }) };
    if (n > (spec.max ?? Infinity)) return { value: spec.max, problem: t('attr.above', { attr, limit: spec.max }) };
    return { value: n, problem: null };
  }
  if (spec.type === 'enum') {
    if (spec.values.includes(raw)) return { value: raw, problem: null };
    return { value: spec.default, problem: t('attr.notOneOf', { attr, values: spec.values.join(', '), default: spec.default }) };
  }
  return { value: raw, problem: null };
}

watchRefusals();

/**
 * Why HeadLab's WebAssembly module did not load, beyond what its error says: { kind: 'csp',
 * directive, source } when the page's Content-Security-Policy refused it (a CompileError naming
 * 'unsafe-eval', or a recorded refusal of its URL), { kind: 'network' } when a request got no
 * answer at all (offline, a dropped connection), else null. Never rejects.
 */
async function diagnose(e) {
  try {
    const message = String(e?.message ?? e);
    const url = /could not load its WebAssembly module headlab_\w+\.wasm from (\S+?): /.exec(message)?.[1] ?? null;
    const pageOrigin = typeof location !== 'undefined' ? location.origin : null;
    const settle = () => new Promise((resolve) => setTimeout(resolve, 50));
    // The refusal's event is queued after the refused request has failed: let it arrive.
    await settle();
    let csp = cspCause(message, url, refusals(), pageOrigin);
    if (csp) return { kind: 'csp', ...csp };
    if (url && /: the request failed \(/.test(message)) {
      // A server that does not send CORS headers still answers a no-cors request; no connection does not.
      const answered = await fetch(url, { mode: 'no-cors', cache: 'no-store' }).then(() => true, () => false);
      if (!answered) await settle();
      csp = cspCause(message, url, refusals(), pageOrigin);
      if (csp) return { kind: 'csp', ...csp };
      if (!answered) return { kind: 'network' };
    }
  } catch {
    // No more than the error itself says.
  }
  return null;
}

/**
 * What a reader is told when HeadLab's code or WebAssembly module does not load:
 * lines of plain text. `cause` is diagnose()'s: a Content-Security-Policy refusal names the
 * directive to change, no answer at all says so; otherwise, when the bundle comes from another
 * origin than the page, the likely cause is a server without CORS headers, and the author is
 * told how to fix it.
 */
function loadFailure(e, t, cause = null) {
  // headlab.js names the module that failed (headlab_core, headlab_train or their _scalar builds),
  // where it looked, and the cause with Emscripten's "Aborted(…)" wrapping already removed.
  const message = String(e?.message ?? e);
  const named = /could not load its WebAssembly module (headlab_\w+\.wasm)(?: from \S+)?: (.*?)(?:\. Serve headlab_\w+\.wasm next to .*)?$/s.exec(message);
  // A code-split part of the bundle that the browser would not fetch (the wording differs per engine).
  const chunk = !named && /dynamically imported module|Importing a module script failed|module script/i.test(message);
  const chunkName = /headlab-chunk-\w+\.js/.exec(message)?.[0];
  const file = named?.[1] ?? 'headlab_core.wasm';
  const detail = (named?.[2] ?? message).trim();
  const what = chunk ? (chunkName ? t('load.whatChunkNamed', { chunk: chunkName }) : t('load.whatChunk')) : t('load.whatModule', { file });
  const from = new URL(BASE_URL);
  const crossOrigin = typeof location !== 'undefined' && location.protocol !== 'file:' && from.origin !== location.origin;
  const advice = cause?.kind === 'csp' ? t('load.adviceCsp', { directive: cause.directive, source: cause.source })
    : cause?.kind === 'network' ? t('load.adviceNetwork', { file })
      : crossOrigin
        ? t('load.adviceCrossOrigin', { origin: from.origin })
        : t('load.adviceSameOrigin', { file: chunk ? chunkName ?? t('load.everyChunk') : file });
  return [t('load.failed', { what }), advice, t('load.details', { detail: detail || t('load.noReason') })];
}

/**
 * The colour scheme the host page declares (its root's `color-scheme`, or a
 * `<meta name="color-scheme">`): 'dark' when it declares dark only, 'auto' when
 * it declares light and dark (it follows the reader's system), else 'light'.
 */
function hostColorScheme() {
  const declared = `${getComputedStyle(document.documentElement).colorScheme ?? ''} ${document.querySelector('meta[name="color-scheme"]')?.content ?? ''}`;
  const dark = /\bdark\b/.test(declared), light = /\blight\b/.test(declared);
  return dark && !light ? 'dark' : dark ? 'auto' : 'light';
}

const systemDark = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;

export class HeadlabElement extends ElementBase {
  /** @type {string} */ static tag = '';
  /** Default prefix of this element's keys in the URL. */ static stateKey = '';
  /** name → { attr?, type: 'int'|'number'|'bool'|'enum'|'string', default, min?, max?, values?, state? } */
  static props = {};
  /** Extra CSS for this element's shadow root. */ static css = '';
  /**
   * Whether it typesets formulas (render/typeset.js, prerendered.js): its first draw does not wait
   * for KaTeX's fonts; its formulas keep their room unseen (data-formulas="loading") until the
   * fonts have loaded (data-formulas="ready").
   */
  static formulas = false;

  /** This element's message catalogue (web/lib/i18n/catalogues/); the shared one is looked up after it. */
  static messages = null;

  static get observedAttributes() {
    return [...Object.entries(this.props).map(([name, spec]) => spec.attr ?? camelToKebab(name)), 'lang'];
  }

  /** Defines property accessors from the props table and registers the tag once (nothing without customElements: a server). */
  static define() {
    if (!canDefineElements() || customElements.get(this.tag)) return;
    // Every element takes `compact`: its explanatory paragraphs are hidden (for narrow course columns).
    if (!this.props.compact) this.props = { ...this.props, compact: { type: 'bool', default: false } };
    for (const [name, spec] of Object.entries(this.props)) {
      const attr = spec.attr ?? camelToKebab(name);
      spec.attr = attr;
      Object.defineProperty(this.prototype, name, {
        configurable: true,
        get() { return parse(spec, this.getAttribute(attr)).value; },
        set(value) {
          if (spec.type === 'bool') this.toggleAttribute(attr, Boolean(value));
          else if (value === null || value === undefined) this.removeAttribute(attr);
          else this.setAttribute(attr, String(value));
        },
      });
    }
    customElements.define(this.tag, this);
  }

  constructor() {
    super();
    this.root = this.attachShadow({ mode: 'open' });
    this.lab = null;
    this._built = false;
    this._queued = false;
    this._onHash = () => this._applyUrlState(true);
  }

  connectedCallback() {
    window.addEventListener('hashchange', this._onHash);
    // A host page whose own colours follow the reader's system changes its declared scheme with it.
    this._onScheme = () => { this.dataset.hostScheme = hostColorScheme(); };
    this._onScheme();
    systemDark?.addEventListener?.('change', this._onScheme);
    if (this._built) return;
    this._built = true;
    if (this.constructor.formulas) {
      installFonts();
      this.dataset.formulas = 'loading';
    }
    const style = document.createElement('style');
    style.textContent = sharedCss + this.constructor.css;
    this.root.append(style);
    this.dataset.state = 'loading';
    reserveRoom(this);
    this.build();
    this._placeNotes();
    this._applyUrlState(false);
    getLab().then(async (lab) => {
      await this.prepare(lab);
      this.lab = lab;
      this.dataset.state = 'ready';
      this._render();
      this.emit('ready', { element: this.localName });
      if (this.constructor.formulas) formulaFontsReady(this).then(() => { this.dataset.formulas = 'ready'; });
    }, async (e) => {
      this._loadError = e;
      this._loadCause = await diagnose(e);
      // The state changes with what the element shows.
      this.dataset.state = 'failed';
      this.showFatal(loadFailure(e, this.t, this._loadCause));
      this.emit('error', { message: String(e?.message ?? e) });
    });
  }

  /** Loads what the element needs besides the module before its first update(); override when needed. */
  async prepare(_lab) {}

  disconnectedCallback() {
    window.removeEventListener('hashchange', this._onHash);
    systemDark?.removeEventListener?.('change', this._onScheme);
  }

  attributeChangedCallback(name, oldValue, newValue) {
    if (oldValue === newValue || !this._built) return;
    if (name === 'lang') this.relocalise();
    else this.requestUpdate();
  }

  /** The language this element speaks: its `lang`, else the nearest ancestor's, else the page's ('en' | 'es'). */
  get language() {
    return languageOf(this);
  }

  /**
   * The message function for this element's language (web/lib/i18n/index.js translator):
   * `this.t('key', { name })`, `this.t.plural('key', n)`.
   */
  get t() {
    const lang = this.language;
    if (this._t?.lang !== lang) this._t = translator([this.constructor.messages, shared], lang);
    return this._t;
  }

  /** `value` with `digits` decimals in this element's language (0.25 → "0,25" in Spanish). */
  fmt(value, digits = 4) { return fixed(this.language, value, digits); }
  /** A whole number grouped the way this element's language groups it. */
  fmtInt(n) { return integer(this.language, n); }
  /** Any number through Intl.NumberFormat in this element's language. */
  formatNumber(x, options) { return formatNumber(this.language, x, options); }

  /**
   * Redraws the element in its (new) language: the shadow DOM is built again
   * and updated, keeping the state a copied link would keep. Elements that
   * hold more (a running session) override this.
   */
  relocalise() {
    const extra = this.getExtraState();
    this._widthObserver?.disconnect?.();
    const style = this.root.querySelector('style');
    this.root.replaceChildren(style);
    if (this.dataset.state === 'failed') { this.showFatal(loadFailure(this._loadError, this.t, this._loadCause)); return; }
    this.build();
    this._placeNotes();
    this.setExtraState(new Map(Object.entries(extra)));
    if (this.dataset.state === 'ready') this._render();
    this.emit('relocalised', { lang: this.language });
  }

  /**
   * Sets data-drawn once the element is ready and no first computation is pending (data-busy):
   * pages reserve room until then (see the site's CSS), so nothing below jumps while it loads.
   */
  _noteDrawn() {
    if (this.hasAttribute('data-drawn') || this.dataset.state !== 'ready') return;
    if (!this.hasAttribute('data-busy')) { this._drawn(); return; }
    if (this._drawnWatch) return;
    this._drawnWatch = new MutationObserver(() => {
      if (this.hasAttribute('data-busy')) return;
      this._drawnWatch.disconnect();
      this._drawnWatch = null;
      this._drawn();
    });
    this._drawnWatch.observe(this, { attributes: true, attributeFilter: ['data-busy'] });
  }

  /** Marks the first draw done and gives back the room reserved until then (reserve.js). */
  _drawn() {
    this.setAttribute('data-drawn', '');
    releaseRoom(this);
  }

  /** Batches attribute/property changes into one update() per microtask. */
  requestUpdate() {
    if (this._queued) return;
    this._queued = true;
    queueMicrotask(() => {
      this._queued = false;
      this._render();
    });
  }

  /**
   * Runs update() and refreshes the notes: attribute values that could not be
   * used as given, and any error update() threw (shown as text, never thrown
   * at the page).
   */
  _render() {
    this._onScheme?.();
    if (this.dataset.state === 'failed') return;
    let failure = null;
    try {
      this.update();
    } catch (e) {
      failure = e;
      console.error(e);  // a bug: shown to the reader as text below, and to developers here
    }
    this._noteDrawn();
    for (const box of this.root.querySelectorAll('.table-scroll')) hintScroll(box, this.t);
    if (!this._notes) return;
    const problems = this.attributeProblems();
    setText(this._notes.attributes, problems.join('\n'));
    this._notes.attributes.hidden = problems.length === 0;
    const message = failure ? this.t('element.drawFailed', { message: failure?.message ?? failure }) : '';
    if (message !== this._notes.error.textContent) {
      setText(this._notes.error, message);
      this._notes.error.hidden = !message;
      if (failure) this.emit('error', { message: String(failure?.message ?? failure) });
    }
  }

  /**
   * Why attribute values were not used as given, one sentence each. Components
   * add their own (e.g. a token list of the wrong length) after these.
   */
  attributeProblems() {
    const out = [];
    for (const spec of Object.values(this.constructor.props)) {
      const { problem } = parse(spec, this.getAttribute(spec.attr), this.t);
      if (problem) out.push(problem);
    }
    return out;
  }

  /** Puts the notes under the element's title (after the block holding the first h2). */
  _placeNotes() {
    const attributes = el('p', { class: 'note note--warn attr-note', role: 'status', hidden: true, dataset: { testid: 'attribute-problems' } });
    const error = el('div', { class: 'alert', role: 'alert', hidden: true, dataset: { testid: 'element-error' } });
    this._notes = { attributes, error };
    let anchor = this.root.querySelector('h2');
    while (anchor && anchor.parentNode !== this.root) anchor = anchor.parentNode;
    if (anchor) anchor.after(attributes, error);
    else this.root.querySelector('style').after(attributes, error);
  }

  /** Dispatches `headlab-<type>` (bubbles, crosses the shadow boundary). */
  emit(type, detail = {}) {
    this.dispatchEvent(new CustomEvent(`headlab-${type}`, { detail, bubbles: true, composed: true }));
  }

  /** The URL prefix of this element's state. */
  get stateKey() {
    return this.id || this.constructor.stateKey;
  }

  /** Every state entry as name → string (props with state: true, then extras). */
  getState() {
    const out = {};
    for (const [name, spec] of Object.entries(this.constructor.props)) {
      if (!spec.state) continue;
      const value = this[name];
      if (spec.type === 'bool') { if (value) out[spec.attr] = '1'; } else if (value !== spec.default) out[spec.attr] = String(value);
    }
    return { ...out, ...this.getExtraState() };
  }

  /** Overridden by components with state beyond attributes (edited matrices…). */
  getExtraState() { return {}; }
  setExtraState(_map) {}

  _applyUrlState(fromHashChange) {
    const map = readState(this.stateKey);
    if (map.size === 0) return;
    for (const [name, spec] of Object.entries(this.constructor.props)) {
      if (!spec.state) continue;
      if (map.has(spec.attr)) {
        if (spec.type === 'bool') this[name] = map.get(spec.attr) === '1';
        else this.setAttribute(spec.attr, map.get(spec.attr));
      } else if (fromHashChange) {
        this.removeAttribute(spec.attr);
      }
    }
    this.setExtraState(map);
    if (fromHashChange) this.requestUpdate();
  }

  /** A link to this page that restores this element's current state. */
  shareUrl() {
    return urlWithState(this.stateKey, this.getState());
  }

  /** The "Copy link" control. */
  copyLink() {
    return copyLinkControl(() => this.shareUrl(), (url) => this.emit('link', { url }), this.t);
  }

  /** Replaces the element's content with a failure message (plain text). */
  showFatal(message) {
    const lines = Array.isArray(message) ? message : [message];
    const box = el('div', { class: 'alert', role: 'alert', dataset: { testid: 'fatal' } },
      el('strong', {}, lines[0]), ...lines.slice(1).map((line) => el('p', {}, line)));
    const style = this.root.querySelector('style');
    this.root.replaceChildren(style, box);
    releaseRoom(this);
  }

  /** Records the width that figures were just drawn for (see onResize). */
  noteWidth() {
    this._drawnWidth = this.getBoundingClientRect().width;
  }

  /**
   * Calls `fn()` when the element's width differs by more than `step` px from
   * the width its figures were drawn for (noteWidth), so charts are redrawn at
   * their new size and their text stays readable.
   */
  onResize(fn, step = 40) {
    this._widthObserver = onWidthChange(this, () => this._drawnWidth, fn, step);
  }

  /** Implemented by components: create the shadow DOM once. */
  build() {}
  /** Implemented by components: read props, recompute, redraw. Called after lab is ready and on changes. */
  update() {}
}
