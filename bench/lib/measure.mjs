// One engine run on one cell: load, set up, check the output against the
// reference, then warm up and time. Shared by bench/run-engine.mjs (Node, one
// process per run) and bench/browser/page.mjs (Chromium, one fresh browser per run).

import { compare, flopsOf, makeProblem, median } from './problem.mjs';
import { trackWasmMemory, wasmMemoryBytes } from './wasm-memory.mjs';

export const ENGINES = {
  headlab: async (ctx) => (await import('../engines/headlab.mjs')).createEngine(ctx, { flavour: 'simd' }),
  'headlab-scalar': async (ctx) => (await import('../engines/headlab.mjs')).createEngine(ctx, { flavour: 'scalar' }),
  ort: async (ctx) => (await import('../engines/ort.mjs')).createEngine(ctx, { graph: 'auto' }),
  // createParallelLayer's default mechanism (pthreads in Node and on isolated pages, Workers elsewhere).
  'headlab-parallel': async (ctx) => (await import('../engines/headlab.mjs')).createEngine(ctx, { flavour: 'simd', threads: 2 }),
  'headlab-workers': async (ctx) => (await import('../engines/headlab.mjs')).createEngine(ctx, { flavour: 'simd', threads: 2, mechanism: 'workers' }),
  'ort-2t': async (ctx) => (await import('../engines/ort.mjs')).createEngine(ctx, { graph: 'auto', threads: 2 }),
  'ort-plain': async (ctx) => (await import('../engines/ort.mjs')).createEngine(ctx, { graph: 'plain' }),
  tfjs: async (ctx) => (await import('../engines/tfjs.mjs')).createEngine(ctx),
  plain: async (ctx) => (await import('../engines/plain.mjs')).createEngine(ctx),
};

const errorText = (e) => String(e?.message ?? e).split('\n')[0].slice(0, 300);

/**
 * @param {object} a
 * @param {object} a.ctx        environment helpers (env, root, readBytes, loadScript)
 * @param {string} a.engine     a key of ENGINES
 * @param {object} a.cell       { mode, d, h, T }
 * @param {number} a.reps       minimum timed repetitions (more for fast cells)
 * @param {number} a.budgetMs   a first run slower than this is not repeated: status 'too-slow'
 * @param {{data: ArrayLike<number>, source: string}|null} a.ref  the reference output
 * ctx.headlabModule (optional) is the repository path of headlab.js to load.
 * @param {boolean} [a.keepOutput]  return the output (to become the reference)
 * @param {number} [a.minRunMs]  fast cells warm up for at least this long, then time at least this long
 */
export async function measure({ ctx, engine, cell, reps = 5, budgetMs = 20000, ref = null, keepOutput = false, minRunMs = 1000 }) {
  trackWasmMemory();
  const flops = flopsOf(cell);
  const result = { engine, env: ctx.env, cell, flops, status: 'fails', notes: [] };
  let runner = null;
  try {
    let t0 = performance.now();
    const eng = await ENGINES[engine](ctx);
    result.loadMs = performance.now() - t0;
    result.version = eng.version;

    const problem = makeProblem(cell);
    t0 = performance.now();
    runner = await eng.setup(problem);
    result.setupMs = performance.now() - t0;
    if (eng.mechanism) result.mechanism = eng.mechanism;  // the multi-core layer's

    t0 = performance.now();
    let output = await runner.run();
    result.firstMs = performance.now() - t0;
    if (runner.retimeFirst) {  // the engine changed course during that call (ORT's fallback)
      runner.retimeFirst = false;
      t0 = performance.now();
      output = await runner.run();
      result.firstMs = performance.now() - t0;
    }
    result.notes = eng.notes;
    if (ref) {
      const c = compare(output, ref.data);
      result.check = { reference: ref.source, ok: c.ok, maxAbsDiff: c.maxAbsDiff, relDiff: c.relDiff };
      if (!c.ok) {
        result.status = 'mismatch';
        result.error = `output differs from ${ref.source}: max |diff| ${c.maxAbsDiff.toExponential(2)} (${c.relDiff.toExponential(2)} of max |ref|)${c.why ? ', ' + c.why : ''}`;
        return finish(result, eng, runner);
      }
    } else {
      result.check = { reference: null, ok: null };
    }
    if (keepOutput) result.output = output;
    if (reps === 0) { result.status = 'ok-untimed'; return finish(result, eng, runner); }
    if (result.firstMs > budgetMs) {
      result.status = 'too-slow';
      result.error = `one run took ${(result.firstMs / 1e3).toFixed(1)} s (budget ${(budgetMs / 1e3).toFixed(0)} s)`;
      return finish(result, eng, runner);
    }

    // Warm-up: at least 2 runs and minRunMs (JIT tiers, caches, the heap's first growth);
    // a first run of over 2 s has warmed up already, bar one more run up to 5 s.
    const first = result.firstMs;
    let warmups = 0;
    if (first > 2000) {
      if (first <= 5000) { await runner.run(); warmups = 1; }
    } else {
      const w0 = performance.now();
      while (warmups < 50 && (warmups < 2 || performance.now() - w0 < minRunMs)) { await runner.run(); warmups++; }
    }
    const n = Math.min(25, Math.max(reps, Math.ceil(minRunMs / first)));
    const times = [];
    for (let i = 0; i < n; i++) {
      t0 = performance.now();
      await runner.run();
      times.push(performance.now() - t0);
    }
    result.warmups = warmups;  // runs besides the first
    result.times = times;
    result.medianMs = median(times);
    result.minMs = Math.min(...times);
    result.gflops = flops / (result.medianMs / 1e3) / 1e9;
    result.status = 'ok';
    return finish(result, eng, runner);
  } catch (e) {
    result.status = e?.skip ? 'skipped' : 'fails';
    result.error = errorText(e);
    return finish(result, null);
  } finally {
    try { await runner?.dispose?.(); } catch { /* the numbers are already taken */ }
  }
}

function finish(result, eng, runner) {
  if (runner?.variant) result.variant = runner.variant;
  if (runner?.fusedError) result.fusedError = runner.fusedError;
  const own = eng?.memory?.();
  result.memory = { wasmBytes: own?.wasmBytes ?? wasmMemoryBytes() };
  return result;
}
