// Generation with and without the key-value cache on the random GPT-2-small-shaped model
// (build/bench-gpt2, make_gpt2_small.py): NEW greedy tokens after PROMPT seeded ids, in one Node
// process, the two paths alternating, after a check that both give the same tokens.
//   node bench/pretrained/generate.mjs [--threads 1] [--reps 3] [--prompt 64] [--new 32]
// Prints tokens/s of each path (median and best of the reps), the ratio and the load average.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { idsFor, median } from './measure.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const FOLDER = path.join(repo, 'build/bench-gpt2');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const threads = arg('threads', 1), reps = arg('reps', 3), PROMPT = arg('prompt', 64), NEW = arg('new', 32);

if (!fs.existsSync(path.join(FOLDER, 'model.safetensors'))) {
  console.error(`no model in ${FOLDER}: /usr/bin/python3 bench/pretrained/make_gpt2_small.py build/bench-gpt2 --no-onnx --no-check`);
  process.exit(1);
}
const { createHeadlab } = await import(pathToFileURL(path.join(repo, 'web/lib/headlab.js')).href);
const { UNCACHED } = await import(pathToFileURL(path.join(repo, 'web/lib/api/pretrained.js')).href);
const read = (f) => fs.readFileSync(path.join(FOLDER, f));
const config = JSON.parse(read('config.json'));
delete config.eos_token_id;  // a fixed number of tokens: no stop at a random model's eos
const lab = await createHeadlab();
const model = await lab.loadPretrained({
  config, tokenizer: JSON.parse(read('tokenizer.json')), weights: new Uint8Array(read('model.safetensors')),
}, { threads });
const ids = idsFor([], PROMPT, model.info.vocabSize);
const paths = { cached: {}, uncached: { [UNCACHED]: true } };
const options = (p) => ({ maxTokens: NEW, temperature: 0, ...paths[p] });

// Correctness first: the same tokens on both paths.
const a = await model.generate(ids, options('cached')), b = await model.generate(ids, options('uncached'));
if (a.ids.length !== PROMPT + NEW || a.ids.some((x, i) => x !== b.ids[i])) throw new Error('cached and uncached generate differ');

const times = { cached: [], uncached: [] };
for (let r = 0; r < reps; r++)
  for (const p of ['cached', 'uncached']) {
    const t0 = performance.now();
    await model.generate(ids, options(p));
    times[p].push(performance.now() - t0);
  }
model.dispose();
const rate = (ms) => (NEW / (ms / 1000)).toFixed(1);
const line = (p) => `${p} ${rate(median(times[p]))} tokens/s (best ${rate(Math.min(...times[p]))})`;
console.log(`GPT-2-small-shaped, float32, ${threads} thread(s), ${NEW} new after ${PROMPT}, greedy, median of ${reps}: ` +
  `${line('cached')}, ${line('uncached')}, ${(median(times.uncached) / median(times.cached)).toFixed(2)}×; ` +
  `load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')} on ${os.cpus().length} cores`);
