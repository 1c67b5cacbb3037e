// The one message layer between the page and HeadLab's Workers (the compute
// Worker, the trainer's and the language model's):
//   page → Worker   { id, type, payload }
//   Worker → page   { id, result } or { id, error: { name, message }, fatal? } per request;
//                   { ready: true } once the Worker can answer, or { failed } if it cannot;
//                   { event, … } for what a session reports unasked (snapshots, pauses)
// A reply marked fatal reports an abort of the WebAssembly module (e.g. out of memory),
// which leaves that Worker's module unusable. session-host.js is the Worker side.

import { BASE_URL, FROM_FILE } from '../lab/assets.js';
import { startWorker, workerPlanHere, workerReason } from '../../../lib/api/worker-start.js';
import { WORKER_FILES } from './worker-files.js';
import { fallbackReason } from './fallback-reasons.js';
import { cspCause, refusals } from '../lab/refusals.js';

import { rebuildError, errorReply } from './worker-errors.js';

export { rebuildError, errorReply };

/**
 * Why the Worker script `file` did not start, when the page's Content-Security-Policy refused it
 * (a recorded securitypolicyviolation naming its URL): fallbackReason('csp-refused', …), else null.
 * Waits a moment first: the refusal's event is queued after the Worker's error.
 */
export async function refusedWorker(file) {
  await new Promise((resolve) => setTimeout(resolve, 50));
  const known = WORKER_FILES[file];
  const url = known ? known.url().href : new URL(file, BASE_URL).href;
  const cause = cspCause('', url, refusals().filter((r) => r.blocked.split(/[?#]/)[0] === url), globalThis.location?.origin ?? null);
  return cause ? fallbackReason('csp-refused', cause) : null;
}

/**
 * Starts the module Worker `file` (next to the bundle): resolves { worker, how } (how: 'direct',
 * or 'blob' when the bundle is on another origin than the page and a same-origin blob: bootstrap
 * imports the Worker script) or, where none can start, { refusal }: why, as { code, params,
 * reason } (e.g. code 'csp': the page's Content-Security-Policy refuses blob: Workers), which
 * fallback-reasons.js puts in the element's language. See lib/api/worker-start.js.
 */
export async function openWorker(file, name) {
  if (FROM_FILE) return { refusal: workerReason('file-url') };
  const known = WORKER_FILES[file];
  let url;
  try {
    url = known ? known.url() : new URL(file, BASE_URL);
    // Same origin: the literal `new Worker(new URL(…))` of worker-files.js, which bundlers see.
    if (known && typeof Worker !== 'undefined' && workerPlanHere(url.href).how === 'direct') return { worker: known.start(), how: 'direct' };
  } catch (e) {
    return { refusal: workerReason('constructor', { message: String(e?.message ?? e) }) };
  }
  const r = await startWorker(url.href, { type: 'module', name });
  if (r.worker) return { worker: r.worker, how: r.how };
  const { code, params, reason } = r;
  return { refusal: { code, params, reason } };
}

/**
 * A client's mode ('worker' | 'main' | null) as the elements' read-only `runsIn` says it:
 * 'worker', 'main-thread' or null (not known yet).
 */
export function runsIn(mode) {
  return mode === 'worker' ? 'worker' : mode === 'main' ? 'main-thread' : null;
}

/** Requests sent and not yet answered: ids out, replies matched back to their promises. */
export class Pending {
  constructor() {
    this._nextId = 1;
    this._jobs = new Map();
  }

  /** A job { id, type, payload, transfer, resolve, reject } for a new request. */
  job(type, payload, transfer, resolve, reject) {
    return { id: this._nextId++, type, payload, transfer, resolve, reject };
  }

  /** Posts `job` to `worker` and waits for its reply; rejects it at once if postMessage throws. */
  post(worker, job) {
    this._jobs.set(job.id, job);
    try {
      worker.postMessage({ id: job.id, type: job.type, payload: job.payload }, job.transfer ?? []);
    } catch (e) {
      this._jobs.delete(job.id);
      job.reject(e);
      return false;
    }
    return true;
  }

  /** Whether a request of one of `types` waits for its reply. */
  waitsFor(types) {
    for (const job of this._jobs.values()) if (types.includes(job.type)) return true;
    return false;
  }

  /** Settles the request a reply answers; false when the message answers none. */
  settle(data) {
    const job = this._jobs.get(data.id);
    if (!job) return false;
    this._jobs.delete(data.id);
    if (data.error) job.reject(rebuildError(data.error));
    else job.resolve(data.result);
    return true;
  }

  /** Takes every waiting job out (to run elsewhere or to fail). */
  drain() {
    const jobs = [...this._jobs.values()];
    this._jobs.clear();
    return jobs;
  }

  failAll(error) {
    for (const job of this.drain()) job.reject(error);
  }
}
