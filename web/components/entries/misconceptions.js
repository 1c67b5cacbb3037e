// One element on its own: importing this module registers <headlab-misconceptions> (and nothing else).
import { HeadlabMisconceptions } from '../headlab-misconceptions.js';

HeadlabMisconceptions.define();
export { HeadlabMisconceptions };
