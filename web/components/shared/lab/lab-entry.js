// What headlab-components.js loads of the API, as an entry of its own (dist/headlab-lab.js,
// components/headlab-lab.js): the page's one instance, and createHeadlab with options.
export { getLab } from './lab.js';
export { createHeadlab } from '../../../lib/headlab.js';
