// Formulas typeset ahead, at build time: tools/formulas.mjs runs KaTeX in Node over the TeX an
// element can show (e.g. worked-example/formulas.js), in every language, and the build hands the
// element the markup (KaTeX's HTML and MathML) as `headlab:formulas/<element>`. The element then
// needs no KaTeX code, only its rules (formula-css.js) and fonts (fonts.js). A formula missing
// from the table is typeset in the page by KaTeX, loaded for it (typeset.js).

import { el } from './dom.js';

/**
 * A tex(src, { display, className }) like typeset.js's, over `table` ({ display, inline }: TeX → markup).
 * `src` is TeX written in the components; the markup is KaTeX's for it, made by the build.
 */
export function typesetFrom(table) {
  return function tex(src, { display = false, className = '' } = {}) {
    const span = el('span', { class: `tex${display ? ' tex--display' : ''}${className ? ` ${className}` : ''}` });
    const markup = (display ? table?.display : table?.inline)?.[src];
    if (typeof markup === 'string') {
      span.innerHTML = markup;
    } else {
      import('./typeset.js').then(({ typesetInto }) => typesetInto(span, src, display),
        (e) => { span.textContent = src; console.error(e); });
    }
    return span;
  };
}
