// One element on its own: importing this module registers <headlab-heads> (and nothing else).
import { HeadlabHeads } from '../headlab-heads.js';

HeadlabHeads.define();
export { HeadlabHeads };
