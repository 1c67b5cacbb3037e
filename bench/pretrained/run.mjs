// The real-model part of `npm run bench`: a random model of GPT-2 small's shapes (12 layers,
// 12 heads, d 768, vocabulary 50257), HeadLab (`lab.loadPretrained`, `model.run`) against
// ONNX Runtime Web running PyTorch's ONNX export of the same weights, in Node and in Chromium.
//   node bench/run.mjs --part pretrained [--env node|browser|both] [--rounds 2] [--reps 3] [--seqs 64,256]
//                      [--out bench/results/pretrained]
//   node bench/pretrained/run.mjs --render bench/results/pretrained.json   (the Markdown again from the JSON)
//   node bench/pretrained/run.mjs (the same options)
// Makes the model once (build/bench-gpt2/, by make_gpt2_small.py with Debian's python3-torch),
// checks HeadLab's logits against ORT's on the same ids, then times one forward pass per T, each
// engine in a process of its own, alternating (ORT's numThreads is process-wide). See bench/README.md.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rendererPeakRss } from '../lib/renderer-rss.mjs';
import { CHROMIUM, CHROMIUM_ARGS, parseArgs, runChild } from '../lib/child.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const rel = (p) => path.relative(repo, p);
const PYTHON = '/usr/bin/python3';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Makes the model if missing. Returns null when ready, else why it cannot be made. */
function ensureModel(folder) {
  const need = ['config.json', 'model.safetensors', 'tokenizer.json', 'model.onnx', 'check.json'];
  if (need.every((f) => fs.existsSync(path.join(folder, f)))) return null;
  const probe = spawnSync(PYTHON, ['-c', 'import torch, onnx'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    return `${PYTHON} cannot import torch and onnx (apt-get install -y python3-torch python3-onnx): ` +
      'the real-model part needs them once, to write the model and its ONNX export';
  }
  console.error(`bench pretrained: writing the model into ${rel(folder)} (about 1-2 minutes, 1 GB)`);
  const r = spawnSync(PYTHON, [path.join(here, 'make_gpt2_small.py'), folder], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`make_gpt2_small.py failed (exit ${r.status})`);
  return null;
}

/** One run on a fresh Chromium: a page of page.html from `url` (isolated or not), calling window[fn](args). */
export async function runBrowser(url, args, timeoutMs, fn = 'benchPretrained') {
  const { chromium } = await import('playwright-core');
  const server = await chromium.launchServer({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  const pid = server.process().pid;
  let browser, timer;
  try {
    browser = await chromium.connect(server.wsEndpoint());
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e.message)));
    const crashed = new Promise((resolve) => page.on('crash', () => resolve({ status: 'fails', error: 'the renderer crashed (out of memory?)' })));
    await page.goto(url + 'bench/pretrained/page.html');
    await page.waitForFunction(() => window.benchReady === true, null, { timeout: 30000 });
    await new Promise((r) => setTimeout(r, 1500));  // let a fresh Chromium's start-up work settle
    const timeout = new Promise((resolve) => {
      timer = setTimeout(() => resolve({ status: 'fails', error: 'no answer (timeout)' }), timeoutMs);
    });
    const work = page.evaluate(([f, a]) => window[f](a), [fn, args])
      .catch((e) => ({ status: 'fails', error: String(e.message).split('\n')[0].slice(0, 300) }));
    const result = await Promise.race([work, crashed, timeout]);
    if (result.status === 'fails' && errors.length) result.error += ` (page: ${errors.slice(-2).join(' | ').slice(0, 300)})`;
    if (result.memory) result.memory.rssPeakBytes = rendererPeakRss(pid);
    result.chromium = browser.version();
    return result;
  } catch (e) {
    return { status: 'fails', error: String(e.message).split('\n')[0].slice(0, 300) };
  } finally {
    clearTimeout(timer);
    await browser?.close().catch(() => {});
    await server.close().catch(() => {});
  }
}

const CONFIGS = [
  { key: 'headlab-1', engine: 'headlab', threads: 1, label: 'HeadLab, 1 thread' },
  { key: 'ort-1', engine: 'ort', threads: 1, label: 'ORT Web, 1 thread' },
  { key: 'headlab-2', engine: 'headlab', threads: 2, label: 'HeadLab, 2 threads' },
  { key: 'ort-2', engine: 'ort', threads: 2, label: 'ORT Web, 2 threads' },
];
const ENV_LABEL = { node: 'Node', browser: 'Chromium' };
const MODES = {
  all: 'logits at every position (what ORT\'s graph computes)',
  last: 'last position\'s logits + top 10 (run\'s default)',
  attention: 'last position + all 144 heads\' attention',
};

const fmt = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);
const mib = (b) => (b ? `${(b / 2 ** 20).toFixed(0)} MiB` : '–');

