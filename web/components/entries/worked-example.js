// One element on its own: importing this module registers <headlab-worked-example> (and nothing else).
import { HeadlabWorkedExample } from '../headlab-worked-example.js';

HeadlabWorkedExample.define();
export { HeadlabWorkedExample };
