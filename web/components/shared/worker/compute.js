// Runs HeadLab calls in a Web Worker so that long ones never freeze the page.
// Falls back to the main thread (yielding to the event loop first) where a
// Worker cannot start: pages opened from file://, or a bundle loaded from
// another origin than the page (Workers must be same-origin). Messages go
// through worker-rpc.js, like the trainer's.

import { getLab } from '../lab/lab.js';
import { FROM_FILE } from '../lab/assets.js';
import { openWorker, Pending } from './worker-rpc.js';
import { translator } from '../../../lib/i18n/index.js';
import shared from '../../../lib/i18n/catalogues/shared.js';

let worker = null;
let mode = null;          // 'worker' | 'main'
const pending = new Pending();

/** The Worker is gone or its module aborted: finish what it holds, and every later call, on the main thread. */
function fallBack() {
  worker?.terminate();
  worker = null;
  mode = 'main';
  for (const job of pending.drain()) runOnMain(job.type, job.payload).then(job.resolve, job.reject);
}

function startWorker() {
  ({ worker } = openWorker('headlab-worker.js', 'headlab-compute'));
  if (!worker) return false;
  worker.addEventListener('message', (event) => {
    const data = event.data ?? {};
    if (data.id === undefined) return;
    pending.settle(data);
    if (data.fatal) fallBack();
  });
  worker.addEventListener('error', (event) => {
    event.preventDefault();
    fallBack();  // the Worker could not load
  });
  return true;
}

async function runOnMain(method, args) {
  await new Promise((r) => setTimeout(r, 0));  // let the page paint "computing…" first
  const lab = await getLab();
  if (typeof lab[method] !== 'function') throw new TypeError(`this HeadLab build has no ${method}()`);
  return lab[method](args);
}

/** 'worker' or 'main': where calls run (decided on the first call). */
export function computeMode() {
  if (mode === null) mode = startWorker() ? 'worker' : 'main';
  return mode;
}

/** Runs `lab[method](args)` off the main thread when possible. */
export function compute(method, args) {
  if (computeMode() === 'main' || !worker) return runOnMain(method, args);
  return new Promise((resolve, reject) => pending.post(worker, pending.job(method, args, [], resolve, reject)));
}

/** Explains where computation runs, for a status line, in the words of `t` (the element's message function). */
export function computeNote(t = translator(shared, 'en')) {
  if (computeMode() === 'worker') return t('compute.worker');
  return FROM_FILE ? t('compute.file') : t('compute.main');
}
