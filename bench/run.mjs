// `npm run bench` — HeadLab against ONNX Runtime Web, TensorFlow.js (wasm) and
// plain JS, single-threaded, in Node and headless Chromium; and HeadLab's multi-core
// layer against ORT Web with as many threads. See bench/README.md.
//
//   npm run bench -- [--quick] [--env node|browser|isolated|both|all] [--shapes 256x4,512x8,768x12]
//                    [--seqs 64,256,1024,4096,16384] [--attn-shapes 512x8] [--attn-seqs 256,1024,4096]
//                    [--engines headlab,ort,tfjs,plain,headlab-parallel,headlab-workers,ort-2t] [--reps 5]
//                    [--budget 20] [--parallel-shapes 512x8] [--parallel-seqs 256,1024] [--out bench/results/latest]
//   npm run bench -- --part pretrained [--rounds 2] [--reps 3] [--seqs 64,256]   (the real-model part alone)
//   npm run bench -- --part families [--tiny] [--models smollm2,bert-base]   (SmolLM2- and bert-base-shaped models)
//   npm run bench -- --part patching [--reps 3]   (patchHeads over GPT-2 small's 144 heads, shared vs naive, quiet and busy)
//   npm run bench -- --busy [--env node|isolated|…] [--reps 9]   (the 2-thread table under a standard background load)
// --part attention|pretrained|all: all (the default without --quick or --busy) runs the attention grid, then
// the real-model part (bench/pretrained/run.mjs: a GPT-2-small-shaped model against ORT Web), then the
// families part (bench/pretrained/families.mjs: SmolLM2- and bert-base-shaped models against ORT Web and wllama).
// Environments: node; browser (a Chromium page that is not cross-origin isolated: ORT Web falls
// back to 1 thread, HeadLab's multi-core layer uses Workers); isolated (a Chromium page served
// with COOP/COEP: ORT Web's threads and HeadLab's pthreads run; only the multi-core cells, with
// the 1-thread HeadLab and ORT Web beside them). both = node + browser; all (default) = all three.
// --busy: a busy machine, measured every time rather than hoped away: bench/lib/busy-load.mjs (one
// process hashing and fsync'ing on one core) runs from the first engine run to the last, the runs
// do not wait for the machine to be quiet, and the defaults become the 2-thread table only (Node,
// 512x8, T = 256 and 1024, HeadLab and ORT Web on 1 and 2 threads, 9 runs each) written to
// bench/results/parallel-busy.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { flopsOf, makeProblem, cellKey } from './lib/problem.mjs';
import { forward } from './engines/plain.mjs';
import { render } from './lib/report.mjs';
import { rendererPeakRss } from './lib/renderer-rss.mjs';
import { startBusyLoad } from './lib/busy-load.mjs';
import { CHROMIUM, CHROMIUM_ARGS, parseArgs, runChild } from './lib/child.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const rel = (p) => path.relative(repo, p);
const KNOWN_ENGINES = ['headlab', 'headlab-scalar', 'ort', 'ort-plain', 'tfjs', 'plain', 'headlab-parallel', 'headlab-workers', 'ort-2t'];
// Engines on 2 threads: run only on the --parallel-shapes × --parallel-seqs cells (with projections).
const MULTI_CORE = ['headlab-parallel', 'headlab-workers', 'ort-2t'];
// The isolated page runs the multi-core cells only, with these engines (the 1-thread ones as the
// baseline of each one's parallel efficiency).
const ISOLATED_ENGINES = ['headlab', 'ort', ...MULTI_CORE];

