// Formulas typeset with KaTeX, bundled from npm and rendered in the page: no CDN.
// An element that uses tex() says `static formulas = true` and puts formulaCss (KaTeX's rules)
// in its shadow root's CSS; the base class then installs the fonts (fonts.js) and shows the
// formulas once they have loaded. Elements without formulas load none of this; elements whose
// formulas are fixed have them typeset at build time instead (prerendered.js).

import katex from 'katex';
import { el } from './dom.js';
import { KATEX_OPTIONS } from './katex-options.js';

export { formulaCss } from './formula-css.js';

/** Typesets `src` into `span` (its content replaced). */
export function typesetInto(span, src, display = false) {
  katex.render(src, span, { ...KATEX_OPTIONS, displayMode: display });
}

/**
 * A typeset formula. `src` is trusted TeX written in the components; user text
 * (tokens) never goes into a formula.
 */
export function tex(src, { display = false, className = '' } = {}) {
  const span = el('span', { class: `tex${display ? ' tex--display' : ''}${className ? ` ${className}` : ''}` });
  typesetInto(span, src, display);
  return span;
}
