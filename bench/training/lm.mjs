// The language-model part of `npm run bench:training`: steps per second of HeadLab's causal
// transformer (createLanguageModel) in Node and in a Chromium Worker, and of the same model in
// PyTorch on one thread (Debian's python3-torch) in the same run, with the ratio; the same with each
// batch split over 2 threads (createLanguageModel's `threads`; the Chromium page is cross-origin
// isolated, as `npm start` serves the site), 1 and 2 threads interleaved; and the wall time until
// the induction phase change at default settings, in Node and in a Chromium Worker, on 1 and 2 threads.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHeadlab } from '../../web/lib/headlab.js';
import { serve } from '../../tools/serve.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const log = (...m) => console.error(...m);

/** The models measured: the task defaults (induction, cricket) and a one-layer and an MLP variant. */
export const LM_MODELS = [
  { name: 'induction, 2 layers × 4 heads, d 32 (default)', config: { task: 'induction' } },
  { name: 'induction, 1 layer × 4 heads, d 32', config: { task: 'induction', numLayers: 1 } },
  { name: 'induction, 2 layers × 4 heads, d 32, MLP', config: { task: 'induction', mlp: true } },
  { name: 'cricket (default)', config: { task: 'cricket' } },
];
const STEPS = 600, WARMUP = 100, REPS = 3, EVAL_EVERY = 50, UNTIL = 4000;
/** Issue 23's goal: seconds of training until the phase change is on screen, by threads. */
export const PHASE_GOAL_SECONDS = { 1: 5, 2: 3 };

