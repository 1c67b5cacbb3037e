// Why an element runs on the main thread, said in its language by the reason's code alone
// (web/components/shared/worker/fallback-reasons.js): every code that lib/api/worker-start.js and
// the elements' clients give has its message in every catalogue language, each code says in English
// and in Spanish what the phrases written below (independently of the catalogues) expect, and
// neither a reworded English message nor another code's English words change what is shown.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LANGUAGES, translator } from '../../web/lib/i18n/index.js';
import shared from '../../web/lib/i18n/catalogues/shared.js';
import training from '../../web/lib/i18n/catalogues/training.js';
import { planWorker, refusalReason, workerReason, WORKER_REASONS } from '../../web/lib/api/worker-start.js';
import {
  CLIENT_REASONS, FALLBACK_REASONS, fallbackReason, reasonKey, reasonText, modeText, computeText,
} from '../../web/components/shared/worker/fallback-reasons.js';
import { cspCause } from '../../web/components/shared/lab/refusals.js';

const PAGE = 'https://course.example';
const CDN = 'https://cdn.example/headlab/';
const URL_ = `${CDN}headlab-trainer-worker.js`;

// One reason per code, each made the way HeadLab makes it (planWorker, refusalReason, the clients).
const SAMPLES = {
  'no-workers': planWorker(URL_, { pageOrigin: PAGE, hasWorker: false }),
  'bad-url': planWorker('::nope', { pageOrigin: PAGE }),
  'file-url': planWorker('file:///home/me/dist/w.js', { pageOrigin: 'file://' }),
  'no-origin': planWorker(URL_, { pageOrigin: 'null' }),
  'no-blob-urls': planWorker(URL_, { pageOrigin: PAGE, hasBlobUrls: false }),
  'csp': refusalReason({ violation: { directive: 'script-src' }, outcome: 'failed', scriptUrl: URL_ }),
  'timeout': refusalReason({ outcome: 'timeout', timeoutMs: 20_000, scriptUrl: URL_ }),
  'cors': refusalReason({ outcome: 'failed', probed: true, scriptUrl: URL_ }),
  'blocked': refusalReason({ outcome: 'failed', scriptUrl: URL_ }),
  'start-error': refusalReason({ outcome: 'failed', message: 'Uncaught SyntaxError', scriptUrl: URL_ }),
  'constructor': workerReason('constructor', { message: 'SecurityError' }),
  'script-load': fallbackReason('script-load'),
  'wasm-load': fallbackReason('wasm-load', { detail: 'out of memory' }),
  'wasm-abort': fallbackReason('wasm-abort'),
  'worker-crash': fallbackReason('worker-crash'),
  'csp-refused': fallbackReason('csp-refused', cspCause('', `${PAGE}/headlab-worker.js`, [{ directive: 'worker-src', blocked: `${PAGE}/headlab-worker.js` }], PAGE)),
};

