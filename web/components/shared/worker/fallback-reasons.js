// Why an element's work runs on the page's main thread rather than in its Worker, and how that
// is said in the element's language. A reason is { code, params, reason }: `code` a key of
// FALLBACK_REASONS (lib/api/worker-start.js's WORKER_REASONS, for a Worker that could not start,
// and CLIENT_REASONS below, for one that started and then failed), `reason` its English message
// (the public API's words, kept for logs and note()), `params` what fills it. The elements say it
// with the shared catalogue's `worker.reason.<code>`, keyed on the code alone: the English message
// may be reworded without changing what any language shows. Pure (no DOM), tested in Node.

import { WORKER_REASONS, workerReason } from '../../../lib/api/worker-start.js';

/** Why an element's client went to the main thread after its Worker was made: code → English message. */
export const CLIENT_REASONS = Object.freeze({
  'script-load': 'the Worker script could not be loaded',
  'wasm-load': 'the Worker could not load WebAssembly ({detail})',
  'wasm-abort': 'the WebAssembly module in the Worker stopped',
  'worker-crash': 'the Worker stopped with an error',
  'csp-refused': 'this page’s Content-Security-Policy refused the Worker script ({directive}): add {source} to its {directive} directive',
});

/** Every reason an element may run on the main thread: code → English message. */
export const FALLBACK_REASONS = Object.freeze({ ...WORKER_REASONS, ...CLIENT_REASONS });

/**
 * A fallback reason { code, params, reason } for `code` (a key of FALLBACK_REASONS). Throws a
 * TypeError naming an unknown code or a missing parameter.
 * @example fallbackReason('wasm-load', { detail: 'out of memory' }).reason  // 'the Worker could not load WebAssembly (out of memory)'
 */
export function fallbackReason(code, params = {}) {
  return workerReason(code, params, FALLBACK_REASONS);
}

/** The catalogue key (shared.js) that says `code` in every language. */
export function reasonKey(code) {
  return `worker.reason.${code}`;
}

/**
 * A fallback reason in the words of `t` (an element's message function): the catalogue's message
 * for its code, filled from its params. The English `reason` is never read.
 */
export function reasonText(t, fallback) {
  return t(reasonKey(fallback.code), fallback.params);
}

/**
 * Where training runs, in words, for the client `client` (trainer-client.js: mode and fallback)
 * and a model on `threads` threads; `subject` 'model' for the explorer's "The model runs …".
 * '' until the client knows.
 */
export function modeText(t, client, threads = 1, subject = 'training') {
  if (!client?.mode) return '';
  if (client.mode === 'worker') return threads > 1 ? t('training.modeThreads', { n: threads }) : t('training.modeWorker');
  return t(subject === 'model' ? 'training.modeMainModel' : 'training.modeMain', { reason: reasonText(t, client.fallback) });
}

/**
 * Where the measuring elements' calculations run (compute.js), in words: `mode` 'worker' | 'main'
 * | null, `fallback` why 'main'. '' while it is not known.
 */
export function computeText(t, mode, fallback) {
  if (mode === 'worker') return t('compute.worker');
  if (mode === null) return '';
  if (fallback.code === 'file-url') return t('compute.file');
  return t('compute.main', { reason: reasonText(t, fallback) });
}
