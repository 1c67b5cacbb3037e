// `npm run bench:training` — how fast <headlab-trainer>'s presets train, in Node
// and in headless Chromium (in the trainer Worker, as the demo runs it), and how
// long it takes until specialisation is visible on two-relations with h = 2; then
// the language models (bench/training/lm.mjs): steps/s beside PyTorch on one
// thread, and the time until the induction phase change.
// Prints Markdown tables and writes bench/training/latest.json. See README.md.
//
//   node bench/training/run.mjs [--part trainer|lm|all] [--env node|browser|both] [--seeds 1,2,3,4,5]
//                               [--out bench/training/latest.json]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { createHeadlab } from '../../web/lib/headlab.js';
import { TrainerSession, PACES } from '../../web/lib/teach/trainer-session.js';
import { specialisation, TRACK_SHARE, SPECIALISED_ACCURACY } from '../../web/lib/teach/trainer-verdicts.js';
import { serve } from '../../tools/serve.mjs';
import { runLm, reportLm } from './lm.mjs';
import { measurePeak } from '../lib/peak.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const dist = path.join(repo, 'dist');

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1] && !all[i + 1].startsWith('--') ? all[i + 1] : true]);
  return acc;
}, []));
const env = args.env ?? 'both';
const part = args.part ?? 'all';
if (!['trainer', 'lm', 'all'].includes(part)) throw new Error(`--part must be trainer, lm or all, not ${part}`);
const seeds = String(args.seeds ?? '1,2,3,4,5').split(',').map(Number);
const out = path.resolve(repo, args.out ?? 'bench/training/latest.json');

/** The demo presets. compareHeads: the side-by-side mode (h = 1 and h = compareHeads on the same data). */
const PRESETS = [
  { name: 'two-relations, h = 2, d = 16, batch 32', config: { task: 'two-relations', numHeads: 2, dModel: 16, batchSize: 32 } },
  { name: 'two-relations, h = 2, d = 16, batch 64', config: { task: 'two-relations', numHeads: 2, dModel: 16, batchSize: 64 } },
  { name: 'three-relations, h = 3, d = 24, batch 64', config: { task: 'three-relations', numHeads: 3, dModel: 24, batchSize: 64 } },
  { name: 'two-relations, h = 1 and h = 2 side by side, batch 64', config: { task: 'two-relations', numHeads: 2, dModel: 16, batchSize: 64 }, compareHeads: 2 },
];
const SPEC_CONFIG = { task: 'two-relations', numHeads: 2, dModel: 16, batchSize: 64, learningRate: 0.003 };
const STEPS = 2000;        // per timed run
const REPS = 3;
const INTERVAL_MS = 50;    // the demo's time between snapshots
const READ_MS = 3000;      // a learner reads the page for a moment before pressing Start

