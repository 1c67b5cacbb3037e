// Formulas typeset ahead (web/components/shared/render/prerendered.js): KaTeX run in Node over
// every formula an element can show, in every language HeadLab ships, with the options the page
// uses (render/katex-options.js). KaTeX builds its DOM tree as it would in the page (its own
// toNode(), against a recording stand-in for `document`), and the tree is kept as JSON, for the
// page to build with createElement: no HTML is parsed (tests/js/html-sinks.test.mjs). The builds
// (scripts/bundle.mjs, tools/package-components.mjs) serve the result as the virtual module
// `headlab:formulas/<element>`.
import katex from 'katex';
import { LANGUAGES, translator } from '../web/lib/i18n/index.js';
import { KATEX_OPTIONS } from '../web/components/shared/render/katex-options.js';
import { everyTex as workedExampleTex } from '../web/components/worked-example/formulas.js';
import workedExampleMessages from '../web/lib/i18n/catalogues/worked-example.js';
import sharedMessages from '../web/lib/i18n/catalogues/shared.js';

/** element → [every TeX it shows, given a message function; its catalogue]. */
const ELEMENTS = {
  'worked-example': [workedExampleTex, workedExampleMessages],
};

// Namespaces as prerendered.js names them (a tag 'm:mi' is MathML's mi, 's:path' SVG's path).
const PREFIX = { 'http://www.w3.org/1998/Math/MathML': 'm:', 'http://www.w3.org/2000/svg': 's:' };

/** The part of `document` KaTeX's toNode() uses, recording what it builds. */
const recorder = {
  createElement: (tag) => element('', tag),
  createElementNS: (ns, tag) => {
    if (!(ns in PREFIX)) throw new Error(`formulas: KaTeX made an element in an unknown namespace ${ns}`);
    return element(PREFIX[ns], tag);
  },
  createTextNode: (text) => ({ text: String(text) }),
  createDocumentFragment: () => element('', '#fragment'),
};

function element(prefix, tag) {
  return {
    tag: prefix + tag, className: '', style: {}, attributes: {}, children: [],
    setAttribute(name, value) { this.attributes[name] = String(value); },
    appendChild(child) {
      if (child.tag === '#fragment') this.children.push(...child.children);
      else this.children.push(child);
      return child;
    },
  };
}

/**
 * A recorded node as JSON: a text node is its string; an element is [tag, props, ...children], props
 * holding its class, attributes and `style` (an object, set through the CSSOM as KaTeX sets it).
 */
function toJson(node) {
  if (node.text !== undefined) return node.text;
  const props = { ...node.attributes };
  if (node.className) props.class = node.className;
  const style = Object.entries(node.style).filter(([, v]) => v !== undefined && v !== '');
  if (style.length) props.style = Object.fromEntries(style.map(([k, v]) => [k, String(v)]));
  return [node.tag, props, ...node.children.map(toJson)];
}

/** KaTeX's DOM for `src`, as katex.render puts it in the page, as JSON (see toJson). */
export function typesetTree(src, display) {
  const saved = Object.getOwnPropertyDescriptor(globalThis, 'document');
  Object.defineProperty(globalThis, 'document', { value: recorder, configurable: true, writable: true });
  try {
    return toJson(katex.__renderToDomTree(src, { ...KATEX_OPTIONS, displayMode: display }).toNode());
  } finally {
    if (saved) Object.defineProperty(globalThis, 'document', saved);
    else delete globalThis.document;
  }
}

/** { display: { TeX: tree }, inline: { TeX: tree } } for `element`, in every language. */
export function typesetAhead(element) {
  const [everyTex, messages] = ELEMENTS[element];
  const table = { display: {}, inline: {} };
  for (const lang of LANGUAGES) {
    const { display, inline } = everyTex(translator([messages, sharedMessages], lang));
    for (const src of display) table.display[src] ??= typesetTree(src, true);
    for (const src of inline) table.inline[src] ??= typesetTree(src, false);
  }
  return table;
}

/** The virtual modules `headlab:formulas/<element>`: path → JavaScript source. */
export function formulaModules() {
  return Object.fromEntries(Object.keys(ELEMENTS).map((element) =>
    [`headlab:formulas/${element}`, `export default ${JSON.stringify(typesetAhead(element))};`]));
}
