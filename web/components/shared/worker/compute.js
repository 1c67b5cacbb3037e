// Runs HeadLab calls in a Web Worker so that long ones never freeze the page.
// When the bundle is on another origin than the page, the Worker starts through a
// same-origin blob: bootstrap (lib/api/worker-start.js). Falls back to the main
// thread (yielding to the event loop first) where no Worker can start: pages
// opened from file://, or a page whose Content-Security-Policy refuses the
// bootstrap. Messages go through worker-rpc.js, like the trainer's.

import { getLab } from '../lab/lab.js';
import { openWorker, Pending, refusedWorker, runsIn } from './worker-rpc.js';
import { headsTrialInSlices } from '../../../lib/teach/heads-trial-slices.js';
import { computeText, fallbackReason } from './fallback-reasons.js';
import { translator } from '../../../lib/i18n/index.js';
import shared from '../../../lib/i18n/catalogues/shared.js';

let worker = null;
let mode = null;          // 'worker' | 'main', once known
let fallback = null;      // why 'main': { code, params, reason } (fallback-reasons.js)
let starting = null;      // Promise of the first start
const pending = new Pending();

/** The Worker is gone or its module aborted: finish what it holds, and every later call, on the main thread. */
function fallBack(why) {
  worker?.terminate();
  worker = null;
  mode = 'main';
  fallback = why;
  for (const job of pending.drain()) runOnMain(job.type, job.payload).then(job.resolve, job.reject);
}

async function startWorker() {
  const opened = await openWorker('headlab-worker.js', 'headlab-compute');
  if (!opened.worker) {
    mode = 'main';
    fallback = opened.refusal;
    return;
  }
  worker = opened.worker;
  mode = 'worker';
  worker.addEventListener('message', (event) => {
    const data = event.data ?? {};
    if (data.id === undefined) return;
    pending.settle(data);
    if (data.fatal) fallBack(fallbackReason('wasm-abort'));
  });
  const started = worker;
  worker.addEventListener('error', (event) => {
    event.preventDefault();
    // Refused by the page's policy (worker-src), or stopped: say which.
    refusedWorker('headlab-worker.js').then((csp) => { if (worker === started) fallBack(csp ?? fallbackReason('worker-crash')); });
  });
}

async function runOnMain(method, args) {
  await new Promise((r) => setTimeout(r, 0));  // let the page paint "computing…" first
  const lab = await getLab();
  if (typeof lab[method] !== 'function') throw new TypeError(`this HeadLab build has no ${method}()`);
  // A trial trains for seconds: in slices, so the page keeps answering. The other calls take milliseconds.
  if (method === 'headsTrial') return headsTrialInSlices(lab, args);
  return lab[method](args);
}

function started() {
  starting ??= startWorker();
  return starting;
}

/** Resolves once it is known where calls run (starts the Worker if need be). */
export function computeStarted() {
  return started();
}

/** 'worker' or 'main' once the first call has decided, else null. */
export function computeMode() {
  return mode;
}

/** The elements' runsIn: 'worker', 'main-thread', or null before the first call. */
export function computeRunsIn() {
  return runsIn(mode);
}

/** Runs `lab[method](args)` off the main thread when possible. */
export async function compute(method, args) {
  await started();
  if (mode === 'main' || !worker) return runOnMain(method, args);
  return new Promise((resolve, reject) => pending.post(worker, pending.job(method, args, [], resolve, reject)));
}

/**
 * Explains where computation runs, for a status line, in the words of `t` (the element's message
 * function); '' before it is known. Why it runs on the main thread is said by its code
 * (fallback-reasons.js), in the element's language.
 */
export function computeNote(t = translator(shared, 'en')) {
  return computeText(t, mode, fallback);
}
