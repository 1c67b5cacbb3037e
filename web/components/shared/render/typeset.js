// Formulas typeset with KaTeX, bundled from npm and rendered in the page: no CDN.
// An element that uses tex() says `static formulas = true` and puts formulaCss (KaTeX's rules)
// in its shadow root's CSS; the base class then installs the fonts (fonts.js) and waits for them.
// Elements without formulas load none of this.

import katex from 'katex';
import { css } from 'headlab:katex-css';
import { el } from './dom.js';

/** KaTeX's rules (without its @font-face rules, which fonts.js puts in the document). */
export const formulaCss = css;

/**
 * A typeset formula. `src` is trusted TeX written in the components; user text
 * (tokens) never goes into a formula.
 */
export function tex(src, { display = false, className = '' } = {}) {
  const span = el('span', { class: `tex${display ? ' tex--display' : ''}${className ? ` ${className}` : ''}` });
  katex.render(src, span, { displayMode: display, throwOnError: false, output: 'htmlAndMathml', strict: 'ignore', trust: false });
  return span;
}
