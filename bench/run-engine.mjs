// One engine run in this Node process (bench/run.mjs spawns one per run):
//   node bench/run-engine.mjs --engine ort --mode mha --d 512 --h 8 --T 1024 \
//     [--reps 5] [--budget 20] [--ref file.f32|.f64] [--ref-source name] [--save-output file.f32]
//     [--headlab-module web/lib/headlab.js] [--min-run-ms 1000]
//   node bench/run-engine.mjs --peak
// Prints one line "RESULT {json}" on stdout.
import fs from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { measure } from './lib/measure.mjs';
import { measurePeak } from './lib/peak.mjs';
import { parseArgs, printResult } from './lib/child.mjs';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

export async function readArray(file) {
  const buf = await fs.readFile(file);
  const bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength).slice();
  return file.endsWith('.f64') ? new Float64Array(bytes.buffer) : new Float32Array(bytes.buffer);
}

const ctx = {
  env: 'node',
  root: pathToFileURL(repo + '/').href,
  readBytes: async (rel) => new Uint8Array(await fs.readFile(path.join(repo, rel))),
  loadScript: () => { throw new Error('loadScript is for the browser'); },
};

const args = parseArgs(process.argv.slice(2));
if (args['headlab-module']) ctx.headlabModule = args['headlab-module'];
const baselineRss = process.resourceUsage().maxRSS * 1024;
let result;
if (args.peak) {
  result = await measurePeak();
} else {
  const cell = { mode: args.mode ?? 'mha', d: Number(args.d), h: Number(args.h), T: Number(args.T) };
  const ref = args.ref ? { data: await readArray(args.ref), source: args['ref-source'] ?? path.basename(args.ref) } : null;
  result = await measure({
    ctx, engine: args.engine, cell, ref,
    reps: Number(args.reps ?? 5), budgetMs: Number(args.budget ?? 20) * 1000,
    keepOutput: Boolean(args['save-output']), minRunMs: Number(args['min-run-ms'] ?? 1000),
  });
  if (result.output) {
    const out = result.output;
    delete result.output;
    await fs.writeFile(args['save-output'], new Uint8Array(out.buffer, out.byteOffset, out.byteLength));
    result.savedOutput = args['save-output'];
  }
  result.memory.rssPeakBytes = process.resourceUsage().maxRSS * 1024;
  result.memory.rssBaselineBytes = baselineRss;
}
printResult(result);
// ORT and TF.js may keep handles open; the result is out, so leave now.
process.exit(0);