const median = (xs) => {
  const s = xs.filter((x) => x !== null).sort((a, b) => a - b);
  if (!s.length) return null;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const log = (...m) => console.error(...m);

// ------------------------------------------------------------------ Node

/** Steps per second: `raw` = one step() call of STEPS steps; `loop` = the demo's chunked loop with snapshots every 66 ms. */
async function nodeSpeed(lab, preset) {
  const raw = [], loop = [];
  for (let rep = 0; rep < REPS; rep++) {
    const session = new TrainerSession(lab, () => {}, { schedule: setImmediate });
    session.handle('create', { config: { ...preset.config, seed: rep + 1 }, compareHeads: preset.compareHeads ?? 0 });
    session.handle('step', { n: 200 });  // warm-up
    let t0 = performance.now();
    session.handle('step', { n: STEPS });
    raw.push(STEPS / ((performance.now() - t0) / 1000));
    loop.push(await runLoop(session, STEPS));
    session.dispose();
  }
  return { raw: median(raw), loop: median(loop) };
}

function runLoop(session, n) {
  return new Promise((resolve) => {
    const start = session.currentStep;
    const t0 = performance.now();
    session.emit = (m) => {
      if (m.event === 'paused') resolve((session.currentStep - start) / ((performance.now() - t0) / 1000));
    };
    session.handle('options', { intervalMs: INTERVAL_MS });
    session.handle('run', { until: start + n, pace: 0 });
  });
}

/** Node, the demo's loop flat out: the first snapshot where every relation has its own head and accuracy ≥ 0.99. */
function nodeSpecialisation(lab, seed) {
  return new Promise((resolve) => {
    let t0 = 0;
    const session = new TrainerSession(lab, (m) => {
      if (m.event === 'snapshot' && specialisation(m.snapshot.runs[0])) {
        const seconds = (performance.now() - t0) / 1000;
        const step = m.snapshot.runs[0].step;
        session.dispose();
        resolve({ seed, step, seconds });
      } else if (m.event === 'paused') {
        session.dispose();
        resolve({ seed, step: null, seconds: null });
      }
    }, { schedule: setImmediate });
    session.handle('create', { config: { ...SPEC_CONFIG, seed } });
    session.handle('options', { intervalMs: INTERVAL_MS });
    t0 = performance.now();
    session.handle('run', { until: 5000, pace: 0 });
  });
}

async function runNode() {
  const lab = await createHeadlab();
  const speed = [];
  for (const p of PRESETS) {
    log(`node: ${p.name}`);
    speed.push({ preset: p.name, ...(await nodeSpeed(lab, p)) });
  }
  const spec = [];
  for (const seed of seeds) spec.push(await nodeSpecialisation(lab, seed));
  return { speed, specialisation: spec };
}

// ------------------------------------------------------------------ Chromium

// Runs in the page: drives dist/headlab-trainer-worker.js with the demo's protocol.
const WORKER_BENCH = async ({ presets, steps, reps, intervalMs }) => {
  const worker = new Worker('/headlab-trainer-worker.js', { type: 'module' });
  let id = 0;
  const waiting = new Map();
  let onEvent = () => {};
  worker.onmessage = (e) => {
    const d = e.data;
    if (d.ready) return waiting.get('ready')();
    if (d.event) return onEvent(d);
    const job = waiting.get(d.id);
    waiting.delete(d.id);
    if (d.error) job.reject(new Error(d.error.message)); else job.resolve(d.result);
  };
  await new Promise((resolve) => waiting.set('ready', resolve));
  const req = (type, payload) => new Promise((resolve, reject) => {
    const i = ++id;
    waiting.set(i, { resolve, reject });
    worker.postMessage({ id: i, type, payload });
  });
  const med = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const out = [];
  for (const p of presets) {
    const raw = [], loop = [];
    for (let rep = 0; rep < reps; rep++) {
      const created = await req('create', { config: { ...p.config, seed: rep + 1 }, compareHeads: p.compareHeads ?? 0 });
      await req('step', { n: 200 });
      let t0 = performance.now();
      await req('step', { n: steps });
      raw.push(steps / ((performance.now() - t0) / 1000));
      await req('options', { intervalMs });
      const start = created.snapshot.runs[0].step + 200 + steps;
      let snapshots = 0;
      t0 = performance.now();
      await new Promise((resolve) => {
        onEvent = (m) => { if (m.event === 'snapshot') snapshots += 1; if (m.event === 'paused') resolve(); };
        req('run', { until: start + steps, pace: 0 });
      });
      const seconds = (performance.now() - t0) / 1000;
      loop.push({ rate: steps / seconds, snapshotsPerSecond: snapshots / seconds });
    }
    out.push({
      preset: p.name, raw: med(raw), loop: med(loop.map((l) => l.rate)), snapshotsPerSecond: med(loop.map((l) => l.snapshotsPerSecond)),
    });
  }
  worker.terminate();
  return out;
};

/** The demo page's element at a given speed: Start → the first "specialised" update drawn on screen. */
async function browserSpecialisation(browser, url, seed, speed, readMs) {
  const page = await browser.newPage();
  await page.goto(`${url}demos/trainer/index.html#trainer.seed=${seed}&trainer.speed=${speed}`);
  await page.waitForFunction(() => document.querySelector('headlab-trainer')?.dataset.step === '0', null, { timeout: 30_000 });
  await page.waitForTimeout(readMs);
  const r = await page.evaluate(() => new Promise((resolve) => {
    const t = document.querySelector('headlab-trainer');
    const timer = setTimeout(() => resolve({ step: null, seconds: null }), 60_000);
    t.addEventListener('headlab-specialised', (e) => {
      // Visible = drawn: after the next frame has rendered.
      requestAnimationFrame(() => setTimeout(() => {
        clearTimeout(timer);
        resolve({ step: e.detail.step, seconds: (performance.now() - t0) / 1000, mode: t.computeMode });
      }, 0));
    }, { once: true });
    const t0 = performance.now();
    t.start();
  }));
  await page.close();
  return { seed, speed, readMs, ...r };
}

async function runBrowser() {
  const worker = path.join(dist, 'headlab-trainer-worker.js');
  if (!fs.existsSync(worker)) {
    throw new Error('dist/headlab-trainer-worker.js is missing: build the site first (npm run build, then node scripts/bundle.mjs)');
  }
  if (fs.statSync(worker).mtimeMs < fs.statSync(path.join(repo, 'web/lib/gen/headlab_core.wasm')).mtimeMs) {
    log('warning: dist/ is older than web/lib/gen/headlab_core.wasm; run node scripts/bundle.mjs to measure the current build');
  }
  const server = await serve({ port: 0, root: dist });
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    await page.goto(`${server.url}index.html`);
    log('chromium: steps per second in the trainer Worker');
    const speed = await page.evaluate(WORKER_BENCH, { presets: PRESETS, steps: STEPS, reps: REPS, intervalMs: INTERVAL_MS });
    await page.close();
    const spec = [];
    for (const [speedName, readMs] of [['fast', 0], ['fast', READ_MS], ['normal', READ_MS]]) {
      for (const seed of seeds) {
        log(`chromium: specialisation, seed ${seed}, speed ${speedName}, Start ${readMs} ms after load`);
        spec.push(await browserSpecialisation(browser, server.url, seed, speedName, readMs));
      }
    }
    return { version: browser.version(), speed, specialisation: spec };
  } finally {
    await browser.close();
    await server.close();
  }
}

