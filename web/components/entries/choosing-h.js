// One element on its own: importing this module registers <headlab-choosing-h> (and nothing else).
import { HeadlabChoosingH } from '../headlab-choosing-h.js';

HeadlabChoosingH.define();
export { HeadlabChoosingH };
