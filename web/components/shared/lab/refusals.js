// What the page's Content-Security-Policy refused. A fetch refused by connect-src fails with
// "Failed to fetch", as a CORS refusal or a dropped connection does; only the
// `securitypolicyviolation` event the browser fires on the document names the directive. The
// refusals are recorded from the first HeadLab module on, once per page (on globalThis under a
// registered symbol: the registrar and the elements may come from separate builds), and read
// when a load fails. cspCause() is pure, tested in Node.

const KEY = Symbol.for('headlab.cspRefusals');

/** The page's record { list: [{ directive, blocked }], listeners }, listening from its first call; null without a document. */
function record() {
  if (typeof document === 'undefined' || typeof document.addEventListener !== 'function') return null;
  let r = globalThis[KEY];
  if (!r) {
    r = { list: [], listeners: new Set() };
    globalThis[KEY] = r;
    document.addEventListener('securitypolicyviolation', (e) => {
      const refusal = { directive: String(e.effectiveDirective || e.violatedDirective || ''), blocked: String(e.blockedURI || '') };
      r.list.push(refusal);
      for (const f of r.listeners) f(refusal);
    });
  }
  return r;
}

/** Starts recording the page's refusals (call it when a HeadLab module loads). */
export function watchRefusals() {
  record();
}

/** The refusals recorded so far: [{ directive, blocked }]. */
export function refusals() {
  return record()?.list.slice() ?? [];
}

/** Calls `f(refusal)` for each refusal from now on; returns the function that stops it. */
export function onRefusal(f) {
  const r = record();
  r?.listeners.add(f);
  return () => r?.listeners.delete(f);
}

const SOURCE_DIRECTIVES = new Set(['connect-src', 'script-src', 'worker-src', 'child-src', 'font-src', 'default-src']);

/**
 * The policy's refusal that explains a failed load, as what to change: { directive, source }
 * (add `source` to `directive`), or null when the policy did not refuse it.
 * @param {string} message the load's error message (a WebAssembly CompileError names 'unsafe-eval')
 * @param {string | null} url the file that failed to load
 * @param {{ directive: string, blocked: string }[]} seen the page's refusals (refusals())
 * @param {string | null} pageOrigin the page's origin: a refused file there is added as 'self'
 * @example cspCause("CompileError: … 'unsafe-eval' is not an allowed source …", null, [], null)
 *   // { directive: 'script-src', source: "'wasm-unsafe-eval'" }
 */
export function cspCause(message, url, seen = [], pageOrigin = null) {
  const wasmEval = { directive: 'script-src', source: "'wasm-unsafe-eval'" };
  if (/CompileError|WebAssembly/.test(message) && /'(wasm-)?unsafe-eval'/.test(message)) return wasmEval;
  let target;
  try {
    target = url ? new URL(url) : null;
  } catch {
    target = null;
  }
  for (const { directive, blocked } of [...seen].reverse()) {
    const d = directive.replace(/-(elem|attr)$/, '');
    if (d === 'script-src' && blocked === 'wasm-eval') return wasmEval;
    if (!target || !SOURCE_DIRECTIVES.has(d)) continue;
    let from;
    try {
      from = new URL(blocked);
    } catch {
      continue;
    }
    if (from.origin !== target.origin) continue;
    return { directive: d, source: from.origin === pageOrigin ? "'self'" : from.origin };
  }
  return null;
}
