// web/lib/api/worker-start.js without a browser: how a Worker for a script URL is started
// (same origin: directly; another origin: a blob: bootstrap; file:, no Worker or a refusal: none),
// the bootstrap's source, how its first events are read, the reasons given, and startWorker's
// flow against a fake Worker (the bootstrap's message hidden from the owner, a refusal by the
// page's policy detected by an error or a throwing constructor, asked once and remembered, a
// Worker that never starts timed out). Every reason comes with its code; the codes are checked
// against independent lists (the .d.ts's WorkerReasonCode), the messages only loosely. The real
// thing runs in tests/browser/cross-origin-workers.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  planWorker, bootstrapSource, startOutcome, refusalReason, workerReason, WORKER_REASONS, STARTED, FAILED, START_TIMEOUT_MS, CSP_REASON,
} from '../../web/lib/api/worker-start.js';
import { readFileSync } from 'node:fs';

const PAGE = 'https://course.example';
const CDN = 'https://cdn.example/headlab/';

test('planWorker: same origin directly, another origin through a blob: bootstrap', () => {
  assert.deepEqual(planWorker(`${PAGE}/dist/headlab-lm-worker.js`, { pageOrigin: PAGE }), { how: 'direct' });
  assert.deepEqual(planWorker(`${CDN}headlab-lm-worker.js`, { pageOrigin: PAGE }), { how: 'blob' });
  assert.deepEqual(planWorker(new URL(`${CDN}lib/headlab-parallel-worker.js`), { pageOrigin: PAGE }), { how: 'blob' });
  // Another port or scheme is another origin.
  assert.equal(planWorker('https://course.example:8443/w.js', { pageOrigin: PAGE }).how, 'blob');
  assert.equal(planWorker('http://course.example/w.js', { pageOrigin: PAGE }).how, 'blob');
  // No page (Node) and blob:/data: scripts: as given.
  assert.equal(planWorker(`${CDN}w.js`, { pageOrigin: null }).how, 'direct');
  assert.equal(planWorker('blob:https://course.example/1234', { pageOrigin: PAGE }).how, 'direct');
});

const CSP = workerReason('csp', { directive: 'worker-src' });

