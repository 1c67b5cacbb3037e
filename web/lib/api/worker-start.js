// Starting a Worker for a script URL from any origin. Browsers refuse `new Worker(url)` when `url`
// is on another origin than the page (a course page that loads HeadLab from a CDN), but a Worker
// made from a same-origin `blob:` URL may import that script (module Workers: `import("<url>")`;
// classic: `importScripts("<url>")`) when the script is served with CORS. A dynamic import, not a
// static `import "<url>"`: a module Worker's static imports are fetched as Worker scripts, which a
// CSP checks against worker-src (the CDN would have to be listed there), while import() is checked
// against script-src like the page's own <script type="module" src>; and its failure comes back
// with a message. The owner posts nothing before the bootstrap says it started, so no message
// reaches the Worker before the script has set its listeners. The other way, a message the script
// posts while its import() is still settling (before STARTED) does not reach the owner: HeadLab's
// Worker scripts post nothing unasked but `ready` once their wasm has loaded (the compute Worker's
// early `ready` is not read). A page whose
// Content-Security-Policy does not allow `blob:` Workers (worker-src, else child-src, script-src,
// default-src) refuses that too: the constructor throws (Firefox) or the Worker fails before it
// runs a line (Chromium, an `error` event). Both are caught here, with a timeout for a Worker that
// never shows a sign of life, and the caller gets the reason to fall back on: a stable `code`
// (WORKER_REASONS' keys, for programs and translations) with its English `reason`.
//
// The multi-core layer (parallel-workers.js) and the elements' Workers
// (components/shared/worker/worker-rpc.js) start their Workers through startWorker. The decision
// (planWorker) and the bootstrap's source (bootstrapSource) are pure functions, tested in Node.
//
// A module Worker resolves its relative imports and import.meta.url against its own script's
// URL, which the bootstrap keeps (it imports the real URL): HeadLab's Workers find their chunks
// and .wasm files next to themselves. A classic script imported by importScripts sees the blob:
// URL as self.location, so the bootstrap also sets self.HEADLAB_WORKER_URL to the real URL.

/** The message the bootstrap posts once the imported script has run (never seen by the Worker's owner). */
export const STARTED = 'headlab-worker-started';

/** The key of the message the bootstrap posts when the import failed: { [FAILED]: message }. */
export const FAILED = 'headlabWorkerFailed';

/** How long a bootstrap Worker may take to import its script before it counts as not started. */
export const START_TIMEOUT_MS = 20_000;

/** How long the one-line probe of blob: Workers may take (it fetches nothing). */
export const PROBE_TIMEOUT_MS = 5_000;

/**
 * Why no Worker could start, by code: the English message of each, whose {placeholders} the
 * reason's `params` fill. The codes are stable (a page's own translations, HeadLab's elements
 * and info().parallel.reasonCode key on them); the messages may be reworded.
 */
export const WORKER_REASONS = Object.freeze({
  'no-workers': 'this browser has no Web Workers',
  'bad-url': 'the Worker script\'s address is not a URL ({url})',
  'file-url': 'opened from a file, and browsers do not start Workers from file://',
  'no-origin': 'this page has no origin of its own (a sandboxed frame), so it cannot start a Worker from another origin',
  'no-blob-urls': 'this browser cannot make blob: URLs, which a Worker from another origin needs',
  'csp': 'this page’s Content-Security-Policy does not allow blob: Workers ({directive}), which HeadLab needs to start a Worker from another origin',
  'timeout': 'the Worker for {url} did not start within {time}',
  'cors': 'the Worker script {url} could not be loaded from another origin (it must be served with Access-Control-Allow-Origin)',
  'blocked': 'the Worker for {url} could not start (blocked by this page\'s Content-Security-Policy, or the script is not served with CORS)',
  'start-error': 'the Worker for {url} could not start ({message})',
  'constructor': 'the Worker did not start ({message})',
});

