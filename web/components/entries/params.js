// One element on its own: importing this module registers <headlab-params> (and nothing else).
import { HeadlabParams } from '../headlab-params.js';

HeadlabParams.define();
export { HeadlabParams };
