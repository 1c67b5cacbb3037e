// Written by scripts/custom-elements.mjs from custom-elements.json: do not edit by hand.
// Svelte: `import 'headlab/components/svelte';` types each tag's attributes and events (svelte-check).
// Importing this module registers every element too (as 'headlab/components' does).
export * from '../headlab-components.js';
import type { HeadlabChoosingH, HeadlabChoosingHAttributes, HeadlabChoosingHEvents, HeadlabHeads, HeadlabHeadsAttributes, HeadlabHeadsEvents, HeadlabLanguageModel, HeadlabLanguageModelAttributes, HeadlabLanguageModelEvents, HeadlabMisconceptions, HeadlabMisconceptionsAttributes, HeadlabMisconceptionsEvents, HeadlabModelExplorer, HeadlabModelExplorerAttributes, HeadlabModelExplorerEvents, HeadlabParams, HeadlabParamsAttributes, HeadlabParamsEvents, HeadlabScaling, HeadlabScalingAttributes, HeadlabScalingEvents, HeadlabThemeToggle, HeadlabThemeToggleAttributes, HeadlabThemeToggleEvents, HeadlabTrainer, HeadlabTrainerAttributes, HeadlabTrainerEvents, HeadlabWorkedExample, HeadlabWorkedExampleAttributes, HeadlabWorkedExampleEvents } from '../headlab-components.js';

import type { HTMLAttributes as SvelteHTMLAttributes } from 'svelte/elements';

/** Svelte 5 listens to on<event name> attributes, Svelte 4 to on:<event name>. */
type Listeners<E> = { [K in keyof E as `on${K & string}` | `on:${K & string}`]?: (event: E[K]) => void };

declare global {
  namespace svelteHTML {
    interface IntrinsicElements {
      'headlab-choosing-h': SvelteHTMLAttributes<HeadlabChoosingH> & HeadlabChoosingHAttributes & Listeners<HeadlabChoosingHEvents>;
      'headlab-heads': SvelteHTMLAttributes<HeadlabHeads> & HeadlabHeadsAttributes & Listeners<HeadlabHeadsEvents>;
      'headlab-language-model': SvelteHTMLAttributes<HeadlabLanguageModel> & HeadlabLanguageModelAttributes & Listeners<HeadlabLanguageModelEvents>;
      'headlab-misconceptions': SvelteHTMLAttributes<HeadlabMisconceptions> & HeadlabMisconceptionsAttributes & Listeners<HeadlabMisconceptionsEvents>;
      'headlab-model-explorer': SvelteHTMLAttributes<HeadlabModelExplorer> & HeadlabModelExplorerAttributes & Listeners<HeadlabModelExplorerEvents>;
      'headlab-params': SvelteHTMLAttributes<HeadlabParams> & HeadlabParamsAttributes & Listeners<HeadlabParamsEvents>;
      'headlab-scaling': SvelteHTMLAttributes<HeadlabScaling> & HeadlabScalingAttributes & Listeners<HeadlabScalingEvents>;
      'headlab-theme-toggle': SvelteHTMLAttributes<HeadlabThemeToggle> & HeadlabThemeToggleAttributes & Listeners<HeadlabThemeToggleEvents>;
      'headlab-trainer': SvelteHTMLAttributes<HeadlabTrainer> & HeadlabTrainerAttributes & Listeners<HeadlabTrainerEvents>;
      'headlab-worked-example': SvelteHTMLAttributes<HeadlabWorkedExample> & HeadlabWorkedExampleAttributes & Listeners<HeadlabWorkedExampleEvents>;
    }
  }
}