/**
 * A reason no Worker could start: { code, params, reason } with `reason` the English message of
 * `code` in `table` (WORKER_REASONS by default) filled from `params`. Throws a TypeError naming
 * an unknown code or a missing parameter.
 * @param {string} code
 * @param {Record<string, string>} [params]
 * @example workerReason('csp', { directive: 'worker-src' }).reason  // 'this page’s Content-Security-Policy …'
 */
export function workerReason(code, params = {}, table = WORKER_REASONS) {
  if (!Object.hasOwn(table, code)) throw new TypeError(`workerReason: code must be one of ${Object.keys(table).join(', ')}, got ${JSON.stringify(code)}`);
  const text = table[code].replace(/\{(\w+)\}/g, (_, name) => {
    if (!Object.hasOwn(params, name)) throw new TypeError(`workerReason: the reason '${code}' needs params.${name}`);
    return String(params[name]);
  });
  return { code, params: { ...params }, reason: text };
}

/** The reason given when the page's policy refuses blob: Workers (worker-src), in English. */
export const CSP_REASON = workerReason('csp', { directive: 'worker-src' }).reason;

/**
 * How a Worker for `scriptUrl` can start on a page at `pageOrigin` (pure; no DOM):
 *   { how: 'direct' }         same origin: `new Worker(url)`
 *   { how: 'blob' }           another origin: a same-origin blob: bootstrap that imports the script
 *   { how: 'none', code, params, reason }   no Worker can start: why, as workerReason gives it
 * @param {string | URL} scriptUrl absolute URL of the Worker script
 * @param {{ pageOrigin?: string | null, hasWorker?: boolean, hasBlobUrls?: boolean,
 *   blobRefused?: { code: string, params: object, reason: string } | null }} env
 *   pageOrigin: location.origin ('null' for file: and opaque origins); hasWorker: typeof Worker;
 *   hasBlobUrls: URL.createObjectURL and Blob exist; blobRefused: why blob: Workers were refused here before (null if not)
 */
export function planWorker(scriptUrl, { pageOrigin = null, hasWorker = true, hasBlobUrls = true, blobRefused = null } = {}) {
  if (!hasWorker) return none('no-workers');
  let url;
  try {
    url = new URL(String(scriptUrl));
  } catch {
    return none('bad-url', { url: String(scriptUrl) });
  }
  if (url.protocol === 'file:' || pageOrigin === 'file://') return none('file-url');
  if (url.protocol === 'blob:' || url.protocol === 'data:' || pageOrigin === null || url.origin === pageOrigin) return { how: 'direct' };
  if (pageOrigin === 'null') return none('no-origin');
  if (!hasBlobUrls) return none('no-blob-urls');
  if (blobRefused) return none(blobRefused.code, blobRefused.params);
  return { how: 'blob' };
}

/** planWorker's answer where no Worker can start. */
function none(code, params) {
  return { how: 'none', ...workerReason(code, params) };
}

/**
 * The source of the blob: Worker that runs `scriptUrl` (absolute) as a Worker of `type`, then
 * posts STARTED. JSON.stringify quotes the URL, so no character of it can end the string.
 * @param {string} scriptUrl
 * @param {'module' | 'classic'} type
 */
export function bootstrapSource(scriptUrl, type = 'module') {
  const url = new URL(String(scriptUrl)).href;
  const quoted = JSON.stringify(url);
  const started = `self.postMessage(${JSON.stringify(STARTED)});`;
  if (type === 'module') {
    return `import(${quoted}).then(() => { ${started} }, (e) => { self.postMessage({ ${FAILED}: String((e && e.message) || e) }); });\n`;
  }
  if (type === 'classic') return `self.HEADLAB_WORKER_URL = ${quoted};\nimportScripts(${quoted});\n${started}\n`;
  throw new TypeError(`bootstrapSource: type must be 'module' or 'classic', got ${JSON.stringify(type)}`);
}

/**
 * What a Worker's first events say about its start (pure): 'started' for the bootstrap's STARTED
 * message, 'failed' for its FAILED message or an error before it, 'timeout' when `elapsedMs` passed the limit, else null.
 * @param {{ type: 'message' | 'error' | 'tick', data?: unknown, elapsedMs?: number, timeoutMs?: number }} e
 */
