// Formulas typeset ahead (web/components/shared/render/prerendered.js): KaTeX run in Node over
// every formula an element can show, in every language HeadLab ships, with the options the page
// uses (render/katex-options.js). The builds (scripts/bundle.mjs, tools/package-components.mjs)
// serve the result as the virtual module `headlab:formulas/<element>`.
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

/** { display: { TeX: markup }, inline: { TeX: markup } } for `element`, in every language. */
export function typesetAhead(element) {
  const [everyTex, messages] = ELEMENTS[element];
  const table = { display: {}, inline: {} };
  for (const lang of LANGUAGES) {
    const { display, inline } = everyTex(translator([messages, sharedMessages], lang));
    for (const src of display) table.display[src] ??= katex.renderToString(src, { ...KATEX_OPTIONS, displayMode: true });
    for (const src of inline) table.inline[src] ??= katex.renderToString(src, { ...KATEX_OPTIONS, displayMode: false });
  }
  return table;
}

/** The virtual modules `headlab:formulas/<element>`: path → JavaScript source. */
export function formulaModules() {
  return Object.fromEntries(Object.keys(ELEMENTS).map((element) =>
    [`headlab:formulas/${element}`, `export default ${JSON.stringify(typesetAhead(element))};`]));
}
