// KaTeX's rules (without its @font-face rules, which fonts.js puts in the document), for the
// shadow roots of the elements with formulas; apart from KaTeX's code (typeset.js), which elements
// whose formulas are typeset ahead (prerendered.js) do not load.

import { css } from 'headlab:katex-css';

export const formulaCss = css;
