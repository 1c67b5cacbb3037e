// HeadLab components: the one entry that registers every element.
//   <script type="module" src=".../headlab-components.js"></script>
//   <headlab-worked-example></headlab-worked-example>
// The module also exports the JavaScript API (createHeadlab) and the element classes.

import { HeadlabWorkedExample } from './headlab-worked-example.js';
import { HeadlabHeads } from './headlab-heads.js';
import { HeadlabParams } from './headlab-params.js';
import { HeadlabScaling } from './headlab-scaling.js';
import { HeadlabMisconceptions } from './headlab-misconceptions.js';
import { HeadlabChoosingH } from './headlab-choosing-h.js';
import { HeadlabTrainer } from './headlab-trainer.js';
import { HeadlabLanguageModel } from './headlab-language-model.js';
import { HeadlabModelExplorer } from './headlab-model-explorer.js';
import { HeadlabThemeToggle } from './headlab-theme-toggle.js';

import { createHeadlab as createHeadlabWith } from '../lib/headlab.js';
import { getLab } from './shared/lab.js';

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
  HeadlabWorkedExample, HeadlabHeads, HeadlabParams, HeadlabScaling, HeadlabMisconceptions, HeadlabChoosingH, HeadlabTrainer, HeadlabLanguageModel, HeadlabModelExplorer, HeadlabThemeToggle,
};

/** Every element class, in the order of the site. */
export const elements = [
  HeadlabWorkedExample, HeadlabHeads, HeadlabParams, HeadlabScaling, HeadlabMisconceptions, HeadlabChoosingH, HeadlabTrainer, HeadlabLanguageModel, HeadlabModelExplorer, HeadlabThemeToggle,
];

for (const element of elements) element.define();