export function startOutcome({ type, data, elapsedMs = 0, timeoutMs = START_TIMEOUT_MS }) {
  if (type === 'message' && data === STARTED) return 'started';
  if (type === 'message' && isFailure(data)) return 'failed';
  if (type === 'error') return 'failed';
  if (elapsedMs >= timeoutMs) return 'timeout';
  return null;
}

/** Whether a message is the bootstrap's report of a failed import. */
function isFailure(data) {
  return data !== null && typeof data === 'object' && typeof data[FAILED] === 'string';
}

/**
 * Why a bootstrap Worker did not start, as workerReason gives it (pure): a CSP violation seen on
 * blob: ('csp'), a timeout, a policy error thrown by the constructor ('csp'), a failure without a
 * message ('cors' once the page was seen to allow blob: Workers, else 'blocked': that is how
 * Chromium reports a refusal), else the error's message ('start-error').
 * @param {{ violation?: { directive?: string } | null, message?: string, timeoutMs?: number,
 *   outcome: 'failed' | 'timeout' | 'threw', scriptUrl: string, probed?: boolean }} o
 *   probed: the page was found to allow blob: Workers, so a failure without a message is the script's load
 */
export function refusalReason({ violation, message, outcome, scriptUrl, timeoutMs = START_TIMEOUT_MS, probed = false }) {
  const url = String(scriptUrl);
  if (violation) return workerReason('csp', { directive: violation.directive || 'worker-src' });
  if (outcome === 'timeout') return workerReason('timeout', { url, time: timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms` });
  if (outcome === 'threw' && /secur|insecure|policy/i.test(message ?? '')) return workerReason('csp', { directive: 'worker-src' });
  if (!message && probed) return workerReason('cors', { url });
  if (!message) return workerReason('blocked', { url });
  return workerReason('start-error', { url, message: String(message) });
}

// Why blob: Workers are refused on this page, once known (null while not, or when they work).
let blobRefused = null;
let probe = null;

/** Why this page refuses blob: Workers, once a Worker or the probe found out ({ code, params, reason }); null otherwise. */
export function blobWorkersRefused() {
  return blobRefused;
}

/** The page's origin, as planWorker wants it; null outside pages and Workers (Node). */
function pageOrigin() {
  const loc = globalThis.location;
  if (!loc || typeof loc.origin !== 'string') return null;
  return loc.protocol === 'file:' ? 'file://' : loc.origin;
}

function environment() {
  return {
    pageOrigin: pageOrigin(),
    hasWorker: typeof Worker === 'function',
    hasBlobUrls: typeof Blob === 'function' && typeof URL.createObjectURL === 'function',
    blobRefused,
  };
}

/** How a Worker for `scriptUrl` would start here (planWorker with this page's facts). */
export function workerPlanHere(scriptUrl) {
  return planWorker(scriptUrl, environment());
}

/**
 * Starts `source` as a blob: Worker and waits for `expected` (its first message) or a refusal.
 * Resolves { worker } or { refusal, policy, outcome } (refusal: refusalReason's; policy: it came from the page's policy).
 */
function startBlob(source, { type, name, scriptUrl, timeoutMs, expected, probed = false }) {
  return new Promise((resolve) => {
    const blobUrl = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
    let violation = null;
    const onViolation = (e) => {
      if (e.blockedURI === 'blob' || String(e.blockedURI).startsWith('blob:')) violation = { directive: e.effectiveDirective || e.violatedDirective };
    };
    const scope = typeof document === 'object' && document ? document : globalThis;
    scope.addEventListener?.('securitypolicyviolation', onViolation);
    let worker, timer;
    const done = (outcome, message) => {
      clearTimeout(timer);
      scope.removeEventListener?.('securitypolicyviolation', onViolation);
      URL.revokeObjectURL(blobUrl);
      if (outcome === 'started') {
        worker.removeEventListener('error', onError);
        resolve({ worker });
        return;
      }
      worker?.terminate();
      const policy = Boolean(violation) || (outcome === 'threw' && /secur|insecure|policy/i.test(message ?? ''));
      resolve({ refusal: refusalReason({ violation, message, outcome, scriptUrl, timeoutMs, probed }), policy, outcome });
    };
    const onError = (e) => {
      e.preventDefault?.();
      // The violation event may be queued just behind the error: look once more in the next task.
      setTimeout(() => done('failed', e.message), 0);
    };
    try {
      worker = new Worker(blobUrl, { type, name });
    } catch (e) {
      done('threw', e?.message ?? String(e));
      return;
    }
    // Registered first, so the owner's own listeners never see the bootstrap's message.
    worker.addEventListener('message', (e) => {
      const outcome = startOutcome({ type: 'message', data: e.data });
      if (!outcome || (outcome === 'started' && e.data !== expected)) return;
      e.stopImmediatePropagation();
      if (outcome === 'started') done('started');
      else done('failed', e.data[FAILED]);
    });
    worker.addEventListener('error', onError);
    timer = setTimeout(() => done('timeout'), timeoutMs);
  });
}

/**
 * Whether this page lets HeadLab start blob: Workers: a one-line blob: module Worker that posts a
 * message. Resolves to null when it may, else why not ({ code, params, reason }, remembered:
 * blobWorkersRefused()). Run once per page; the answer is shared.
 */
export function probeBlobWorkers() {
  if (!probe) {
    const env = environment();
    if (!env.hasWorker || !env.hasBlobUrls) return Promise.resolve(workerReason(env.hasWorker ? 'no-blob-urls' : 'no-workers'));
    const source = `self.postMessage(${JSON.stringify(STARTED)});\n`;
    probe = startBlob(source, { type: 'module', name: 'headlab-probe', scriptUrl: 'a blob: Worker', timeoutMs: PROBE_TIMEOUT_MS, expected: STARTED })
      .then(({ worker, refusal, policy, outcome }) => {
        worker?.terminate();
        // A one-line Worker that fails (rather than being slow) can only have been refused by the page.
        if (outcome === 'failed' || outcome === 'threw') blobRefused = policy ? refusal : workerReason('csp', { directive: 'worker-src' });
        return blobRefused;
      });
  }
  return probe;
}

/**
 * Starts a Worker running `scriptUrl` from whatever origin it is on: same-origin `new Worker`;
 * from another origin a blob: bootstrap, once the probe says the page allows blob: Workers, and
 * only once the bootstrap has imported the script (so the owner's listeners see every message
 * the script posts). Never throws. Where none starts, `code` says why (a key of WORKER_REASONS),
 * `reason` in English, `params` what fills its message.
 * @param {string | URL} scriptUrl absolute URL
 * @param {{ type?: 'module' | 'classic', name?: string, timeoutMs?: number }} [options]
 * @returns {Promise<{ worker: Worker, how: 'direct' | 'blob' }
 *   | { worker?: undefined, how: 'none', code: string, params: Record<string, string>, reason: string }>}
 */
export async function startWorker(scriptUrl, { type = 'module', name, timeoutMs = START_TIMEOUT_MS } = {}) {
  let plan = workerPlanHere(scriptUrl);
  if (plan.how === 'direct') {
    try {
      return { worker: new Worker(scriptUrl, { type, name }), how: 'direct' };
    } catch (e) {
      return none('constructor', { message: String(e?.message ?? e) });
    }
  }
  if (plan.how === 'blob') {
    await probeBlobWorkers();
    plan = workerPlanHere(scriptUrl);
  }
  if (plan.how !== 'blob') return plan;
  const href = new URL(String(scriptUrl)).href;
  const probed = probe !== null && !blobRefused;
  const r = await startBlob(bootstrapSource(href, type), { type, name, scriptUrl: href, timeoutMs, expected: STARTED, probed });
  if (r.worker) return { worker: r.worker, how: 'blob' };
  if (r.policy) blobRefused = r.refusal;
  return { how: 'none', ...r.refusal };
}
