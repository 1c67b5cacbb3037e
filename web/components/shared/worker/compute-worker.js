// The compute Worker: runs HeadLab calls that may take longer than a frame
// (a request's type is the method, its payload the options; see worker-rpc.js).
import { getLab } from '../lab/lab.js';
import { hostSession } from './session-host.js';

const ALLOWED = new Set(['multiHeadAttention', 'scalingExperiment', 'parameterCount', 'info', 'headsTrial']);

function transferables(value, out = []) {
  if (ArrayBuffer.isView(value)) out.push(value.buffer);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) transferables(v, out);
  return out;
}

// The module loads with the first call, so the Worker answers "ready" at once.
hostSession(async () => ({
  async handle(method, args) {
    if (!ALLOWED.has(method)) throw new TypeError(`unknown method ${method}`);
    const lab = await getLab();
    if (typeof lab[method] !== 'function') throw new TypeError(`this HeadLab build has no ${method}()`);
    const result = await lab[method](args);  // headsTrial returns a promise
    return { result, transfer: transferables(result) };
  },
}));