// What each code must say, written here and not read from the catalogues.
const EXPECTED = {
  'no-workers': { en: /^this browser has no Web Workers$/, es: /^este navegador no tiene Web Workers$/ },
  'bad-url': { en: /not a URL \(::nope\)$/, es: /no es una URL \(::nope\)$/ },
  'file-url': { en: /^opened from a file, .*file:\/\/$/, es: /^la página se abrió desde un archivo, .*file:\/\/$/ },
  'no-origin': { en: /no origin of its own/, es: /no tiene un origen propio/ },
  'no-blob-urls': { en: /cannot make blob: URLs/, es: /no puede crear URL blob:/ },
  'csp': { en: /^this page’s Content-Security-Policy does not allow blob: Workers \(script-src\).*: add blob: to its script-src directive$/,
    es: /^la Content-Security-Policy de esta página no permite Workers blob: \(script-src\).*: añada blob: a su directiva script-src$/ },
  'timeout': { en: /headlab-trainer-worker\.js did not start within 20 s$/, es: /headlab-trainer-worker\.js no arrancó en 20 s$/ },
  'cors': { en: /could not be loaded from another origin/, es: /no se pudo cargar el script del Worker .* desde otro origen/ },
  'blocked': { en: /could not start \(blocked by/, es: /no pudo arrancar \(lo bloqueó/ },
  'start-error': { en: /could not start \(Uncaught SyntaxError\)$/, es: /no pudo arrancar \(Uncaught SyntaxError\)$/ },
  'constructor': { en: /^the Worker did not start \(SecurityError\)$/, es: /^el Worker no arrancó \(SecurityError\)$/ },
  'script-load': { en: /^the Worker script could not be loaded$/, es: /^no se pudo cargar el script del Worker$/ },
  'wasm-load': { en: /could not load WebAssembly \(out of memory\)$/, es: /no pudo cargar WebAssembly \(out of memory\)$/ },
  'wasm-abort': { en: /WebAssembly module in the Worker stopped/, es: /módulo WebAssembly del Worker se detuvo/ },
  'worker-crash': { en: /^the Worker stopped with an error$/, es: /^el Worker se detuvo con un error$/ },
  'csp-refused': { en: /refused the Worker script \(worker-src\): add 'self' to its worker-src directive$/, es: /rechazó el script del Worker \(worker-src\): añada 'self' a su directiva worker-src$/ },
};

const placeholders = (text) => [...new Set([...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]))].sort();
const tFor = (lang) => translator([training, shared], lang);

test('every code is sampled, made by the code that gives it, and has an expectation', () => {
  assert.deepEqual(Object.keys(FALLBACK_REASONS).sort(), [...Object.keys(WORKER_REASONS), ...Object.keys(CLIENT_REASONS)].sort());
  assert.deepEqual(Object.keys(SAMPLES).sort(), Object.keys(FALLBACK_REASONS).sort());
  assert.deepEqual(Object.keys(EXPECTED).sort(), Object.keys(FALLBACK_REASONS).sort());
  for (const [code, r] of Object.entries(SAMPLES)) assert.equal(r.code, code, JSON.stringify(r));
});

test('every code has its message in every language, with exactly the placeholders its reason fills', () => {
  const problems = [];
  for (const [code, english] of Object.entries(FALLBACK_REASONS)) {
    for (const lang of LANGUAGES) {
      const message = shared[lang][reasonKey(code)];
      if (typeof message !== 'string') problems.push(`${lang} lacks ${reasonKey(code)}`);
      else if (placeholders(message).join() !== placeholders(english).join()) problems.push(`${lang} ${reasonKey(code)} has {${placeholders(message)}}, the reason fills {${placeholders(english)}}`);
    }
  }
  // No message for a code that no longer exists.
  for (const lang of LANGUAGES) {
    for (const key of Object.keys(shared[lang]).filter((k) => k.startsWith('worker.reason.'))) {
      if (!Object.hasOwn(FALLBACK_REASONS, key.slice('worker.reason.'.length))) problems.push(`${lang} ${key}: no such code`);
    }
  }
  assert.deepEqual(problems, []);
});

test('each code says, in English and in Spanish, what it means', () => {
  for (const lang of LANGUAGES) {
    const t = tFor(lang);
    for (const [code, r] of Object.entries(SAMPLES)) assert.match(reasonText(t, r), EXPECTED[code][lang], `${code} in ${lang}`);
  }
});

test('the words shown come from the code alone: a reworded English message, or another code\'s, changes nothing', () => {
  const reworded = Object.fromEntries(Object.entries(FALLBACK_REASONS).map(([code, m]) => [code, `REWORDED ${code}: ${placeholders(m).map((p) => `{${p}}`).join(' ')}`]));
  const codes = Object.keys(SAMPLES);
  for (const lang of LANGUAGES) {
    const t = tFor(lang);
    codes.forEach((code, i) => {
      const r = SAMPLES[code];
      const expected = reasonText(t, r);
      const rewordedReason = workerReason(code, r.params, reworded);
      // Another code's English message in its place (the one that comes next), as text matching would misread.
      const other = SAMPLES[codes[(i + 1) % codes.length]].reason;
      for (const variant of [rewordedReason, { ...r, reason: other }, { code, params: r.params }]) {
        assert.equal(reasonText(t, variant), expected, `${code} in ${lang}, reason ${JSON.stringify(variant.reason)}`);
        const client = { mode: 'main', fallback: variant };
        assert.equal(modeText(t, client), t('training.modeMain', { reason: expected }));
        assert.equal(modeText(t, client, 1, 'model'), t('training.modeMainModel', { reason: expected }));
        const note = computeText(t, 'main', variant);
        assert.ok(!/REWORDED/.test(note) && !/REWORDED/.test(modeText(t, client)), note);
        if (code !== 'file-url') assert.ok(note.includes(expected), `${code} in ${lang}: ${note}`);
      }
    });
  }
});

test('modeText and computeText: the whole sentences, in Spanish and English', () => {
  const es = tFor('es'), en = tFor('en');
  const csp = { mode: 'main', fallback: SAMPLES.csp };
  assert.match(modeText(es, csp), /^El entrenamiento se hace en la propia página \(su hilo principal\), en ráfagas cortas entre fotogramas: la Content-Security-Policy de esta página no permite Workers blob: \(script-src\), que HeadLab necesita/);
  assert.match(modeText(en, csp), /^Training runs on the page itself \(its main thread\), in short bursts between frames: this page’s Content-Security-Policy does not allow blob: Workers \(script-src\)/);
  assert.match(modeText(es, csp, 1, 'model'), /^El modelo se ejecuta en la propia página/);
  assert.match(computeText(es, 'main', SAMPLES.csp), /^Los cálculos se hacen en la propia página \(su hilo principal\): la Content-Security-Policy de esta página no permite Workers blob: \(script-src\)/);
  assert.match(computeText(en, 'main', SAMPLES['worker-crash']), /^Calculations run on the page itself \(its main thread\): the Worker stopped with an error\.$/);
  // Opened from a file: the measuring elements' own sentence.
  assert.match(computeText(es, 'main', SAMPLES['file-url']), /^La página se abrió desde un archivo, así que los cálculos/);
  // In a Worker, or not known yet.
  assert.match(modeText(es, { mode: 'worker' }), /^El entrenamiento se hace en un Web Worker/);
  assert.match(modeText(es, { mode: 'worker' }, 4), /entre 4 hilos/);
  assert.equal(modeText(es, { mode: null }), '');
  assert.equal(modeText(es, null), '');
  assert.match(computeText(es, 'worker', null), /^Los cálculos largos se hacen en segundo plano/);
  assert.equal(computeText(es, null, null), '');
});

test('fallbackReason: the clients\' codes beside worker-start.js\'s; an unknown code is a TypeError', () => {
  assert.deepEqual(fallbackReason('csp', { directive: 'worker-src' }), workerReason('csp', { directive: 'worker-src' }));
  assert.equal(fallbackReason('wasm-load', { detail: 'x' }).reason, 'the Worker could not load WebAssembly (x)');
  assert.throws(() => workerReason('wasm-load', { detail: 'x' }), TypeError, 'the API\'s own table has no client codes');
  assert.throws(() => fallbackReason('wasm'), /code must be one of/);
});

test('cspCause names the directive to add: a CompileError naming unsafe-eval, a refusal of the file\'s URL, nothing else', () => {
  const chromium = 'HTTP 200, application/wasm; CompileError: WebAssembly.compileStreaming(): Compiling or instantiating WebAssembly module violates ' +
    'the following Content Security policy directive because \'unsafe-eval\' is not an allowed source of script in the following Content Security Policy directive: "script-src \'self\'".';
  const wasmEval = { directive: 'script-src', source: "'wasm-unsafe-eval'" };
  assert.deepEqual(cspCause(chromium, null), wasmEval);
  assert.deepEqual(cspCause('the request failed (Failed to fetch)', null, [{ directive: 'script-src', blocked: 'wasm-eval' }]), wasmEval);
  const wasm = `${CDN}headlab_core.wasm`;
  assert.deepEqual(cspCause('the request failed (Failed to fetch)', wasm, [{ directive: 'connect-src', blocked: wasm }], PAGE), { directive: 'connect-src', source: new URL(CDN).origin });
  assert.deepEqual(cspCause('x', `${PAGE}/a.wasm`, [{ directive: 'connect-src', blocked: `${PAGE}/a.wasm` }], PAGE), { directive: 'connect-src', source: "'self'" });
  assert.deepEqual(cspCause('x', `${PAGE}/headlab-worker.js`, [{ directive: 'worker-src', blocked: `${PAGE}/headlab-worker.js` }], PAGE),
    { directive: 'worker-src', source: "'self'" });
  // A refusal of something else (another origin, an image), a plain 404, a CORS failure: not the policy's doing.
  assert.equal(cspCause('HTTP 404 Not Found', wasm, [{ directive: 'connect-src', blocked: 'https://elsewhere.example/x' }], PAGE), null);
  assert.equal(cspCause('the request failed (Failed to fetch)', wasm, [{ directive: 'img-src', blocked: wasm }], PAGE), null);
  assert.equal(cspCause('CompileError: WebAssembly.compile(): expected magic word', wasm, [], PAGE), null);
});
