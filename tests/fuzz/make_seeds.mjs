// Writes the seed corpora of the model-file fuzzers: tests/fuzz/corpus/load_trainer/
// from the built module: one small trained model per task as version 2 (what
// save() writes), the same models as version 1 (no CRC-32, still loaded; the
// fuzzer's mutations of these reach the field checks, where most mutations of a
// version-2 file stop at the checksum), and a file cut inside its header;
// tests/fuzz/corpus/load_lm/: small language models of each task (with and
// without the MLP, a head switched off) and one cut inside its header (that
// fuzzer also re-stamps the CRC-32 of every input, so it needs no checksum-free variant).
//   npm run build && node tests/fuzz/make_seeds.mjs
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHeadlab } from '../../web/lib/headlab.js';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'corpus/load_trainer');
const MODELS = [
  { task: 'two-relations', numHeads: 2, dModel: 16, batchSize: 32 },
  { task: 'three-relations', numHeads: 3, dModel: 6, batchSize: 16 },
  { task: 'pronoun', numHeads: 2, dModel: 4, batchSize: 8 },
  { task: 'four-relations', numHeads: 4, dModel: 8, batchSize: 16, causal: true, optimizer: 'sgd', learningRate: 0.1 },
];

const lab = await createHeadlab();
mkdirSync(dir, { recursive: true });
for (const f of readdirSync(dir)) rmSync(path.join(dir, f));
let n = 0;
const write = (name, bytes) => writeFileSync(path.join(dir, `seed-${n++}-${name}.hlab`), bytes);
const v1s = [];
for (const options of MODELS) {
  const t = await lab.createTrainer({ seed: 1, ...options });
  t.step(20);
  if (options.numHeads > 2) t.setHeadEnabled(1, false);
  const v2 = t.save();
  t.dispose();
  write(`${options.task}-v2`, v2);
  const v1 = v2.slice(0, v2.length - 4);
  new DataView(v1.buffer).setUint32(4, 1, true);
  v1s.push([options.task, v1]);
}
for (const [task, v1] of v1s) write(`${task}-v1`, v1);
write('truncated', v1s[0][1].subarray(0, 22));
console.log(`make_seeds: ${n} files in ${path.relative(process.cwd(), dir)}`);

const lmDir = path.join(path.dirname(dir), 'load_lm');
const LANGUAGE_MODELS = [
  { task: 'induction', numLayers: 1, numHeads: 2, dModel: 4, batchSize: 4 },
  { task: 'cricket', numLayers: 2, numHeads: 2, dModel: 4, batchSize: 4, mlp: true },
];
mkdirSync(lmDir, { recursive: true });
for (const f of readdirSync(lmDir)) rmSync(path.join(lmDir, f));
let m = 0;
let first = null;
for (const options of LANGUAGE_MODELS) {
  const lm = await lab.createLanguageModel({ seed: 1, ...options });
  lm.step(5);
  if (options.numLayers > 1) lm.setHeadEnabled(1, 0, false);
  const bytes = lm.save();
  lm.dispose();
  first ??= bytes;
  writeFileSync(path.join(lmDir, `seed-${m++}-${options.task}.hllm`), bytes);
}
writeFileSync(path.join(lmDir, `seed-${m++}-truncated.hllm`), first.subarray(0, 40));
console.log(`make_seeds: ${m} files in ${path.relative(process.cwd(), lmDir)}`);
