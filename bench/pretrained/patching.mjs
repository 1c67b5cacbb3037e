// The causal tools' part of `npm run bench` (issue 35): `model.patchHeads` over all 144 heads of the
// GPT-2-small-shaped model (build/bench-gpt2/, make_gpt2_small.py) on a 16-token prompt, at 1 and 2
// threads, the shared path (layers before a head's layer computed once, rows before the first
// difference shared, a layer's heads as one batch) against the naive one (a whole patched forward per
// head), on a quiet machine and beside the standard background load (bench/lib/busy-load.mjs).
//   node bench/run.mjs --part patching [--reps 3] [--machines quiet,busy] [--differs 10,1] [--merge] [--out bench/results/patching]
//   node bench/pretrained/patching.mjs --child --threads N --reps R --differ P   (one process: prints RESULT {json})
// Each thread count runs in a process of its own, on one loaded model: a warm-up, the naive path once
// (it costs a whole forward per head), then the shared path `--reps` times, each checked against the naive answers.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs, printResult, runChild } from '../lib/child.mjs';
import { startBusyLoad } from '../lib/busy-load.mjs';
import { idsFor, median } from './measure.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const FOLDER = path.join(repo, 'build/bench-gpt2');
const T = 16;
const now = () => performance.now();

/** One process: load the model with `threads`, then time naive and shared patchHeads. */
async function child(a) {
  const threads = Number(a.threads);
  const reps = Number(a.reps ?? 3);
  const differ = Number(a.differ);
  const { createHeadlab } = await import(pathToFileURL(path.join(repo, 'web/lib/headlab.js')).href);
  const { NAIVE } = await import(pathToFileURL(path.join(repo, 'web/lib/api/pretrained.js')).href);
  const read = (f) => fs.readFileSync(path.join(FOLDER, f));
  const lab = await createHeadlab();
  const model = await lab.loadPretrained({
    config: JSON.parse(read('config.json')), tokenizer: JSON.parse(read('tokenizer.json')), weights: new Uint8Array(read('model.safetensors')),
  }, { threads });
  const V = model.info.vocabSize;
  const check = JSON.parse(read('check.json'));
  const clean = Array.from(idsFor(check.ids ?? [], T, V));
  const corrupted = clean.slice();
  corrupted[differ] = (clean[differ] + 7) % (V - 1);
  const args = { clean, corrupted, answer: clean[3], wrong: clean[5] };
  await model.patchHeads(args);  // warm-up
  // The naive path costs a whole forward per head: timed once, and its answers checked against the shared path's.
  let t0 = now();
  const naive = await model.patchHeads({ ...args, [NAIVE]: true });
  const times = { shared: [], naive: [now() - t0], forward: [] };
  let worst = 0, largest = 0;
  for (let r = 0; r < reps; r++) {
    t0 = now();
    const shared = await model.patchHeads(args);
    times.shared.push(now() - t0);
    for (let i = 0; i < shared.effects.length; i++) {
      worst = Math.max(worst, Math.abs(shared.effects[i] - naive.effects[i]));
      largest = Math.max(largest, Math.abs(naive.effects[i]));
    }
    t0 = now();
    await model.run(corrupted);
    times.forward.push(now() - t0);
  }
  const heads = model.info.numLayers * model.info.numHeads;
  model.dispose();
  return { status: 'ok', threads, threadsUsed: threads, differ, heads, times, agreement: { maxAbsDiff: worst, largestEffect: largest } };
}

function ensureModel() {
  const need = ['config.json', 'model.safetensors', 'tokenizer.json', 'check.json'];
  if (need.every((f) => fs.existsSync(path.join(FOLDER, f)))) return;
  console.error(`bench patching: writing the model into ${path.relative(repo, FOLDER)} (about a minute)`);
  const r = spawnSync('/usr/bin/python3', [path.join(here, 'make_gpt2_small.py'), FOLDER, '--no-onnx', '--no-check'], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`make_gpt2_small.py failed (exit ${r.status})`);
}

const fmt = (ms) => `${(ms / 1000).toFixed(2)} s`;

