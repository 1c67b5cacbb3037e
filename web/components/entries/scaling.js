// One element on its own: importing this module registers <headlab-scaling> (and nothing else).
import { HeadlabScaling } from '../headlab-scaling.js';

HeadlabScaling.define();
export { HeadlabScaling };
