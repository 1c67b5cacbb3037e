// The worked example's formulas as TeX, in one place: <headlab-worked-example> typesets them from
// here, and the builds typeset every one of them ahead with KaTeX in Node (tools/formulas.mjs), in
// each language, so that the element's code carries KaTeX's output instead of KaTeX
// (shared/render/prerendered.js). No DOM: this module runs in Node too.

const LETTERS = ['Q', 'K', 'V'];
const HEADS = [1, 2];

/**
 * Step n's display formulas (1..10): [the formula, its shapes]. `t` is the element's message
 * function (two formulas hold a word).
 */
export function stepTex(n, t) {
  switch (n) {
    case 1: return ['X \\in \\mathbb{R}^{T \\times d_{\\text{model}}}', 'T = 3,\\quad d_{\\text{model}} = 4'];
    case 2: case 3: case 4: {
      const letter = LETTERS[n - 2];
      const d = letter === 'V' ? 'd_v' : 'd_k';
      return [`${letter}_i = X\\,W_i^{${letter}}`,
        `\\underset{3\\times 4}{X}\\;\\underset{4\\times 2}{W_i^{${letter}}} \\;\\to\\; \\underset{3\\times 2}{${letter}_i},\\qquad ${d} = d_{\\text{model}}/h = 2`];
    }
    case 5: return ['S_i = Q_i\\,K_i^{\\top}', '\\underset{3\\times 2}{Q_i}\\;\\underset{2\\times 3}{K_i^{\\top}} \\;\\to\\; \\underset{3\\times 3}{S_i}'];
    case 6: return ['\\frac{S_i}{\\sqrt{d_k}} = \\frac{S_i}{\\sqrt{2}} \\approx \\frac{S_i}{1.4142}', '3\\times 3 \\;\\to\\; 3 \\times 3'];
    case 7: return ['A_i = \\operatorname{softmax}\\!\\left(\\frac{Q_i K_i^{\\top}}{\\sqrt{d_k}}\\right)', `\\textstyle\\sum_{j} (A_i)_{tj} = 1 \\text{ ${t('we.s7.rowSum')} } t`];
    case 8: return ['\\text{head}_i = A_i\\,V_i', '\\underset{3\\times 3}{A_i}\\;\\underset{3\\times 2}{V_i} \\;\\to\\; \\underset{3\\times 2}{\\text{head}_i}'];
    case 9: return ['H = \\operatorname{Concat}(\\text{head}_1, \\text{head}_2)', 'H \\in \\mathbb{R}^{T \\times h d_v} = \\mathbb{R}^{3 \\times 4}'];
    case 10: return ['\\operatorname{MultiHead}(X) = H\\,W^{O}', `\\underset{3\\times 4}{H}\\;\\underset{4\\times 4}{W^{O}} \\;\\to\\; \\underset{3\\times 4}{\\text{${t('we.s10.outputWord')}}}`];
    default: throw new Error(`stepTex: n must be 1..10, got ${n}`);
  }
}

/** The inline formulas of the matrices' captions; `h` numbers a head from 1. */
export const captionTex = {
  /** A head's projection matrix, e.g. W_1^Q. */
  weights: (letter, h) => `W_${h}^{${letter}}`,
  /** What it makes, e.g. Q_1. */
  projected: (letter, h) => `${letter}_${h}`,
  /** A head's scores, scaled or not. */
  scores: (h, scaled) => (scaled ? `S_${h}/\\sqrt{2}` : `S_${h}`),
  head: (h) => `\\text{head}_${h}`,
  wo: 'W^{O}',
};

/** Every formula the element can show in the language of `t`: { display: [TeX…], inline: [TeX…] }. */
export function everyTex(t) {
  const display = Array.from({ length: 10 }, (_, i) => stepTex(i + 1, t)).flat();
  const inline = [captionTex.wo];
  for (const h of HEADS) {
    for (const letter of LETTERS) inline.push(captionTex.weights(letter, h), captionTex.projected(letter, h));
    inline.push(captionTex.scores(h, false), captionTex.scores(h, true), captionTex.head(h));
  }
  return { display, inline };
}
