// Written by scripts/custom-elements.mjs from custom-elements.json: do not edit by hand.
// React 19 JSX: `import 'headlab/components/react';` once in the app (a .tsx or a .d.ts) types each tag's attributes, ref and on<event> props.
// Importing this module registers every element too (as 'headlab/components' does).
export * from '../headlab-components.js';
import type { HeadlabChoosingH, HeadlabChoosingHAttributes, HeadlabChoosingHEvents, HeadlabHeads, HeadlabHeadsAttributes, HeadlabHeadsEvents, HeadlabLanguageModel, HeadlabLanguageModelAttributes, HeadlabLanguageModelEvents, HeadlabMisconceptions, HeadlabMisconceptionsAttributes, HeadlabMisconceptionsEvents, HeadlabModelExplorer, HeadlabModelExplorerAttributes, HeadlabModelExplorerEvents, HeadlabParams, HeadlabParamsAttributes, HeadlabParamsEvents, HeadlabScaling, HeadlabScalingAttributes, HeadlabScalingEvents, HeadlabThemeToggle, HeadlabThemeToggleAttributes, HeadlabThemeToggleEvents, HeadlabTrainer, HeadlabTrainerAttributes, HeadlabTrainerEvents, HeadlabWorkedExample, HeadlabWorkedExampleAttributes, HeadlabWorkedExampleEvents } from '../headlab-components.js';

/** React 19 listens to `on<event name>` props on custom elements: onheadlab-step={(e) => e.detail.step}. */
type Listeners<E> = { [K in keyof E as `on${K & string}`]?: (event: E[K]) => void };

declare module 'react' {
  namespace JSX {
    interface IntrinsicElements {
      'headlab-choosing-h': DetailedHTMLProps<HTMLAttributes<HeadlabChoosingH>, HeadlabChoosingH> & HeadlabChoosingHAttributes & Listeners<HeadlabChoosingHEvents>;
      'headlab-heads': DetailedHTMLProps<HTMLAttributes<HeadlabHeads>, HeadlabHeads> & HeadlabHeadsAttributes & Listeners<HeadlabHeadsEvents>;
      'headlab-language-model': DetailedHTMLProps<HTMLAttributes<HeadlabLanguageModel>, HeadlabLanguageModel> & HeadlabLanguageModelAttributes & Listeners<HeadlabLanguageModelEvents>;
      'headlab-misconceptions': DetailedHTMLProps<HTMLAttributes<HeadlabMisconceptions>, HeadlabMisconceptions> & HeadlabMisconceptionsAttributes & Listeners<HeadlabMisconceptionsEvents>;
      'headlab-model-explorer': DetailedHTMLProps<HTMLAttributes<HeadlabModelExplorer>, HeadlabModelExplorer> & HeadlabModelExplorerAttributes & Listeners<HeadlabModelExplorerEvents>;
      'headlab-params': DetailedHTMLProps<HTMLAttributes<HeadlabParams>, HeadlabParams> & HeadlabParamsAttributes & Listeners<HeadlabParamsEvents>;
      'headlab-scaling': DetailedHTMLProps<HTMLAttributes<HeadlabScaling>, HeadlabScaling> & HeadlabScalingAttributes & Listeners<HeadlabScalingEvents>;
      'headlab-theme-toggle': DetailedHTMLProps<HTMLAttributes<HeadlabThemeToggle>, HeadlabThemeToggle> & HeadlabThemeToggleAttributes & Listeners<HeadlabThemeToggleEvents>;
      'headlab-trainer': DetailedHTMLProps<HTMLAttributes<HeadlabTrainer>, HeadlabTrainer> & HeadlabTrainerAttributes & Listeners<HeadlabTrainerEvents>;
      'headlab-worked-example': DetailedHTMLProps<HTMLAttributes<HeadlabWorkedExample>, HeadlabWorkedExample> & HeadlabWorkedExampleAttributes & Listeners<HeadlabWorkedExampleEvents>;
    }
  }
}
