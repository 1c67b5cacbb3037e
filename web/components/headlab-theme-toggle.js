/**
 * <headlab-theme-toggle>: a light/dark switch for pages that host HeadLab
 * elements. It sets `data-theme` on <html> and the `theme` attribute of every
 * headlab-* element on the page, and remembers the choice (localStorage) when allowed.
 *
 * @attr {'light' | 'dark' | 'auto'} theme  light | dark | auto; default: the remembered choice, else auto
 * @attr {string} lang   the language of its label (else the page's); en | es
 * @prop {'light' | 'dark' | 'auto'} theme the reader's choice (the `theme` attribute; auto when it is neither light nor dark)
 * @fires {{ theme: 'light' | 'dark' | 'auto' }} headlab-theme  the reader chose a theme
 * @csspart button
 */

import { languageOf, translator } from '../lib/i18n/index.js';
import messages from '../lib/i18n/catalogues/theme-toggle.js';
import { ElementBase, canDefineElements } from './shared/elements/platform.js';

const KEY = 'headlab-theme';
const NEXT = { auto: 'light', light: 'dark', dark: 'auto' };

function remembered() {
  try { return localStorage.getItem(KEY); } catch { return null; }
}

export class HeadlabThemeToggle extends ElementBase {
  static tag = 'headlab-theme-toggle';

  static get observedAttributes() { return ['theme', 'lang']; }

  static define() {
    if (canDefineElements() && !customElements.get(this.tag)) customElements.define(this.tag, this);
  }

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    const style = document.createElement('style');
    style.textContent = `
      :host { display: inline-block; }
      button { font: inherit; font-size: 0.9rem; padding: 0.35rem 0.7rem; min-height: 2.2rem; border-radius: 6px;
        border: 1px solid currentColor; background: transparent; color: inherit; cursor: pointer; }
      button:focus-visible { outline: 3px solid #c25e00; outline-offset: 2px; }`;
    this.button = document.createElement('button');
    this.button.type = 'button';
    this.button.setAttribute('part', 'button');
    this.button.addEventListener('click', () => {
      this.setAttribute('theme', NEXT[this.theme] ?? 'auto');
      try { localStorage.setItem(KEY, this.theme); } catch { /* storage blocked: the choice lasts this page */ }
    });
    root.append(style, this.button);
  }

  get theme() {
    const t = this.getAttribute('theme');
    return t === 'light' || t === 'dark' ? t : 'auto';
  }

  set theme(value) { this.setAttribute('theme', value); }

  connectedCallback() {
    if (!this.hasAttribute('theme')) {
      // An embedded demo page (site/page.js) takes the theme its link names, not the site's remembered one.
      const saved = document.documentElement.dataset.embedTheme ?? remembered();
      if (saved === 'light' || saved === 'dark') this.setAttribute('theme', saved);
    }
    this.apply();
  }

  attributeChangedCallback(name) {
    if (name === 'lang') this.label();
    else this.apply();
  }

  /** Words the button in the element's language. */
  label() {
    const t = translator(messages, languageOf(this));
    const label = t(`theme.${this.theme}`);
    this.button.textContent = label;
    this.button.setAttribute('aria-label', t('theme.action', { label }));
  }

  apply() {
    const theme = this.theme;
    this.label();
    document.documentElement.dataset.theme = theme;
    for (const node of document.querySelectorAll('*')) {
      if (node.localName.startsWith('headlab-') && node !== this) {
        node.setAttribute('theme', theme);
      }
    }
    this.dispatchEvent(new CustomEvent('headlab-theme', { detail: { theme }, bubbles: true, composed: true }));
  }
}
