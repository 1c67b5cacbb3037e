// KaTeX's options for every formula HeadLab typesets, in the page (typeset.js) and ahead, at
// build time (tools/formulas.mjs): the same options give the same markup. htmlAndMathml: the HTML
// is what is seen, the MathML what screen readers read.

export const KATEX_OPTIONS = Object.freeze({ throwOnError: false, output: 'htmlAndMathml', strict: 'ignore', trust: false });
