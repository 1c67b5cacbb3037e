// HeadLab components, every element at once: the classic-script build's entry
// (dist/headlab-components.classic.js), which cannot load code later. Module pages use
// headlab-components.js, which loads each element's code on first use.
// The module also exports the JavaScript API (createHeadlab) and the element classes.
//
// Beside the elements (one file each): language-model/ holds the parts of
// <headlab-language-model> (head grid, generation panel, task texts), worked-example/ the worked
// example's formulas (as TeX, typeset at build time), entries/ one module per
// element that registers it, and shared/ what several elements use, by job (each folder imports
// only the ones after it):
//   shared/elements/  base classes (HeadlabElement, TrainingElement), shared styles, copy link
//   shared/worker/    Workers and their clients: message layer, compute, trainer and LM sessions
//   shared/render/    DOM helpers, figures, charts, heatmaps, lines, matrices, KaTeX, exports
//   shared/lab/       the page's one HeadLab instance and where the bundle's files are

import { HeadlabWorkedExample } from './entries/worked-example.js';
import { HeadlabHeads } from './entries/heads.js';
import { HeadlabParams } from './entries/params.js';
import { HeadlabScaling } from './entries/scaling.js';
import { HeadlabMisconceptions } from './entries/misconceptions.js';
import { HeadlabChoosingH } from './entries/choosing-h.js';
import { HeadlabTrainer } from './entries/trainer.js';
import { HeadlabLanguageModel } from './entries/language-model.js';
import { HeadlabModelExplorer } from './entries/model-explorer.js';
import { HeadlabThemeToggle } from './entries/theme-toggle.js';

import { createHeadlab as createHeadlabWith } from '../lib/headlab.js';
import { getLab } from './shared/lab/lab.js';

/**
 * createHeadlab() of web/lib/headlab.js, except that without options it resolves
 * to the instance the elements use: in the classic build, the one made from the
 * wasm the bundle carries (so it works from file:// too). Either way one page has
 * one instance.
 * @param {Parameters<typeof createHeadlabWith>[0]} [options]
 */
export function createHeadlab(options) {
  return options === undefined ? getLab() : createHeadlabWith(options);
}
export {
  HeadlabWorkedExample, HeadlabHeads, HeadlabParams, HeadlabScaling, HeadlabMisconceptions, HeadlabChoosingH, HeadlabTrainer,
  HeadlabLanguageModel, HeadlabModelExplorer, HeadlabThemeToggle,
};

/** Every element class, in the order of the site. */
export const elements = [
  HeadlabWorkedExample, HeadlabHeads, HeadlabParams, HeadlabScaling, HeadlabMisconceptions, HeadlabChoosingH, HeadlabTrainer,
  HeadlabLanguageModel, HeadlabModelExplorer, HeadlabThemeToggle,
];
