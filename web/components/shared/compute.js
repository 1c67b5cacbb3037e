// Runs HeadLab calls in a Web Worker so that long ones never freeze the page.
// Falls back to the main thread (yielding to the event loop first) where a
// Worker cannot start: pages opened from file://, or a bundle loaded from
// another origin than the page (Workers must be same-origin).

import { getLab } from './lab.js';
import { BASE_URL, FROM_FILE } from './assets.js';

let worker = null;
let mode = null;          // 'worker' | 'main'
let nextId = 1;
const waiting = new Map();

function rebuildError(e) {
  const Ctor = { TypeError, RangeError }[e.name] ?? Error;
  return new Ctor(e.message);
}

function startWorker() {
  if (FROM_FILE || typeof Worker === 'undefined') return false;
  try {
    const url = new URL('headlab-worker.js', BASE_URL);
    if (url.origin !== location.origin) return false;
    worker = new Worker(url, { type: 'module', name: 'headlab-compute' });
  } catch {
    worker = null;
    return false;
  }
  worker.addEventListener('message', (event) => {
    const { id, result, error } = event.data ?? {};
    const job = waiting.get(id);
    if (!job) return;
    waiting.delete(id);
    if (error) job.reject(rebuildError(error));
    else job.resolve(result);
  });
  worker.addEventListener('error', (event) => {
    event.preventDefault();
    // The Worker could not load: finish the jobs it holds on the main thread.
    worker.terminate();
    worker = null;
    mode = 'main';
    const jobs = [...waiting.values()];
    waiting.clear();
    for (const job of jobs) runOnMain(job.method, job.args).then(job.resolve, job.reject);
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
  return new Promise((resolve, reject) => {
    const id = nextId++;
    waiting.set(id, { resolve, reject, method, args });
    worker.postMessage({ id, method, args });
  });
}

/** Explains where computation runs, for a status line. */
export function computeNote() {
  if (computeMode() === 'worker') return 'Long calculations run in the background (a Web Worker), so the page stays responsive.';
  return FROM_FILE
    ? 'Opened from a file, so calculations run on the page itself (the main thread): browsers start no background workers for files.'
    : 'Everything runs on this page’s main thread (HeadLab comes from another site, and browsers only start helper threads from the page’s own site).';
}