const list = (s, f = (x) => x) => (s === 'none' || s === '' ? [] : String(s).split(',').map((x) => f(x.trim())));
function shape(s) {
  const m = /^(\d+)x(\d+)$/.exec(s);
  if (!m) throw new Error(`a shape is DxH, e.g. 512x8; got "${s}"`);
  return { d: Number(m[1]), h: Number(m[2]) };
}
function positiveInt(name, v) {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer, got "${v}"`);
  return n;
}

function options() {
  const a = parseArgs(process.argv.slice(2));
  const known = ['quick', 'env', 'shapes', 'seqs', 'attn-shapes', 'attn-seqs', 'engines', 'reps', 'budget', 'out', 'f64-max-t', 'quiet-wait', 'parallel-shapes', 'parallel-seqs', 'busy', 'help'];
  for (const k of Object.keys(a)) if (!known.includes(k)) throw new Error(`unknown option --${k}; known: ${known.map((x) => '--' + x).join(' ')}`);
  if (a.help) {
    console.log(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(0, 11).join('\n'));
    process.exit(0);
  }
  const quick = Boolean(a.quick);
  const busy = Boolean(a.busy);
  if (busy) {
    // The multi-core table alone: both engines on 1 and 2 threads, on the cells that have 2 threads.
    a.env ??= 'node';
    a.engines ??= 'headlab,ort,headlab-parallel,ort-2t';
    a.shapes ??= a['parallel-shapes'] ?? '512x8';
    a.seqs ??= a['parallel-seqs'] ?? '256,1024';
    a['attn-seqs'] ??= 'none';
    a.reps ??= 9;
    a.out ??= 'bench/results/parallel-busy';
  }
  const env = a.env ?? 'all';
  const ENVS = { node: ['node'], browser: ['browser'], isolated: ['isolated'], both: ['node', 'browser'], all: ['node', 'browser', 'isolated'] };
  if (!ENVS[env]) throw new Error(`--env must be node, browser, isolated, both or all, got "${env}"`);
  const scalarBuilt = ['mjs', 'wasm'].every((x) => fs.existsSync(path.join(repo, `web/lib/gen/headlab_core_scalar.${x}`)));
  const defaultEngines = ['headlab', ...(scalarBuilt ? ['headlab-scalar'] : []), 'ort', 'tfjs', 'plain', ...MULTI_CORE];
  const engines = a.engines ? list(a.engines) : defaultEngines;
  for (const e of engines) if (!KNOWN_ENGINES.includes(e)) throw new Error(`unknown engine "${e}"; known: ${KNOWN_ENGINES.join(', ')}`);
  if (!engines.includes('headlab')) engines.unshift('headlab');
  const o = {
    quick,
    busy,
    envs: ENVS[env],
    shapes: list(a.shapes ?? (quick ? '256x4,512x8' : '256x4,512x8,768x12'), shape),
    seqs: list(a.seqs ?? (quick ? '64,256' : '64,256,1024,4096,16384'), (x) => positiveInt('seqs', x)),
    attnShapes: list(a['attn-shapes'] ?? '512x8', shape),
    attnSeqs: list(a['attn-seqs'] ?? (quick ? '256' : '256,1024,4096'), (x) => positiveInt('attn-seqs', x)),
    engines,
    scalarBuilt,
    parallelShapes: list(a['parallel-shapes'] ?? '512x8', shape),
    parallelSeqs: list(a['parallel-seqs'] ?? '256,1024', (x) => positiveInt('parallel-seqs', x)),
    reps: positiveInt('reps', a.reps ?? 5),
    budgetS: Number(a.budget ?? 20),
    minRunMs: quick ? 300 : 1000,
    quietWaitS: positiveInt('quiet-wait', a['quiet-wait'] ?? 2),
    f64MaxT: positiveInt('f64-max-t', a['f64-max-t'] ?? 256),
    out: path.resolve(repo, a.out ?? (quick ? 'bench/results/quick' : 'bench/results/latest')),
  };
  if (o.reps < 1) throw new Error('--reps must be at least 1');
  if (!(o.budgetS > 0)) throw new Error(`--budget must be a positive number of seconds, got "${a.budget}"`);
  return o;
}

function machineInfo() {
  const cpuinfo = fs.readFileSync('/proc/cpuinfo', 'utf8');
  const model = /model name\s*:\s*(.*)/.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model;
  return {
    cpuModel: model, cores: os.cpus().length, memGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version, os: `${os.type()} ${os.release()}`, loadAvgStart: os.loadavg(),
  };
}

function fileSize(p) {
  const buf = fs.readFileSync(p);
  return { bytes: buf.length, gzipBytes: zlib.gzipSync(buf, { level: 9 }).length };
}

function gitInfo() {
  const run = (args) => new Promise((resolve) => {
    const p = spawn('git', args, { cwd: repo });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.on('close', () => resolve(out.trim()));
    p.on('error', () => resolve(''));
  });
  return Promise.all([run(['rev-parse', '--short', 'HEAD']), run(['status', '--porcelain', '--', 'cpp', 'CMakeLists.txt'])])
    .then(([head, status]) => ({ gitHead: head, dirty: status.length > 0 }));
}

// ---- other load on the machine ----

function cpuTimes() {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3] + (f[4] || 0);
  return { idle, total: f.reduce((a, b) => a + b, 0) };
}

/** Cores kept busy by other processes over `ms` (this process is idle meanwhile). */
async function busyCores(ms = 500) {
  const a = cpuTimes();
  await new Promise((r) => setTimeout(r, ms));
  const b = cpuTimes();
  return ((b.total - a.total - (b.idle - a.idle)) / (b.total - a.total || 1)) * os.cpus().length;
}

/**
 * Waits (up to maxWaitMs) until other processes keep less than `threshold` cores busy
 * (default: less than one, since a 1-thread run needs one core to itself). Returns the busy cores seen last.
 */
async function waitForQuiet(maxWaitMs, threshold = 0.9) {
  const t0 = Date.now();
  let busy = await busyCores();
  while (busy > threshold && Date.now() - t0 < maxWaitMs) busy = await busyCores(2000);
  return busy;
}

// A 2-thread run needs both cores of this machine: anything else running halves it.
const MULTI_CORE_QUIET = 0.25;

// ---- Node runs: one child process each ----

const runNodeEngine = (args, timeoutMs) =>
  runChild(path.join(here, 'run-engine.mjs'), args, { timeoutMs, maxOldSpaceMb: 16384, cwd: repo });

// ---- Chromium runs: a fresh browser per run ----

let chromiumVersion = null;

async function runBrowser(serverUrl, fnName, args, timeoutMs) {
  const { chromium } = await import('playwright-core');
  const server = await chromium.launchServer({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  const pid = server.process().pid;
  let browser;
  let timer;
  try {
    browser = await chromium.connect(server.wsEndpoint());
    chromiumVersion ??= browser.version();
    const page = await browser.newPage();
    const consoleErrors = [];
    page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
    page.on('pageerror', (e) => consoleErrors.push(String(e.message)));
    const crashed = new Promise((resolve) => page.on('crash', () => resolve({ status: 'fails', error: 'the renderer crashed (out of memory?)' })));
    await page.goto(serverUrl + 'bench/browser/index.html');
    await page.waitForFunction(() => window.benchReady === true, null, { timeout: 30000 });
    // A freshly launched Chromium spends its first second or so starting services
    // on the other core(s); let that settle before timing.
    await new Promise((r) => setTimeout(r, 1500));
    const timeout = new Promise((resolve) => {
      timer = setTimeout(() => resolve({ status: 'fails', error: `no answer after ${(timeoutMs / 1000).toFixed(0)} s (timeout)` }), timeoutMs);
    });
    const work = page.evaluate(([fn, a]) => window[fn](a), [fnName, args])
      .catch((e) => ({ status: 'fails', error: String(e.message).split('\n')[0].slice(0, 300) }));
    const result = await Promise.race([work, crashed, timeout]);
    if (result.status === 'fails' && consoleErrors.length) result.error += ` (console: ${consoleErrors.slice(-2).join(' | ').slice(0, 300)})`;
    if (result.memory) result.memory.rssPeakBytes = rendererPeakRss(pid);
    return result;
  } catch (e) {
    return { status: 'fails', error: String(e.message).split('\n')[0].slice(0, 300) };
  } finally {
    clearTimeout(timer);
    await browser?.close().catch(() => {});
    await server.close().catch(() => {});
  }
}

// ---- the grid ----

function cellsOf(o) {
  const cells = [];
  for (const T of o.seqs) for (const { d, h } of o.shapes) cells.push({ mode: 'mha', d, h, T });
  for (const T of o.attnSeqs) for (const { d, h } of o.attnShapes) cells.push({ mode: 'attn', d, h, T });
  return cells.sort((a, b) => (a.mode === b.mode ? a.T - b.T || a.d - b.d : a.mode === 'mha' ? -1 : 1));
}

const fmtS = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(2)} ms`);

