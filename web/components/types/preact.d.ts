// Written by scripts/custom-elements.mjs from custom-elements.json: do not edit by hand.
// Preact 11 JSX: `import 'headlab/components/preact';` types each tag's attributes, ref and on<event> props.
// Importing this module registers every element too (as 'headlab/components' does).
export * from '../headlab-components.js';
import type { HeadlabChoosingH, HeadlabChoosingHAttributes, HeadlabChoosingHEvents, HeadlabHeads, HeadlabHeadsAttributes, HeadlabHeadsEvents, HeadlabLanguageModel, HeadlabLanguageModelAttributes, HeadlabLanguageModelEvents, HeadlabMisconceptions, HeadlabMisconceptionsAttributes, HeadlabMisconceptionsEvents, HeadlabModelExplorer, HeadlabModelExplorerAttributes, HeadlabModelExplorerEvents, HeadlabParams, HeadlabParamsAttributes, HeadlabParamsEvents, HeadlabScaling, HeadlabScalingAttributes, HeadlabScalingEvents, HeadlabThemeToggle, HeadlabThemeToggleAttributes, HeadlabThemeToggleEvents, HeadlabTrainer, HeadlabTrainerAttributes, HeadlabTrainerEvents, HeadlabWorkedExample, HeadlabWorkedExampleAttributes, HeadlabWorkedExampleEvents } from '../headlab-components.js';

import type { HTMLAttributes as PreactHTMLAttributes } from 'preact';

/** Preact listens to `on<event name>` props: onheadlab-step={(e) => e.detail.step}. */
type Listeners<E> = { [K in keyof E as `on${K & string}`]?: (event: E[K]) => void };

declare module 'preact' {
  namespace JSX {
    interface IntrinsicElements {
      'headlab-choosing-h': PreactHTMLAttributes<HeadlabChoosingH> & HeadlabChoosingHAttributes & Listeners<HeadlabChoosingHEvents>;
      'headlab-heads': PreactHTMLAttributes<HeadlabHeads> & HeadlabHeadsAttributes & Listeners<HeadlabHeadsEvents>;
      'headlab-language-model': PreactHTMLAttributes<HeadlabLanguageModel> & HeadlabLanguageModelAttributes & Listeners<HeadlabLanguageModelEvents>;
      'headlab-misconceptions': PreactHTMLAttributes<HeadlabMisconceptions> & HeadlabMisconceptionsAttributes & Listeners<HeadlabMisconceptionsEvents>;
      'headlab-model-explorer': PreactHTMLAttributes<HeadlabModelExplorer> & HeadlabModelExplorerAttributes & Listeners<HeadlabModelExplorerEvents>;
      'headlab-params': PreactHTMLAttributes<HeadlabParams> & HeadlabParamsAttributes & Listeners<HeadlabParamsEvents>;
      'headlab-scaling': PreactHTMLAttributes<HeadlabScaling> & HeadlabScalingAttributes & Listeners<HeadlabScalingEvents>;
      'headlab-theme-toggle': PreactHTMLAttributes<HeadlabThemeToggle> & HeadlabThemeToggleAttributes & Listeners<HeadlabThemeToggleEvents>;
      'headlab-trainer': PreactHTMLAttributes<HeadlabTrainer> & HeadlabTrainerAttributes & Listeners<HeadlabTrainerEvents>;
      'headlab-worked-example': PreactHTMLAttributes<HeadlabWorkedExample> & HeadlabWorkedExampleAttributes & Listeners<HeadlabWorkedExampleEvents>;
    }
  }
}
