import { createHeadlab } from 'headlab';
import { locateFile } from './wasm-files.js';
import { workedExample } from './worked-example.js';

const lab = await createHeadlab({ locateFile });
const { output, weights } = workedExample(lab);
document.querySelector('#output').textContent = output;
document.querySelector('#weights').textContent = weights;
