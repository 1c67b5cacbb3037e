// One element on its own: importing this module registers <headlab-language-model> (and nothing else).
import { HeadlabLanguageModel } from '../headlab-language-model.js';

HeadlabLanguageModel.define();
export { HeadlabLanguageModel };
