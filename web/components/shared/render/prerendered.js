// Formulas typeset ahead, at build time: tools/formulas.mjs runs KaTeX in Node over the TeX an
// element can show (e.g. worked-example/formulas.js), in every language, and keeps the DOM tree
// KaTeX builds (its HTML and MathML) as JSON, which the build hands the element as
// `headlab:formulas/<element>`. Built here with createElement, as katex.render builds it: no HTML
// is parsed. The element then needs no KaTeX code, only its rules (formula-css.js) and fonts
// (fonts.js). A formula missing from the table is typeset in the page by KaTeX, loaded for it (typeset.js).

import { el } from './dom.js';

const NAMESPACES = { m: 'http://www.w3.org/1998/Math/MathML', s: 'http://www.w3.org/2000/svg' };

/** A DOM node from a tree of tools/formulas.mjs: a string is text, else [tag, props, ...children]. */
function build(tree) {
  if (typeof tree === 'string') return document.createTextNode(tree);
  const [tag, props, ...children] = tree;
  const colon = tag.indexOf(':');
  const node = colon < 0 ? document.createElement(tag) : document.createElementNS(NAMESPACES[tag.slice(0, colon)], tag.slice(colon + 1));
  for (const [name, value] of Object.entries(props)) {
    if (name === 'style') Object.assign(node.style, value);
    else node.setAttribute(name, value);
  }
  for (const child of children) node.append(build(child));
  return node;
}

/**
 * A tex(src, { display, className }) like typeset.js's, over `table` ({ display, inline }: TeX → tree).
 * `src` is TeX written in the components; the tree is KaTeX's for it, made by the build.
 */
export function typesetFrom(table) {
  return function tex(src, { display = false, className = '' } = {}) {
    const span = el('span', { class: `tex${display ? ' tex--display' : ''}${className ? ` ${className}` : ''}` });
    const tree = (display ? table?.display : table?.inline)?.[src];
    if (tree) {
      span.append(build(tree));
    } else {
      import('./typeset.js').then(({ typesetInto }) => typesetInto(span, src, display),
        (e) => { span.textContent = src; console.error(e); });
    }
    return span;
  };
}
