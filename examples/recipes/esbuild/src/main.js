import { createHeadlab } from 'headlab';
import 'headlab/components';   // defines every element; each one's code loads when the page first uses it
import { locateFile } from './wasm-files.js';
import { workedExample } from './worked-example.js';

const lab = await createHeadlab({ locateFile });
const { output, weights } = workedExample(lab);
document.querySelector('#output').textContent = output;
document.querySelector('#weights').textContent = weights;