async function main() {
  const o = options();
  const t0 = Date.now();
  const core = path.join(repo, 'web/lib/gen/headlab_core.wasm');
  if (!fs.existsSync(core)) throw new Error('web/lib/gen/headlab_core.wasm is missing: run `npm run build` first');
  const cacheDir = path.join(here, 'cache');
  fs.rmSync(cacheDir, { recursive: true, force: true });
  fs.mkdirSync(cacheDir, { recursive: true });
  // Every HeadLab run loads this copy of web/lib, so a rebuild during the run
  // (others work in the tree) cannot mix two builds in one table.
  const snapshot = path.join(cacheDir, 'web-lib');
  fs.cpSync(path.join(repo, 'web/lib'), snapshot, { recursive: true });
  const headlabModule = rel(path.join(snapshot, 'headlab.js'));
  fs.mkdirSync(path.dirname(o.out), { recursive: true });

  const wasmBuf = fs.readFileSync(path.join(snapshot, 'gen/headlab_core.wasm'));
  const res = {
    startedAt: new Date().toISOString(),
    complete: false,
    machine: machineInfo(),
    options: { ...o, out: rel(o.out) },
    build: { wasmSha256: crypto.createHash('sha256').update(wasmBuf).digest('hex'), wasmMtime: fs.statSync(core).mtime.toISOString(),
      note: 'web/lib was copied at the start; every HeadLab run used that copy', ...(await gitInfo()) },
    sizes: {
      'headlab_core.mjs': fileSize(path.join(snapshot, 'gen/headlab_core.mjs')),
      'headlab_core.wasm': fileSize(path.join(snapshot, 'gen/headlab_core.wasm')),
      ortWasm: { file: 'ort-wasm-simd-threaded.wasm', ...fileSize(path.join(repo, 'node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm')) },
      tfWasm: { file: 'tfjs-backend-wasm-simd.wasm', ...fileSize(path.join(repo, 'node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm')) },
    },
    peak: {},
    versions: {},
    cells: [],
    flops: {},
    runs: [],
    baselines: {},
  };
  const cells = cellsOf(o);
  res.cells = cells;
  for (const c of cells) res.flops[cellKey(c)] = flopsOf(c);
  const save = () => {
    fs.writeFileSync(o.out + '.json', JSON.stringify(res, null, 1) + '\n');
  };

  // One server per kind of page: not isolated, and isolated (COOP/COEP, so SharedArrayBuffer and threads).
  const servers = {};
  for (const env of o.envs.filter((e) => e !== 'node')) {
    const { serve } = await import('../tools/serve.mjs');
    servers[env] = await serve({ port: 0, root: repo, isolate: env === 'isolated' });
  }
  const budgetMs = o.budgetS * 1000;
  const hardTimeoutMs = 60000 + (o.reps + 2) * budgetMs * 1.5;

  console.error(`bench: ${cells.length} cells × ${o.engines.length} engines × ${o.envs.join('+')}; budget ${o.budgetS} s per repetition`);
  if (!o.scalarBuilt) console.error('bench: web/lib/gen/headlab_core_scalar.{mjs,wasm} not built: no headlab-scalar engine');

  // The SIMD peak probe, in each environment.
  for (const env of o.envs) {
    const p = env === 'node' ? await runNodeEngine(['--peak'], 60000) : await runBrowser(servers[env].url, 'benchPeak', {}, 60000);
    res.peak[env] = p;
    console.error(`bench: WASM SIMD peak (${env}): ${p.gflops ? p.gflops.toFixed(1) + ' GFLOP/s' : p.error}`);
  }
  if (chromiumVersion) res.machine.chromium = chromiumVersion;

  // Busy mode: the background load runs from here to the last engine run.
  const load = o.busy ? startBusyLoad() : null;
  if (load) console.error(`bench: busy mode: background load started (pid ${load.pid}; bench/lib/busy-load.mjs)`);
  const last = new Map();          // env|engine|mode|d|h -> { T, ms } of the last timed run, for predictions
  const unavailable = new Map();   // env|engine -> why (engine cannot load at all)
  const total = cells.length * o.engines.length * o.envs.length;
  let done = 0;

  for (const [ci, cell] of cells.entries()) {
    const key = cellKey(cell);
    const flops = flopsOf(cell);
    let ref = null;  // { path (repo-relative), source }
    const refFile = (ext) => path.join(cacheDir, `${key}.${ext}`);
    if (cell.T <= o.f64MaxT) {
      const out = forward(makeProblem(cell), Float64Array);
      fs.writeFileSync(refFile('f64'), new Uint8Array(out.buffer));
      ref = { path: refFile('f64'), source: 'float64 JS' };
    }

    // HeadLab in Node first when its output is to be the reference; then the rest, rotated.
    let pairs = [];
    for (const env of o.envs) for (const engine of o.engines) pairs.push({ env, engine });
    let head = [];
    if (!ref && o.envs.includes('node')) {
      head = pairs.filter((p) => p.env === 'node' && p.engine === 'headlab');
      pairs = pairs.filter((p) => !(p.env === 'node' && p.engine === 'headlab'));
    } else if (!ref) {
      head = [{ env: 'node', engine: 'headlab', untimed: true }];  // reference only
    }
    const r = ci % pairs.length;
    const order = [...head, ...pairs.slice(r), ...pairs.slice(0, r)];

    for (const { env, engine, untimed } of order) {
      const famKey = `${env}|${engine}|${cell.mode}|${cell.d}|${cell.h}`;
      const base = { engine, env, cell, flops };
      let result;
      const prev = last.get(famKey);
      const predictedMs = prev ? prev.ms * flops / flopsOf({ ...cell, T: prev.T }) : 0;
      const multiCoreCell = cell.mode === 'mha' && o.parallelSeqs.includes(cell.T) && o.parallelShapes.some((x) => x.d === cell.d && x.h === cell.h);
      if (MULTI_CORE.includes(engine) && !multiCoreCell) {
        result = { ...base, status: 'skipped', error: 'the 2-thread engines run on the --parallel-shapes × --parallel-seqs cells only' };
      } else if (env === 'isolated' && (!multiCoreCell || !ISOLATED_ENGINES.includes(engine))) {
        result = { ...base, status: 'skipped', error: 'the isolated page runs the multi-core cells only (HeadLab, ORT Web, and their 2-thread runs)' };
      } else if (unavailable.has(`${env}|${engine}`)) {
        result = { ...base, status: 'skipped', error: unavailable.get(`${env}|${engine}`) };
      } else if (prev && (prev.tooSlow || predictedMs > budgetMs)) {
        result = { ...base, status: 'too-slow', predicted: true, error: prev.tooSlow && predictedMs <= budgetMs
          ? 'too slow at a smaller T' : `predicted ${(predictedMs / 1000).toFixed(0)} s per run from T=${prev.T} (budget ${o.budgetS} s)` };
      } else {
        const multi = MULTI_CORE.includes(engine);
        // Busy mode: the machine is busy on purpose; note how busy, wait for nothing.
        const busy = o.busy ? await busyCores() : await waitForQuiet(o.quietWaitS * 1000 * (multi ? 5 : 1), multi ? MULTI_CORE_QUIET : 0.9);
        const saveRef = !ref && env === 'node';
        const reps = untimed ? 0 : o.reps;
        const timeoutMs = untimed ? 60000 + budgetMs * 3 : hardTimeoutMs;
        if (env === 'node') {
          const args = ['--engine', engine, '--mode', cell.mode, '--d', cell.d, '--h', cell.h, '--T', cell.T,
            '--reps', reps, '--budget', o.budgetS, '--headlab-module', headlabModule, '--min-run-ms', o.minRunMs].map(String);
          if (ref) args.push('--ref', ref.path, '--ref-source', ref.source);
          if (saveRef) args.push('--save-output', refFile('f32'));
          result = { ...base, ...(await runNodeEngine(args, timeoutMs)) };
        } else {
          result = { ...base, ...(await runBrowser(servers[env].url, 'benchRun', {
            engine, cell, reps, budgetMs, refPath: ref ? rel(ref.path) : null, refSource: ref?.source, headlabModule, minRunMs: o.minRunMs,
          }, timeoutMs)), env };
          if (env === 'isolated' && result.isolated === false) result = { ...result, status: 'fails', error: 'the page was not cross-origin isolated' };
        }
        result.busyCoresBefore = Number(busy.toFixed(2));
        result.busyLimit = o.busy ? null : multi ? MULTI_CORE_QUIET : 0.9;
        result.loadAvg = os.loadavg()[0];
        if (result.savedOutput) ref = { path: result.savedOutput, source: `${engine} (${env})` };
        if (result.status === 'skipped') unavailable.set(`${env}|${engine}`, result.error);
        // Predict from the best time: other load on the machine only ever adds time.
        if (result.status === 'ok') last.set(famKey, { T: cell.T, ms: result.minMs });
        if (result.status === 'too-slow') last.set(famKey, { T: cell.T, ms: result.firstMs, tooSlow: true });
        if (result.version) res.versions[engine] = result.version;
        if (env === 'node' && result.memory?.rssBaselineBytes) res.baselines.nodeRss = result.memory.rssBaselineBytes;
      }
      if (untimed) {
        result.untimed = true;
        res.refRuns = [...(res.refRuns ?? []), result];
      } else {
        res.runs.push(result);
      }
      done += untimed ? 0 : 1;
      const check = result.check?.reference ? ` diff ${result.check.relDiff.toExponential(1)}` : '';
      const what = result.status === 'ok' ? `${fmtS(result.medianMs)} (${result.gflops.toFixed(2)} GFLOP/s)${check}` : `${result.status}: ${result.error ?? ''}`;
      const busyNote = result.busyLimit !== null && result.busyCoresBefore > (result.busyLimit ?? 0.9) ? ` [other load: ${result.busyCoresBefore} cores busy]` : '';
      console.error(`[${done}/${total}] ${env.padEnd(7)} ${engine.padEnd(14)} ${cell.mode} ${cell.d}x${cell.h} T=${cell.T}: ${what}${untimed ? ' (reference run)' : ''}${busyNote}`);
    }
    save();
  }

  if (load) {
    res.busyLoad = await load.stop();
    console.error(`bench: busy mode: background load stopped; it used ${res.busyLoad.cores?.toFixed(2) ?? '?'} of a core over ${res.busyLoad.seconds.toFixed(0)} s`);
  }
  fs.rmSync(cacheDir, { recursive: true, force: true });
  for (const s of Object.values(servers)) await s.close();
  res.complete = true;
  res.finishedAt = new Date().toISOString();
  res.elapsedS = (Date.now() - t0) / 1000;
  res.machine.loadAvgEnd = os.loadavg();
  save();
  const md = render(res);
  fs.writeFileSync(o.out + '.md', md + '\n');
  process.stdout.write(md + '\n');
  console.error(`bench: done in ${(res.elapsedS / 60).toFixed(1)} min; wrote ${rel(o.out)}.json and ${rel(o.out)}.md`);
}

