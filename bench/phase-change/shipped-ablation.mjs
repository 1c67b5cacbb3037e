// The shipped induction model with heads switched off, for the numbers the language-model page
// quotes ("Switch them off"): held-out accuracy on the repeated stretch with each labelled
// induction head off alone, with all of them off, and with every labelled previous-token head off.
//   node bench/phase-change/shipped-ablation.mjs [--examples 1000]
import { readFileSync } from 'node:fs';
import { createHeadlab } from '../../web/lib/headlab.js';

const i = process.argv.indexOf('--examples');
const examples = i > 0 ? Number(process.argv[i + 1]) : 1000;
const lab = await createHeadlab();
const m = await lab.loadLanguageModel(readFileSync(new URL('../../web/models/induction.hlm', import.meta.url)));
const heads = m.headScores();
const labelled = (label) => heads.filter((h) => h.label === label);
const accuracy = (off) => {
  for (const h of off) m.setHeadEnabled(h.layer, h.head, false);
  const a = m.evaluate(examples).accuracy;
  for (const h of off) m.setHeadEnabled(h.layer, h.head, true);
  return a;
};
const name = (h) => `L${h.layer + 1}H${h.head + 1}`;
console.log(`shipped induction model, ${examples} held-out sequences: accuracy ${accuracy([]).toFixed(3)}`);
for (const h of labelled('induction')) console.log(`  ${name(h)} (induction) off alone: ${accuracy([h]).toFixed(3)}`);
const induction = labelled('induction'), previous = labelled('previous token');
console.log(`  every induction head off (${induction.map(name).join(', ')}): ${accuracy(induction).toFixed(3)}`);
console.log(`  every previous-token head off (${previous.map(name).join(', ')}): ${accuracy(previous).toFixed(3)}`);
m.dispose();