const median = (xs) => {
  const s = xs.filter((x) => x !== null && x !== undefined).sort((a, b) => a - b);
  if (!s.length) return null;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** The task's resolved settings, as PyTorch needs them. */
function resolved(tasks, config) {
  const t = tasks.find((x) => x.name === config.task);
  return { vocab: t.vocabulary.length, seq: t.seqLen, ...t.defaults, ...config };
}

function torchSpeed(r) {
  const args = [path.join(here, 'torch_lm.py'), '--vocab', r.vocab, '--seq', r.seq, '--layers', r.numLayers,
    '--heads', r.numHeads, '--d', r.dModel, '--batch', r.batchSize, '--steps', 200, '--warmup', 20].map(String);
  if (r.mlp) args.push('--mlp');
  const p = spawnSync('/usr/bin/python3', args, { encoding: 'utf8', env: { ...process.env, OMP_NUM_THREADS: '1' } });
  if (p.error || p.status !== 0) return { error: (p.stderr || String(p.error)).trim().split('\n').pop() };
  return JSON.parse(p.stdout.trim().split('\n').pop());
}

export function torchAvailable() {
  const p = spawnSync('/usr/bin/python3', ['-c', 'import torch'], { encoding: 'utf8' });
  return !p.error && p.status === 0;
}

/** The threads compared: one, and each batch split over two. */
export const LM_THREADS = [1, 2];

/** Steps per second on each of LM_THREADS, the runs interleaved (rep by rep); medians. */
async function nodeSpeed(lab, config) {
  const rates = LM_THREADS.map(() => []);
  for (let rep = 0; rep < REPS; rep++) {
    for (const [k, threads] of LM_THREADS.entries()) {
      const m = await lab.createLanguageModel({ ...config, seed: rep + 1, threads });
      m.step(WARMUP);
      const t0 = performance.now();
      m.step(STEPS);
      rates[k].push(STEPS / ((performance.now() - t0) / 1000));
      m.dispose();
    }
  }
  return rates.map(median);
}

async function nodePhase(lab, seed, threads) {
  const m = await lab.createLanguageModel({ task: 'induction', seed, threads });
  const t0 = performance.now();
  let out = { seed, step: null, seconds: null };
  while (m.steps < UNTIL) {
    m.step(EVAL_EVERY);
    if (m.evaluate(256).accuracy >= 0.5) { out = { seed, step: m.steps, seconds: (performance.now() - t0) / 1000 }; break; }
  }
  m.dispose();
  return { ...out, threads };
}

async function inWorker(page, message) {
  return page.evaluate((msg) => new Promise((resolve, reject) => {
    const w = new Worker('/bench/training/lm-worker.mjs', { type: 'module' });
    w.onmessage = (e) => { w.terminate(); e.data.error ? reject(new Error(e.data.error)) : resolve(e.data); };
    w.onerror = (e) => { w.terminate(); reject(new Error(e.message)); };
    w.postMessage(msg);
  }), message);
}

export async function runLm({ env, seeds, launchBrowser }) {
  const lab = await createHeadlab();
  const tasks = await lab.languageTasks();
  const result = { models: [], phase: { node: [], browser: [] }, torch: null, evalEvery: EVAL_EVERY };
  const haveTorch = torchAvailable();
  result.torch = haveTorch ? 'python3-torch, 1 thread' : null;
  if (!haveTorch) log('PyTorch (python3-torch) is not installed: the PyTorch column is empty. apt-get install python3-torch to fill it.');
  let browser = null, server = null, page = null;
  if (env !== 'node') {
    server = await serve({ port: 0, root: repo, isolate: true });
    browser = await launchBrowser();
    page = await browser.newPage();
    await page.goto(`${server.url}web/index.html`);
    result.chromium = browser.version();
  }
  try {
    for (const m of LM_MODELS) {
      const row = { name: m.name, config: resolved(tasks, m.config) };
      // Side by side in one run: HeadLab in Node, in Chromium, then PyTorch, per model.
      // node, browser: steps/s on 1 thread; node2, browser2: on 2 threads.
      if (env !== 'browser') { log(`lm node: ${m.name}`); [row.node, row.node2] = await nodeSpeed(lab, m.config); }
      if (page) {
        log(`lm chromium worker: ${m.name}`);
        const rates = LM_THREADS.map(() => []);
        for (let rep = 0; rep < REPS; rep++) {
          for (const [k, threads] of LM_THREADS.entries()) {
            rates[k].push((await inWorker(page, { type: 'speed', config: { ...m.config, seed: rep + 1, threads }, steps: STEPS, warmup: WARMUP })).stepsPerSecond);
          }
        }
        [row.browser, row.browser2] = rates.map(median);
      }
      if (haveTorch) { log(`lm pytorch: ${m.name}`); row.pytorch = torchSpeed(row.config); }
      result.models.push(row);
    }
    for (const seed of seeds) {
      for (const threads of LM_THREADS) {
        if (env !== 'browser') { log(`lm node: induction phase change, seed ${seed}, ${threads} thread(s)`); result.phase.node.push(await nodePhase(lab, seed, threads)); }
        if (page) {
          log(`lm chromium worker: induction phase change, seed ${seed}, ${threads} thread(s)`);
          result.phase.browser.push({ seed, threads, ...(await inWorker(page, { type: 'phase', config: { task: 'induction', seed, threads }, evalEvery: EVAL_EVERY, until: UNTIL })) });
        }
      }
    }
  } finally {
    await browser?.close();
    await server?.close();
  }
  return result;
}

const f0 = (x) => (x === null || x === undefined ? '—' : Math.round(x).toLocaleString('en-US'));
const f1 = (x) => (x === null || x === undefined ? '—' : x.toFixed(1));

export function reportLm(r) {
  const lines = [];
  lines.push(`Language models, steps per second (median of ${REPS} runs of ${STEPS} steps after ${WARMUP} warm-up steps; PyTorch: 200 steps on one thread, same model, batches drawn before timing).`);
  lines.push('');
  lines.push('| model | batch | Node | Chromium Worker | PyTorch 1 thread | Node ÷ PyTorch | Chromium ÷ PyTorch |');
  lines.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const m of r.models) {
    const pt = m.pytorch?.stepsPerSecond ?? null;
    const ratio = (x) => (x && pt ? `${x / pt >= 10 ? Math.round(x / pt) : (x / pt).toFixed(1)}×` : '—');
    lines.push(`| ${m.name} | ${m.config.batchSize} | ${f0(m.node)} | ${f0(m.browser)} | ${pt ? f0(pt) : m.pytorch?.error ? 'failed' : 'not installed'} | ${ratio(m.node)} | ${ratio(m.browser)} |`);
  }
  lines.push('');
  lines.push(`Each batch split over ${LM_THREADS[1]} threads (\`threads: ${LM_THREADS[1]}\`; Chromium: a Worker of a cross-origin isolated page), interleaved with 1 thread in the same run; steps per second and speed-up.`);
  lines.push('');
  lines.push(`| model | batch | Node 1 / ${LM_THREADS[1]} threads | Node speed-up | Chromium Worker 1 / ${LM_THREADS[1]} threads | Chromium speed-up |`);
  lines.push('| --- | ---: | ---: | ---: | ---: | ---: |');
  const up = (a, b) => (a && b ? `${(b / a).toFixed(2)}×` : '—');
  for (const m of r.models) {
    lines.push(`| ${m.name} | ${m.config.batchSize} | ${f0(m.node)} / ${f0(m.node2)} | ${up(m.node, m.node2)} | ${f0(m.browser)} / ${f0(m.browser2)} | ${up(m.browser, m.browser2)} |`);
  }
  lines.push('');
  lines.push(`Induction phase change at default settings (the first held-out evaluation, every ${r.evalEvery} steps on 256 sequences, with accuracy on the repeated part ≥ 0.5); seconds from the first step, evaluations included. The steps are exact whatever the load; "steps ÷ steps/s" divides the median step by the default model's steps per second in the table above (same run, same place and threads), a figure that leaves out the evaluations.`);
  lines.push('');
  lines.push('| where | threads | median step | median seconds | steps ÷ steps/s | goal | per seed (step / s) |');
  lines.push('| --- | ---: | ---: | ---: | ---: | ---: | --- |');
  const base = r.models[0];
  const verdicts = [];
  for (const [where, all, rates] of [['Node', r.phase.node, [base?.node, base?.node2]], ['Chromium Worker', r.phase.browser, [base?.browser, base?.browser2]]]) {
    for (const [k, threads] of LM_THREADS.entries()) {
      const rs = all.filter((x) => (x.threads ?? 1) === threads);
      if (!rs.length) continue;
      const step = median(rs.map((x) => x.step)), seconds = median(rs.map((x) => x.seconds));
      const projected = step && rates[k] ? step / rates[k] : null;
      const goal = PHASE_GOAL_SECONDS[threads];
      if (goal && seconds !== null) verdicts.push(`${where}, ${threads} thread(s): ${f1(seconds)} s ${seconds <= goal ? '≤' : '>'} ${goal} s${seconds <= goal ? '' : ` (${f1(seconds - goal)} s over)`}`);
      lines.push(`| ${where} | ${threads} | ${f0(step)} | ${f1(seconds)} | ${f1(projected)} | ≤ ${goal ?? '—'} s | ${rs.map((x) => `${x.step ?? 'never'} / ${f1(x.seconds)}`).join(', ')} |`);
    }
  }
  if (verdicts.length) lines.push('', `Goal (issue 23: the phase change on screen within ${PHASE_GOAL_SECONDS[2]} s on 2 threads, ${PHASE_GOAL_SECONDS[1]} s on 1; median seconds): ${verdicts.join('; ')}. On a busy machine the seconds are not the model's: read the steps.`);
  if (!r.torch) lines.push('', 'PyTorch was not measured: python3-torch is not installed (apt-get install python3-torch).');
  return lines.join('\n');
}