/** Splits `--part X` off the arguments: which parts to run. */
function parts(argv) {
  const i = argv.findIndex((x) => x === '--part' || x.startsWith('--part='));
  if (i < 0) return { part: argv.includes('--quick') || argv.includes('--busy') ? 'attention' : 'all', rest: argv };
  const inline = argv[i].includes('=');
  const part = inline ? argv[i].split('=')[1] : argv[i + 1];
  if (!['attention', 'pretrained', 'families', 'patching', 'all'].includes(part)) throw new Error(`--part must be attention, pretrained, families, patching or all, got "${part}"`);
  return { part, rest: argv.filter((_, j) => j !== i && (inline || j !== i + 1)) };
}

async function runParts() {
  const { part, rest } = parts(process.argv.slice(2));
  if (part === 'attention' || part === 'all') {
    process.argv = [...process.argv.slice(0, 2), ...rest];
    await main();
  }
  if (part === 'pretrained' || part === 'all') {
    const { runPretrained } = await import('./pretrained/run.mjs');
    await runPretrained(part === 'pretrained' ? rest : []);
  }
  if (part === 'families' || part === 'all') {
    const { runFamilies } = await import('./pretrained/families.mjs');
    await runFamilies(part === 'families' ? rest : []);
  }
  if (part === 'patching' || part === 'all') {
    const { runPatching } = await import('./pretrained/patching.mjs');
    await runPatching(part === 'patching' ? rest : []);
  }
}

runParts().catch((e) => {
  console.error(`bench: ${e.message}`);
  process.exit(1);
});