function render(res) {
  const L = ['# patchHeads on a GPT-2-small-shaped model: 144 heads, 16 tokens', ''];
  L.push(`Written by \`node bench/run.mjs --part patching\`, ${res.startedAt.slice(0, 16).replace('T', ' ')} UTC (${res.machine.cpuModel}, ${res.machine.cores} cores,` +
    ` Node ${res.machine.node}; git ${res.gitHead}; ${res.reps} timed runs per cell after a warm-up; load average at the start ${res.machine.loadAvgStart.map((x) => x.toFixed(1)).join(', ')}).`);
  L.push('Random weights of GPT-2 small\'s shapes (build/bench-gpt2, make_gpt2_small.py). `clean` is 16 ids; `corrupted` differs from it at one position:' +
    ' 10 (as an IOI prompt differs at the repeated name, so a decoder\'s first 10 rows are shared) or 1 (almost nothing to share but the layers).' +
    ' Shared = `model.patchHeads(…)` (median of the timed runs, after a warm-up); naive = one whole patched forward per head (144 + 1), timed once;' +
    ' forward = one `model.run` of the 16 tokens (median).', '');
  L.push('| machine, time (load average, 1 min, before) | threads | first difference at | shared (median) | naive (one run) | naive ÷ shared | one forward | shared ÷ forward | shared vs naive: max abs diff ÷ largest effect |');
  L.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of res.runs) {
    if (r.status !== 'ok') { L.push(`| ${r.machine} (${r.loadAvgBefore?.toFixed(1) ?? '–'}) | ${r.threads} | ${r.differ} | fails: ${r.error} | | | | | |`); continue; }
    const s = median(r.times.shared), n = median(r.times.naive), f = median(r.times.forward);
    L.push(`| ${r.machine}, ${r.at?.slice(11, 16) ?? '–'} UTC (${r.loadAvgBefore?.toFixed(1) ?? '–'}) | ${r.threads} | ${r.differ} | ${fmt(s)} | ${fmt(n)} | ${(n / s).toFixed(1)}× | ${(f).toFixed(0)} ms | ${(s / f).toFixed(1)} | ${(r.agreement.maxAbsDiff / (r.agreement.largestEffect || 1)).toExponential(1)} |`);
  }
  L.push('', 'Busy = beside `bench/lib/busy-load.mjs` (one process hashing and fsync\'ing on one of the 2 cores) for the whole cell.' +
    ' The goal of issue 35 is ≤ 3 s on 2 threads on this machine. The load average says how busy the machine was besides: other jobs ran on it.', '');
  return L.join('\n');
}

export async function runPatching(argv) {
  const a = parseArgs(argv);
  const reps = Number(a.reps ?? 3);
  const out = a.out ?? 'bench/results/patching';
  ensureModel();
  const git = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repo, encoding: 'utf8' }).stdout.trim();
  const res = {
    startedAt: new Date().toISOString(), gitHead: git, reps,
    machine: { cpuModel: os.cpus()[0]?.model ?? '?', cores: os.cpus().length, node: process.version, loadAvgStart: os.loadavg() },
    runs: [],
  };
  // --merge: keep the cells of an earlier run (bench/results/patching.json) that this one does not measure again.
  const json = path.resolve(repo, `${out}.json`);
  if (a.merge && fs.existsSync(json)) res.runs = JSON.parse(fs.readFileSync(json, 'utf8')).runs;
  const machines = String(a.machines ?? 'quiet,busy').split(',');
  const differs = String(a.differs ?? '10,1').split(',').map(Number);
  for (const machine of machines) {
    if (!['quiet', 'busy'].includes(machine)) throw new Error(`--machines takes quiet and busy, got "${machine}"`);
    for (const differ of machine === 'quiet' ? differs : differs.slice(0, 1)) {
      for (const threads of [1, 2]) {
        const loadAvgBefore = os.loadavg()[0];
        const load = machine === 'busy' ? startBusyLoad() : null;
        const r = await runChild(fileURLToPath(import.meta.url), ['--child', '--threads', threads, '--reps', reps, '--differ', differ], { timeoutMs: 30 * 60_000, maxOldSpaceMb: 4096, cwd: repo });
        await load?.stop();
        res.runs = res.runs.filter((x) => !(x.machine === machine && x.threads === threads && x.differ === differ));
        res.runs.push({ ...r, machine, threads, differ, loadAvgBefore, at: new Date().toISOString() });
        console.error(`bench patching: ${machine}, ${threads} thread(s), differ at ${differ}: ${r.status === 'ok' ? `shared ${fmt(median(r.times.shared))}, naive ${fmt(median(r.times.naive))}` : r.error}`);
      }
    }
  }
  res.finishedAt = new Date().toISOString();
  fs.mkdirSync(path.dirname(path.resolve(repo, out)), { recursive: true });
  fs.writeFileSync(path.resolve(repo, `${out}.json`), JSON.stringify(res, null, 1));
  fs.writeFileSync(path.resolve(repo, `${out}.md`), render(res));
  console.log(render(res));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const a = parseArgs(process.argv.slice(2));
  if (a.child) {
    child(a).then((r) => { printResult(r); process.exit(0); },
      (e) => { printResult({ status: 'fails', error: String(e?.message ?? e).split('\n')[0].slice(0, 400) }); process.exit(0); });
  } else {
    runPatching(process.argv.slice(2)).catch((e) => { console.error(e); process.exit(1); });
  }
}
