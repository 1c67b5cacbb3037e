// The compute Worker: runs HeadLab calls that may take longer than a frame
// ({ id, method, args } in; { id, result } or { id, error } out).
import { getLab } from './lab.js';

const ALLOWED = new Set(['multiHeadAttention', 'scalingExperiment', 'parameterCount', 'info', 'headsTrial']);

function transferables(value, out = []) {
  if (ArrayBuffer.isView(value)) out.push(value.buffer);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) transferables(v, out);
  return out;
}

self.addEventListener('message', async (event) => {
  const { id, method, args } = event.data ?? {};
  try {
    if (!ALLOWED.has(method)) throw new TypeError(`unknown method ${method}`);
    const lab = await getLab();
    if (typeof lab[method] !== 'function') throw new TypeError(`this HeadLab build has no ${method}()`);
    const result = await lab[method](args);  // headsTrial returns a promise
    self.postMessage({ id, result }, transferables(result));
  } catch (e) {
    self.postMessage({ id, error: { name: e?.name ?? 'Error', message: e?.message ?? String(e) } });
  }
});
self.postMessage({ ready: true });
