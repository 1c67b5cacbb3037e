// Written by scripts/custom-elements.mjs from custom-elements.json: do not edit by hand.
// Vue 3: `import 'headlab/components/vue';` types each tag's attributes in templates (GlobalComponents; Volar / vue-tsc).
// Importing this module registers every element too (as 'headlab/components' does).
export * from '../headlab-components.js';
import type { HeadlabChoosingH, HeadlabChoosingHAttributes, HeadlabChoosingHEvents, HeadlabHeads, HeadlabHeadsAttributes, HeadlabHeadsEvents, HeadlabLanguageModel, HeadlabLanguageModelAttributes, HeadlabLanguageModelEvents, HeadlabMisconceptions, HeadlabMisconceptionsAttributes, HeadlabMisconceptionsEvents, HeadlabModelExplorer, HeadlabModelExplorerAttributes, HeadlabModelExplorerEvents, HeadlabParams, HeadlabParamsAttributes, HeadlabParamsEvents, HeadlabScaling, HeadlabScalingAttributes, HeadlabScalingEvents, HeadlabThemeToggle, HeadlabThemeToggleAttributes, HeadlabThemeToggleEvents, HeadlabTrainer, HeadlabTrainerAttributes, HeadlabTrainerEvents, HeadlabWorkedExample, HeadlabWorkedExampleAttributes, HeadlabWorkedExampleEvents } from '../headlab-components.js';

import type { DefineComponent } from 'vue';

declare module 'vue' {
  interface GlobalComponents {
    'headlab-choosing-h': DefineComponent<HeadlabChoosingHAttributes>;
    'headlab-heads': DefineComponent<HeadlabHeadsAttributes>;
    'headlab-language-model': DefineComponent<HeadlabLanguageModelAttributes>;
    'headlab-misconceptions': DefineComponent<HeadlabMisconceptionsAttributes>;
    'headlab-model-explorer': DefineComponent<HeadlabModelExplorerAttributes>;
    'headlab-params': DefineComponent<HeadlabParamsAttributes>;
    'headlab-scaling': DefineComponent<HeadlabScalingAttributes>;
    'headlab-theme-toggle': DefineComponent<HeadlabThemeToggleAttributes>;
    'headlab-trainer': DefineComponent<HeadlabTrainerAttributes>;
    'headlab-worked-example': DefineComponent<HeadlabWorkedExampleAttributes>;
  }
}
