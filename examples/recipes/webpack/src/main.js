import { createHeadlab } from 'headlab';
import { workedExample } from './worked-example.js';

const lab = await createHeadlab();
const { output, weights } = workedExample(lab);
document.querySelector('#output').textContent = output;
document.querySelector('#weights').textContent = weights;
