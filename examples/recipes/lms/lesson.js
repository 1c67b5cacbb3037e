// The package as installed (npm install headlab), served by the same server as this page.
import { createHeadlab } from './node_modules/headlab/web/lib/headlab.js';
import './node_modules/headlab/components/index.js';   // every element, each loaded when first used
import { workedExample } from './worked-example.js';

const lab = await createHeadlab();
const { output, weights } = workedExample(lab);
document.querySelector('#output').textContent = output;
document.querySelector('#weights').textContent = weights;