test('planWorker: where no Worker can start, its code and the reason in words', () => {
  const none = (url, env, code) => {
    const p = planWorker(url, env);
    assert.equal(p.how, 'none', JSON.stringify(p));
    assert.equal(p.code, code, JSON.stringify(p));
    assert.ok(typeof p.reason === 'string' && p.reason.length > 10, p.reason);
    return p.reason;
  };
  assert.match(none(`${CDN}w.js`, { pageOrigin: PAGE, hasWorker: false }, 'no-workers'), /no Web Workers/);
  assert.match(none('file:///home/me/dist/w.js', { pageOrigin: 'file://' }, 'file-url'), /file:\/\//);
  assert.match(none(`${CDN}w.js`, { pageOrigin: 'null' }, 'no-origin'), /no origin of its own/);
  assert.match(none(`${CDN}w.js`, { pageOrigin: PAGE, hasBlobUrls: false }, 'no-blob-urls'), /blob: URLs/);
  assert.equal(none(`${CDN}w.js`, { pageOrigin: PAGE, blobRefused: CSP }, 'csp'), CSP_REASON);
  // A refusal of blob: Workers does not stop same-origin ones.
  assert.equal(planWorker(`${PAGE}/w.js`, { pageOrigin: PAGE, blobRefused: CSP }).how, 'direct');
  assert.match(none('not a url', { pageOrigin: PAGE }, 'bad-url'), /not a URL \(not a url\)/);
  assert.deepEqual(planWorker('not a url', { pageOrigin: PAGE }).params, { url: 'not a url' });
});

test('workerReason: the code, its params, and its English message filled; an unknown code or a missing param is a TypeError', () => {
  assert.deepEqual(workerReason('timeout', { url: 'u.js', time: '3 s' }), { code: 'timeout', params: { url: 'u.js', time: '3 s' }, reason: 'the Worker for u.js did not start within 3 s' });
  assert.equal(CSP_REASON, 'this page’s Content-Security-Policy does not allow blob: Workers (worker-src), which HeadLab needs to start a Worker from another origin');
  // A parameter's own braces are not placeholders.
  assert.equal(workerReason('start-error', { url: 'u', message: '{url}' }).reason, 'the Worker for u could not start ({url})');
  assert.throws(() => workerReason('CSP'), (e) => e instanceof TypeError && /code must be one of .*'?csp/.test(e.message) && /"CSP"/.test(e.message));
  assert.throws(() => workerReason('csp'), (e) => e instanceof TypeError && /needs params\.directive/.test(e.message));
  // Another table (the elements' fallback-reasons.js) is read the same way.
  assert.equal(workerReason('x', { n: 2 }, { x: 'n is {n}' }).reason, 'n is 2');
  assert.throws(() => workerReason('csp', { directive: 'a' }, { x: '' }), TypeError);
});

test('the codes are the ones the .d.ts declares as WorkerReasonCode, and each message fills from its own params only', () => {
  const dts = readFileSync(new URL('../../web/lib/headlab.d.ts', import.meta.url), 'utf8');
  const union = /export type WorkerReasonCode =([^;]*);/.exec(dts);
  assert.ok(union, 'headlab.d.ts declares WorkerReasonCode');
  const declared = [...union[1].matchAll(/'([a-z-]+)'/g)].map((m) => m[1]).sort();
  assert.deepEqual(Object.keys(WORKER_REASONS).sort(), declared);
  assert.ok(Object.isFrozen(WORKER_REASONS));
});

test('bootstrapSource: imports the absolute URL, then says it started (or why not); the URL cannot break out of its string', () => {
  const url = `${CDN}headlab-lm-worker.js`;
  // import(): checked against script-src, where a static import would be checked against worker-src.
  assert.equal(bootstrapSource(url, 'module'),
    `import("${url}").then(() => { self.postMessage("${STARTED}"); }, (e) => { self.postMessage({ ${FAILED}: String((e && e.message) || e) }); });\n`);
  assert.equal(bootstrapSource(url, 'classic'),
    `self.HEADLAB_WORKER_URL = "${url}";\nimportScripts("${url}");\nself.postMessage("${STARTED}");\n`);
  assert.equal(bootstrapSource(url), bootstrapSource(url, 'module'));
  // Quotes and line breaks are escaped by the URL parser (and JSON.stringify), never closing the string.
  const odd = bootstrapSource('https://cdn.example/a"b\\c\nd.js');
  assert.equal(odd.split('\n').length, 2);
  const quoted = /^import\(("(?:[^"\\]|\\.)*")\)/.exec(odd)[1];
  assert.equal(new URL(JSON.parse(quoted)).host, 'cdn.example');
  assert.throws(() => bootstrapSource(url, 'shared'), /type must be 'module' or 'classic'/);
  assert.throws(() => bootstrapSource('./relative.js'), TypeError);
});

test('startOutcome: the STARTED message, an error before it, or the timeout', () => {
  assert.equal(startOutcome({ type: 'message', data: STARTED }), 'started');
  assert.equal(startOutcome({ type: 'message', data: { ready: true } }), null, 'a message of the script is not the bootstrap\'s');
  assert.equal(startOutcome({ type: 'error' }), 'failed');
  assert.equal(startOutcome({ type: 'message', data: { [FAILED]: 'Failed to fetch dynamically imported module' } }), 'failed');
  assert.equal(startOutcome({ type: 'message', data: { [FAILED]: 42 } }), null);
  assert.equal(startOutcome({ type: 'tick', elapsedMs: START_TIMEOUT_MS - 1 }), null);
  assert.equal(startOutcome({ type: 'tick', elapsedMs: START_TIMEOUT_MS }), 'timeout');
  assert.equal(startOutcome({ type: 'tick', elapsedMs: 60, timeoutMs: 50 }), 'timeout');
});

test('refusalReason: the policy named when a violation was seen, else what failed', () => {
  const scriptUrl = `${CDN}w.js`;
  const is = (o, code, params, pattern) => {
    const r = refusalReason({ scriptUrl, ...o });
    assert.equal(r.code, code, JSON.stringify(r));
    assert.deepEqual(r.params, params);
    assert.match(r.reason, pattern);
  };
  assert.deepEqual(refusalReason({ violation: { directive: 'worker-src' }, outcome: 'failed', scriptUrl }), CSP);
  is({ violation: { directive: 'script-src' }, outcome: 'failed' }, 'csp', { directive: 'script-src' }, /Content-Security-Policy .*\(script-src\)/);
  assert.deepEqual(refusalReason({ outcome: 'threw', message: 'The operation is insecure.', scriptUrl }), CSP);
  is({ outcome: 'timeout', timeoutMs: 20_000 }, 'timeout', { url: scriptUrl, time: '20 s' }, /did not start within 20 s/);
  is({ outcome: 'failed' }, 'blocked', { url: scriptUrl }, /Content-Security-Policy, or the script is not served with CORS/);
  is({ outcome: 'failed', message: 'Uncaught SyntaxError' }, 'start-error', { url: scriptUrl, message: 'Uncaught SyntaxError' }, /could not start \(Uncaught SyntaxError\)/);
  // Once the page was seen to allow blob: Workers, a silent failure is the script's load (CORS).
  is({ outcome: 'failed', probed: true }, 'cors', { url: scriptUrl }, /could not be loaded from another origin \(it must be served with Access-Control-Allow-Origin\)/);
});

// ---------------------------------------------------------------- startWorker against a fake Worker

/**
 * A page at PAGE whose Worker constructor behaves as `policy` says for blob: URLs:
 * 'allow' (runs the bootstrap: posts STARTED after the import, then the script's { ready }),
 * 'error' (Chromium: an error event, and a securitypolicyviolation), 'throw' (Firefox), 'silent',
 * 'cors' (the probe runs, the bootstrap's import fails), 'broken' (every constructor call throws).
 * Returns what was started; each case imports a fresh copy of the module.
 */
async function fakePage(policy, t) {
  const started = [];
  class FakeWorker extends EventTarget {
    constructor(url, options) {
      super();
      started.push({ url: String(url), options, terminated: false });
      this.record = started.at(-1);
      const blob = String(url).startsWith('blob:');
      if (policy === 'broken') throw new Error('no Worker today');
      if (blob && policy === 'throw') throw Object.assign(new Error('The operation is insecure.'), { name: 'SecurityError' });
      setTimeout(() => {
        if (blob && policy === 'error') {
          globalThis.document.dispatchEvent(Object.assign(new Event('securitypolicyviolation'), { blockedURI: 'blob', effectiveDirective: 'worker-src' }));
          this.dispatchEvent(new Event('error', { cancelable: true }));
        } else if (blob && policy === 'cors' && started.length > 1) {
          // The probe ran; the bootstrap's import() of a script served without CORS failed.
          this.dispatchEvent(new MessageEvent('message', { data: { [FAILED]: 'Failed to fetch dynamically imported module' } }));
        } else if (policy !== 'silent') {
          // Each message is a task of its own, as in browsers.
          if (blob) this.dispatchEvent(new MessageEvent('message', { data: STARTED }));
          setTimeout(() => this.dispatchEvent(new MessageEvent('message', { data: { ready: true } })), 1);
        }
      }, 1);
    }

    terminate() { this.record.terminated = true; }
  }
  const saved = { Worker: globalThis.Worker, location: globalThis.location, document: globalThis.document };
  globalThis.Worker = FakeWorker;
  globalThis.location = { origin: PAGE, protocol: 'https:', href: `${PAGE}/lesson.html` };
  globalThis.document = new EventTarget();
  t.after(() => Object.assign(globalThis, saved));
  const mod = await import(`../../web/lib/api/worker-start.js?case=${policy}-${Math.random()}`);
  return { mod, started };
}

test('startWorker, same origin: new Worker(url) at once, no probe', async (t) => {
  const { mod, started } = await fakePage('allow', t);
  const r = await mod.startWorker(`${PAGE}/dist/headlab-lm-worker.js`, { name: 'lm' });
  assert.equal(r.how, 'direct');
  assert.deepEqual(started.map((s) => s.url), [`${PAGE}/dist/headlab-lm-worker.js`]);
  assert.deepEqual(started[0].options, { type: 'module', name: 'lm' });
});

test('startWorker, same origin, the constructor throws: code \'constructor\' with its message', async (t) => {
  const { mod } = await fakePage('broken', t);
  assert.deepEqual(await mod.startWorker(`${PAGE}/w.js`), {
    how: 'none', code: 'constructor', params: { message: 'no Worker today' }, reason: 'the Worker did not start (no Worker today)',
  });
});

test('startWorker, another origin: a probe, then the bootstrap; its message never reaches the owner', async (t) => {
  const { mod, started } = await fakePage('allow', t);
  const r = await mod.startWorker(`${CDN}headlab-lm-worker.js`, { name: 'lm' });
  assert.equal(r.how, 'blob');
  assert.equal(started.length, 2, 'the probe and the bootstrap');
  assert.ok(started.every((s) => s.url.startsWith('blob:')));
  assert.equal(started[0].terminated, true, 'the probe is ended');
  assert.equal(started[1].terminated, false);
  const seen = [];
  r.worker.addEventListener('message', (e) => seen.push(e.data));
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(seen, [{ ready: true }], 'the owner sees the script\'s messages only');
  assert.equal(mod.blobWorkersRefused(), null);
  // A second Worker does not probe again.
  await mod.startWorker(`${CDN}headlab-explorer-worker.js`);
  assert.equal(started.length, 3);
});

for (const policy of ['error', 'throw']) {
  test(`startWorker, another origin, the page refuses blob: Workers (${policy === 'error' ? 'an error event' : 'the constructor throws'}): the reason, asked once`, async (t) => {
    const { mod, started } = await fakePage(policy, t);
    const r = await mod.startWorker(`${CDN}headlab-lm-worker.js`);
    assert.equal(r.how, 'none');
    assert.equal(r.worker, undefined);
    assert.equal(r.reason, CSP_REASON);
    assert.equal(r.code, 'csp');
    assert.deepEqual(mod.blobWorkersRefused(), CSP);
    assert.equal(started.length, 1, 'only the probe was tried');
    const again = await mod.startWorker(`${CDN}headlab-parallel-worker.js`);
    assert.deepEqual(again, { how: 'none', ...CSP });
    assert.equal(started.length, 1, 'a refusal is remembered: no second try');
    assert.deepEqual(mod.workerPlanHere(`${CDN}w.js`), { how: 'none', ...CSP });
    // Same-origin Workers still start.
    assert.equal((await mod.startWorker(`${PAGE}/w.js`)).how, 'direct');
  });
}

test('startWorker: a bootstrap that never says it started is ended after the timeout, with the reason', async (t) => {
  const { mod, started } = await fakePage('silent', t);
  // The probe times out too (not a refusal: the page may just be busy), so the real start is tried.
  const r = await mod.startWorker(`${CDN}headlab-lm-worker.js`, { timeoutMs: 30 });
  assert.equal(r.how, 'none');
  assert.equal(r.reason, `the Worker for ${CDN}headlab-lm-worker.js did not start within 30 ms`);
  assert.equal(r.code, 'timeout');
  assert.equal(started.at(-1).terminated, true);
  assert.equal(mod.blobWorkersRefused(), null, 'a timeout is not remembered as a refusal');
});

test('startWorker: the bootstrap’s failed import is reported with its message, hidden from the owner, and not remembered as a refusal', async (t) => {
  const { mod, started } = await fakePage('cors', t);
  const r = await mod.startWorker(`${CDN}headlab-lm-worker.js`);
  assert.deepEqual(r, {
    how: 'none', code: 'start-error', params: { url: `${CDN}headlab-lm-worker.js`, message: 'Failed to fetch dynamically imported module' },
    reason: `the Worker for ${CDN}headlab-lm-worker.js could not start (Failed to fetch dynamically imported module)`,
  });
  assert.equal(started.length, 2);
  assert.equal(started[1].terminated, true);
  assert.equal(mod.blobWorkersRefused(), null);
});