function render(res) {
  const L = [];
  const m = res.machine;
  L.push('# Real-model benchmark: a GPT-2-small-shaped model, HeadLab vs ONNX Runtime Web', '');
  L.push(`Written by \`node bench/run.mjs --part pretrained\`, ${res.startedAt.slice(0, 16).replace('T', ' ')} UTC to ${res.finishedAt?.slice(11, 16) ?? '–'}` +
    ` (${m.cpuModel}, ${m.cores} cores, Node ${m.node}${m.chromium ? `, Chromium ${m.chromium}` : ''}; ORT Web ${res.versions.ort ?? '?'}; git ${res.gitHead};` +
    ` ${res.options.rounds} round${res.options.rounds === 1 ? '' : 's'} × ${res.options.reps} timed runs per engine and T, after one warm-up run).`);
  L.push(`Model: random weights, ${res.model.parameters?.toLocaleString('en-US') ?? '?'} parameters, float32 (12 layers, 12 heads, d 768, vocabulary 50257);` +
    ' HeadLab loads `model.safetensors` through `lab.loadPretrained` and times `model.run(ids, …)`;' +
    ' ORT Web runs `model.onnx`, exported by PyTorch from the same weights (wasm execution provider).');
  L.push(`Load average (1, 5, 15 min) at the start ${m.loadAvgStart.map((x) => x.toFixed(1)).join(', ')}; at the end ${m.loadAvgEnd?.map((x) => x.toFixed(1)).join(', ') ?? '–'}` +
    ' (2 cores shared with other jobs: absolute times are inflated; compare within this run).', '');
  L.push('## Correctness (before any timing)', '');
  L.push('Each run first computes the logits of check.json\'s 64 ids at every position (64 × 50257) and compares them with ORT Web\'s' +
    ' (1 thread, Node, round 1); a run beyond max |diff| ≤ 1e-3 · max |logit| stops the benchmark. The last position is also compared with PyTorch\'s float32 logits.', '');
  L.push('| where | run | vs ORT Web: max abs diff | ÷ max abs logit | vs PyTorch (last position): max abs diff | load average (1 min) before |');
  L.push('| --- | --- | --- | --- | --- | --- |');
  for (const r of res.runs) {
    L.push(`| ${ENV_LABEL[r.env]} | ${r.label}, round ${r.round} | ${r.checkRef ? r.checkRef.maxAbsDiff.toExponential(2) : 'reference'} | ${r.checkRef ? r.checkRef.relDiff.toExponential(2) : '–'} | ${r.checkPytorch ? r.checkPytorch.maxAbsDiff.toExponential(2) : r.error ?? '–'} | ${r.loadAvgBefore?.toFixed(1) ?? '–'} |`);
  }
  for (const env of res.options.envs) {
    L.push('', `## ${ENV_LABEL[env]}: one forward pass (median of every timed run; best in brackets)`, '');
    L.push('| T | what HeadLab computes | HeadLab, 1 thread | ORT Web, 1 thread | HeadLab speed-up, 1 thread | HeadLab, 2 threads | ORT Web, 2 threads | HeadLab speed-up, 2 threads | HeadLab 2 threads ÷ 1 thread |');
    L.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    const S = (key, T, mode) => res.summary[`${env}|${key}|${T}|${mode}`];
    for (const T of res.options.seqs) {
      for (const mode of Object.keys(MODES)) {
        const h1 = S('headlab-1', T, mode), h2 = S('headlab-2', T, mode);
        if (!h1 && !h2) continue;
        const o1 = S('ort-1', T, 'all'), o2 = S('ort-2', T, 'all');
        const cell = (x) => (x ? `${fmt(x.medianMs)} (${fmt(x.minMs)})` : '–');
        const ratio = (o, h) => (o && h ? `${(o.medianMs / h.medianMs).toFixed(2)}× (${(o.minMs / h.minMs).toFixed(2)}×)` : '–');
        const ort = (o) => (mode === 'all' ? cell(o) : '〃');
        L.push(`| ${T} | ${MODES[mode]} | ${cell(h1)} | ${ort(o1)} | ${ratio(o1, h1)} | ${cell(h2)} | ${ort(o2)} | ${ratio(o2, h2)} | ${ratio(h1, h2)} |`);
      }
    }
  }
  L.push('', 'Speed-up = ORT Web\'s time ÷ HeadLab\'s at the same number of threads (medians; best times in brackets); above 1, HeadLab is faster.' +
    ' ORT\'s graph always computes the logits at every position, so the "logits at every position" rows are the like-for-like comparison;' +
    ' the other rows set HeadLab\'s default call (it skips the unembedding of the other positions) and its call with every head\'s attention' +
    ' against that same ORT run (〃). The last column is HeadLab\'s 1-thread time ÷ its 2-thread time.' +
    ' 2 threads: HeadLab `loadPretrained(…, { threads: 2 })` (the threaded module, a pool of one thread Worker beside the calling thread), ORT `env.wasm.numThreads = 2`.' +
    ' In Chromium, the 2-thread runs are on a cross-origin-isolated page (COOP/COEP), the 1-thread runs on one that is not; every run is on the page\'s main thread.', '');
  L.push('## Load and memory', '');
  L.push('| where | run | load (bytes in memory → ready to run) | peak RSS (Node process / Chromium renderer) | wasm memory | RSS before loading |');
  L.push('| --- | --- | --- | --- | --- | --- |');
  for (const env of res.options.envs) {
    for (const c of CONFIGS) {
      const rs = res.runs.filter((r) => r.env === env && r.key === c.key && r.status === 'ok');
      if (!rs.length) continue;
      L.push(`| ${ENV_LABEL[env]} | ${c.label} | ${fmt(median(rs.map((r) => r.loadMs)))} | ${mib(Math.max(...rs.map((r) => r.memory.rssPeakBytes ?? 0)))} | ${mib(Math.max(...rs.map((r) => r.memory.wasmBytes)))} | ${mib(rs[0].memory.rssBaselineBytes)} |`);
    }
  }
  L.push('', 'The files are read into memory before the load is timed; the peak RSS includes that copy (498 MB for each engine) beside the engine\'s own.' +
    ' HeadLab\'s wasm memory holds the float32 weights once (498 MB) plus activations; ORT\'s holds its session (weights and the graph\'s buffers).');
  const fails = res.runs.filter((r) => r.status !== 'ok');
  if (fails.length) {
    L.push('', '## Failures', '');
    for (const r of fails) L.push(`- ${ENV_LABEL[r.env]}, ${r.label}, round ${r.round}: ${r.error}`);
  }
  return L.join('\n');
}

