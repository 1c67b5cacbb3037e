// The browser side of one engine run: the page served from the repository root
// exposes benchRun(args) and benchPeak() for bench/run.mjs to call.
import { measure } from '../lib/measure.mjs';
import { measurePeak } from '../lib/peak.mjs';

const root = new URL('/', location.href).href;

const ctx = {
  env: 'browser',
  root,
  readBytes: async (rel) => {
    const res = await fetch(root + rel);
    if (!res.ok) throw new Error(`GET ${rel}: ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  },
  loadScript: (rel) => new Promise((resolve, reject) => {
    const s = document.createElement('script');
    s.src = root + rel;
    s.onload = resolve;
    s.onerror = () => reject(new Error(`cannot load ${rel}`));
    document.head.append(s);
  }),
};

window.benchRun = async ({ engine, cell, reps, budgetMs, refPath, refSource, headlabModule, minRunMs }) => {
  if (headlabModule) ctx.headlabModule = headlabModule;
  let ref = null;
  if (refPath) {
    const bytes = await ctx.readBytes(refPath);
    ref = { data: refPath.endsWith('.f64') ? new Float64Array(bytes.buffer) : new Float32Array(bytes.buffer), source: refSource };
  }
  const result = await measure({ ctx, engine, cell, reps, budgetMs, ref, minRunMs });
  if (performance.memory) result.memory.jsHeapBytes = performance.memory.usedJSHeapSize;
  result.isolated = globalThis.crossOriginIsolated === true;
  return result;
};

window.benchPeak = () => measurePeak();
window.benchReady = true;