const launchBrowser = () => chromium.launch({ executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'] });

// ------------------------------------------------------------------ report

const f0 = (x) => (x === null || x === undefined ? '—' : Math.round(x).toLocaleString('en-US'));
const f2 = (x) => (x === null || x === undefined ? '—' : x.toFixed(2));

function report(result) {
  const lines = [];
  lines.push(`Training speed, steps per second (median of ${REPS} runs of ${STEPS} steps; side by side = both models step once).`);
  lines.push(`"raw": one request of ${STEPS} steps. "demo loop": 25 ms chunks with a snapshot (held-out evaluation on 1000 examples, head metrics, attention weights) every ${INTERVAL_MS} ms, as the page runs it.`);
  lines.push('');
  lines.push('| preset | Node raw | Node demo loop | Chromium Worker raw | Chromium Worker demo loop | snapshots/s |');
  lines.push('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const p of PRESETS) {
    const n = result.node?.speed.find((x) => x.preset === p.name);
    const b = result.browser?.speed.find((x) => x.preset === p.name);
    lines.push(`| ${p.name} | ${f0(n?.raw)} | ${f0(n?.loop)} | ${f0(b?.raw)} | ${f0(b?.loop)} | ${b ? b.snapshotsPerSecond.toFixed(1) : '—'} |`);
  }
  lines.push('');
  lines.push(`Time until specialisation is visible, two-relations, h = 2, d = 16, batch 64, learning rate 0.003: the first update where each relation has its own head with share ≥ ${TRACK_SHARE} and held-out accuracy ≥ ${SPECIALISED_ACCURACY}. Seeds ${seeds.join(', ')}; median (min–max).`);
  lines.push('');
  lines.push('| where | speed | step | seconds | per seed (step / s) |');
  lines.push('| --- | --- | ---: | ---: | --- |');
  const row = (where, speed, rs) => {
    const steps = rs.map((r) => r.step), secs = rs.map((r) => r.seconds).filter((x) => x !== null);
    const range = secs.length ? ` (${f2(Math.min(...secs))}–${f2(Math.max(...secs))})` : '';
    lines.push(`| ${where} | ${speed} | ${f0(median(steps))} | ${f2(median(secs))}${range} | ${rs.map((r) => `${r.step ?? 'never'} / ${f2(r.seconds)}`).join(', ')} |`);
  };
  if (result.node) row('Node, the demo loop', 'flat out', result.node.specialisation);
  if (result.browser) {
    const b = result.browser.specialisation;
    row('Chromium, the demo page, Start as soon as it is ready', 'fastest', b.filter((r) => r.speed === 'fast' && r.readMs === 0));
    row(`Chromium, the demo page, Start ${READ_MS / 1000} s after it is ready`, 'fastest', b.filter((r) => r.speed === 'fast' && r.readMs > 0));
    row(`Chromium, the demo page, Start ${READ_MS / 1000} s after it is ready`, `normal (${PACES.normal} steps/s, the default)`, b.filter((r) => r.speed === 'normal'));
  }
  if (result.browser) {
    lines.push('', 'Seconds go from Start to the first frame drawn after the update that shows specialisation (the element’s headlab-specialised event, then one animation frame). ' +
      'The Worker warms the wasm up while the page is open (its first ~100 steps run several times slower before the browser has optimised the code); Start at once skips that.');
  }
  return lines.join('\n');
}

const machine = { cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.cpus().length, loadBefore: os.loadavg() };
// The host's speed moves from day to day (a shared VM): the SIMD peak probe beside the seconds says how fast it
// ran this time (bench/lib/peak.mjs, as `npm run bench` prints it).
machine.simdPeakGflops = (await measurePeak()).gflops;
if (machine.loadBefore[0] > machine.cores) log(`warning: load average ${machine.loadBefore[0].toFixed(1)} on ${machine.cores} cores; the numbers will be low and noisy`);
const result = { date: new Date().toISOString(), node: null, browser: null, lm: null, machine, versions: { node: process.version } };
if (part !== 'lm') {
  if (env === 'node' || env === 'both') result.node = await runNode();
  if (env === 'browser' || env === 'both') {
    result.browser = await runBrowser();
    result.versions.chromium = result.browser.version;
  }
}
if (part !== 'trainer') result.lm = await runLm({ env, seeds, launchBrowser });
machine.loadAfter = os.loadavg();
result.presets = PRESETS;
result.seeds = seeds;
const text = [part !== 'lm' ? report(result) : null, result.lm ? reportLm(result.lm) : null,
  `Load average before / after: ${machine.loadBefore.map((x) => x.toFixed(1)).join(' ')} / ${machine.loadAfter.map((x) => x.toFixed(1)).join(' ')} on ${machine.cores} cores; ` +
    `WASM SIMD peak probe (Node, before the runs): ${machine.simdPeakGflops.toFixed(1)} GFLOP/s.`]
  .filter(Boolean).join('\n\n');
result.markdown = text;
fs.writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
console.log(text);
log(`written: ${path.relative(repo, out)}`);