function summarise(runs) {
  const groups = {};
  for (const run of runs.filter((x) => x.status === 'ok')) {
    for (const t of run.runs) (groups[`${run.env}|${run.key}|${t.T}|${t.mode}`] ??= []).push(...t.times);
  }
  return Object.fromEntries(Object.entries(groups).map(([k, ts]) => [k, { medianMs: median(ts), minMs: Math.min(...ts), n: ts.length }]));
}

/** Writes FILE.md again from FILE.json (runs written before the Chromium part are Node runs). */
function renderFile(jsonPath) {
  const res = JSON.parse(fs.readFileSync(jsonPath, 'utf8'));
  res.options.envs ??= ['node'];
  for (const r of res.runs) r.env ??= 'node';
  res.summary = summarise(res.runs);
  const md = render(res);
  fs.writeFileSync(jsonPath.replace(/\.json$/, '.md'), md + '\n');
  process.stdout.write(md + '\n');
}

export async function runPretrained(argv) {
  const a = parseArgs(argv);
  const known = ['part', 'env', 'rounds', 'reps', 'seqs', 'out', 'folder', 'render', 'help'];
  for (const k of Object.keys(a)) if (!known.includes(k)) throw new Error(`unknown option --${k} for the real-model part; known: ${known.map((x) => '--' + x).join(' ')}`);
  if (a.help) {
    console.log(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(0, 10).join('\n'));
    return null;
  }
  if (a.render) return renderFile(path.resolve(repo, a.render));
  const ENVS = { node: ['node'], browser: ['browser'], both: ['node', 'browser'], all: ['node', 'browser'] };
  if (!ENVS[a.env ?? 'both']) throw new Error(`--env must be node, browser or both, got "${a.env}"`);
  const o = {
    envs: ENVS[a.env ?? 'both'], rounds: Number(a.rounds ?? 2), reps: Number(a.reps ?? 3),
    seqs: String(a.seqs ?? '64,256').split(',').map(Number),
    folder: path.resolve(repo, a.folder ?? 'build/bench-gpt2'),
    out: path.resolve(repo, a.out ?? 'bench/results/pretrained'),
  };
  if (o.envs.includes('browser') && path.relative(repo, o.folder).startsWith('..')) throw new Error('--folder must be inside the repository for the Chromium runs (its files are served from there)');
  const why = ensureModel(o.folder);
  if (why) {
    console.error(`bench pretrained: skipped: ${why}`);
    return null;
  }
  const gitHead = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repo, encoding: 'utf8' }).stdout.trim();
  const cpuModel = /model name\s*:\s*(.*)/.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim();
  const res = {
    startedAt: new Date().toISOString(), complete: false, gitHead,
    machine: { cpuModel, cores: os.cpus().length, node: process.version, loadAvgStart: os.loadavg() },
    options: { ...o, folder: rel(o.folder), out: rel(o.out) }, versions: {}, model: {}, runs: [], summary: {},
  };
  const save = () => fs.writeFileSync(o.out + '.json', JSON.stringify(res, null, 1) + '\n');
  fs.mkdirSync(path.dirname(o.out), { recursive: true });
  // ORT's logits of check.json's ids (Node, 1 thread): every other run is checked against them.
  // Inside the model folder, so the Chromium pages can fetch it.
  const refFile = path.join(o.folder, 'ort-logits-64.f32');
  fs.rmSync(refFile, { force: true });
  const servers = {};
  if (o.envs.includes('browser')) {
    const { serve } = await import('../../tools/serve.mjs');
    servers.plain = await serve({ port: 0, root: repo, isolate: false });
    servers.isolated = await serve({ port: 0, root: repo, isolate: true });
  }
  const timeoutMs = 30 * 60 * 1000;
  const record = (r) => {
    res.runs.push(r);
    if (r.version) res.versions.ort = r.version;
    if (r.chromium) res.machine.chromium = r.chromium;
    if (r.info?.parameters) res.model.parameters = r.info.parameters;
    const check = r.checkRef ? `max |diff| vs ORT ${r.checkRef.maxAbsDiff.toExponential(2)}` : r.checkPytorch ? `vs PyTorch ${r.checkPytorch.maxAbsDiff.toExponential(2)}` : '';
    const times = (r.runs ?? []).map((x) => `T=${x.T} ${x.mode} ${fmt(x.medianMs)}`).join(', ');
    console.error(`bench pretrained: ${r.env} round ${r.round} ${r.label}: ${r.status}${r.error ? ': ' + r.error : ''}; load ${r.loadMs ? fmt(r.loadMs) : '–'}; ${check}; ${times}; load avg ${r.loadAvgBefore.toFixed(2)}`);
    res.summary = summarise(res.runs);
    save();
    if (r.status !== 'ok' && r.checkRef && !r.checkRef.pass) throw new Error(`stopped: ${r.label} (${r.env}): ${r.error}`);
  };
  const runOne = async (env, c, round, extra = {}) => {
    const loadAvgBefore = os.loadavg()[0];
    let r;
    if (env === 'node') {
      const args = ['--engine', c.engine, '--threads', String(c.threads), '--folder', o.folder, '--seqs', (extra.seqs ?? o.seqs).join(','), '--reps', String(o.reps)];
      if (!fs.existsSync(refFile)) args.push('--save-logits', refFile);
      else args.push('--ref', refFile);
      r = await runChild(path.join(here, 'engine.mjs'), args, { timeoutMs, maxOldSpaceMb: 8192, cwd: repo });
    } else {
      const url = (c.threads > 1 ? servers.isolated : servers.plain).url;
      r = await runBrowser(url,
        { engine: c.engine, threads: c.threads, folder: rel(o.folder), seqs: o.seqs, reps: o.reps, refPath: rel(refFile) }, timeoutMs);
      if (c.threads > 1 && r.isolated === false) r = { ...r, status: 'fails', error: 'the page was not cross-origin isolated' };
    }
    // A run that did not get the threads it was asked for is not reported as that many threads.
    if (r.status === 'ok' && r.threadsUsed !== c.threads) r = { ...r, status: 'fails', error: `ran on ${r.threadsUsed} thread(s), not ${c.threads}` };
    return { ...r, ...c, env, round, loadAvgBefore };
  };
  try {
    if (!o.envs.includes('node')) {
      // Chromium only: the reference logits still come from ORT in Node (untimed).
      const r = await runOne('node', CONFIGS[1], 0, { seqs: [] });
      if (r.status !== 'ok') throw new Error(`the reference run (ORT Web in Node) failed: ${r.error}`);
    }
    for (let round = 1; round <= o.rounds; round++) {
      for (const env of o.envs) {
        // ORT on 1 thread first in Node's round 1 (its logits are the reference), then rotate.
        const k = (round - 1) % CONFIGS.length;
        const order = env === 'node' && round === 1 ? [CONFIGS[1], CONFIGS[0], CONFIGS[2], CONFIGS[3]] : CONFIGS.slice(k).concat(CONFIGS.slice(0, k));
        for (const c of order) record(await runOne(env, c, round));
      }
    }
  } finally {
    for (const srv of Object.values(servers)) await srv.close();
  }
  res.complete = true;
  res.machine.loadAvgEnd = os.loadavg();
  res.finishedAt = new Date().toISOString();
  save();
  const md = render(res);
  fs.writeFileSync(o.out + '.md', md + '\n');
  process.stdout.write(md + '\n');
  console.error(`bench pretrained: wrote ${rel(o.out)}.json and ${rel(o.out)}.md`);
  return res;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runPretrained(process.argv.slice(2)).catch((e) => {
    console.error(`bench pretrained: ${e.message}`);
    process.exit(1);
  });
}
