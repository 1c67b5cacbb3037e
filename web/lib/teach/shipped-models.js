// The models HeadLab ships (web/models/*.hlm, `npm run train:models`): what <headlab-model-explorer>
// lists, with a text each reads. Each loads as a LanguageModel (web/lib/api/language-model.js),
// which the explorer drives as it drives a PretrainedModel.

/** The models HeadLab ships (web/models/, `npm run train:models`), with a text each reads. */
export const SHIPPED_MODELS = [
  { name: 'induction', file: 'induction.hlm', title: 'Induction, 2 layers', bytes: 46299,
    text: 'j 4 e p x 2 m q b k r p x 2 m q', about: 'copies a repeated stretch of letters and digits' },
  { name: 'induction-1-layer', file: 'induction-1-layer.hlm', title: 'Induction, 1 layer', bytes: 29143,
    text: 'j 4 e p x 2 m q b k r p x 2 m q', about: 'the same task with one layer: it cannot copy' },
  { name: 'cricket', file: 'cricket.hlm', title: 'Cricket commentary', bytes: 47869,
    text: 'virat hit the ball because it was', about: 'toy commentary: what “it” refers to' },
];
