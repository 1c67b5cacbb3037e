// One element on its own: importing this module registers <headlab-model-explorer> (and nothing else).
import { HeadlabModelExplorer } from '../headlab-model-explorer.js';

HeadlabModelExplorer.define();
export { HeadlabModelExplorer };
