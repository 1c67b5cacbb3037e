// Loading the WebAssembly modules: the SIMD probe (simd.js) and instantiate(), which finds a module's
// .wasm (locateFile, wasmBinary, fs under Node) and explains a failed load.
import { MODULES } from '../headlab-files.js';

export const isNode = typeof process === 'object' && process.versions != null && process.versions.node != null &&
  typeof window === 'undefined' && typeof importScripts !== 'function';

/**
 * Under Node, reads a file (a path or a file: URL) into bytes. This module names no Node
 * built-in, so browser bundles never meet one: the package's "node" entry (headlab.node.js)
 * registers fs.readFile under a global symbol, and Node ≥ 20.16 also offers it through
 * process.getBuiltinModule when this file is imported by its path.
 */
function nodeReadFile() {
  const registered = globalThis[Symbol.for('headlab.readFile')];
  if (typeof registered === 'function') return registered;
  const fs = globalThis.process?.getBuiltinModule?.('fs/promises');
  if (fs) return fs.readFile;
  throw new Error('HeadLab under Node reads its .wasm files with fs: import it as the package (`headlab`, whose "node" entry provides fs), ' +
    'use Node 20.16 or later, or pass the bytes as wasmBinary (and trainWasmBinary).');
}

/**
 * A Node built-in module, without naming it in an import (so browser bundles never meet one):
 * process.getBuiltinModule, Node 20.16 or later (the package's engines). undefined elsewhere.
 */
export function nodeBuiltin(name) {
  return globalThis.process?.getBuiltinModule?.(name);
}

export { simdSupported } from './simd.js';

export async function instantiate(module, flavour, options) {
  const { file, load, url } = MODULES[module][flavour];
  const moduleArgs = {};
  const binary = { core: options.wasmBinary, train: options.trainWasmBinary, pretrained: options.pretrainedWasmBinary }[module];
  if (binary) moduleArgs.wasmBinary = binary;
  // Where the .wasm is looked for: locateFile's answer, else next to this file in gen/ (in a
  // Vite or webpack bundle, wherever the bundler put the file it emitted).
  const defaultUrl = url();
  const genDir = new URL('.', defaultUrl).href;
  const where = options.locateFile ? String(options.locateFile(`${file}.wasm`, genDir)) : defaultUrl.href;
  // Emscripten's loader asks for the file by name; it gets the one resolved here.
  moduleArgs.locateFile = (name, prefix) => (name === `${file}.wasm` ? where : options.locateFile ? options.locateFile(name, prefix) : prefix + name);
  const advice = `Serve ${file}.wasm next to ${file}.mjs, or tell createHeadlab where it is with locateFile ` +
    '(or pass its bytes as wasmBinary); a web server must send it in full, as application/wasm.';
  if (isNode && !moduleArgs.wasmBinary) {
    // The glue is built for browsers and Workers; under Node the bytes are read here.
    const readFile = nodeReadFile();
    const path = /^[a-z]+:\/\//i.test(where) ? new URL(where) : where;
    try {
      moduleArgs.wasmBinary = await readFile(path);
    } catch (e) {
      throw new Error(`HeadLab could not load its WebAssembly module ${file}.wasm from ${where}: ${e.code ?? e.message}. ${advice}`, { cause: e });
    }
  }
  // In browsers the .wasm is fetched and compiled here, once: a 404 or a refused request is then
  // one clear Error, where Emscripten's loader would ask twice more and print its own warnings
  // (bytes given as wasmBinary are compiled here too, for the same reason).
  const glue = load();
  glue.catch(() => {});  // awaited below, unless the .wasm failed first
  const loadError = (why, cause) => new Error(`HeadLab could not load its WebAssembly module ${file}.wasm from ${where}: ${why}. ${advice}`, { cause });
  let compiled = null;
  if (!isNode && moduleArgs.wasmBinary) {
    try {
      compiled = { module: await WebAssembly.compile(moduleArgs.wasmBinary), status: '' };
    } catch (e) {
      throw loadError(`${e?.name ?? 'Error'}: ${e?.message ?? e}`, e);
    }
  } else if (!isNode && typeof fetch === 'function' && !/^file:/i.test(where)) {
    compiled = await compileFrom(where, loadError);
  }
  let failed = null;
  if (compiled) {
    let fail;
    failed = new Promise((_, reject) => { fail = reject; });
    moduleArgs.instantiateWasm = (imports, receive) => {
      WebAssembly.instantiate(compiled.module, imports).then((instance) => receive(instance, compiled.module), (e) => fail(
        loadError(`${compiled.status ? `${compiled.status}; ` : ''}${e?.name ?? 'Error'}: ${e?.message ?? e}`, e)));
      return {};
    };
  }
  const factory = (await glue).default;
  try {
    const made = factory(moduleArgs);
    return await (failed ? Promise.race([made, failed]) : made);
  } catch (e) {
    if (String(e?.message).startsWith('HeadLab could not load')) throw e;  // the instantiation above failed
    // Emscripten wraps the cause as "Aborted(…). Build with -s ASSERTIONS=1 for more info.", twice over at times.
    let reason = String(e?.message ?? e).replace(/\s*Build with -s ASSERTIONS=1 for more info\.?/g, '').trim();
    for (let i = 0; i < 3; i++) reason = reason.replace(/^(RuntimeError: )?Aborted\((.*)\)\.?$/s, '$2');
    // Emscripten's message does not say which URL failed or why: ask the server once more, for the status.
    let status = compiled?.status ?? '';
    if (!compiled && !isNode && !moduleArgs.wasmBinary && typeof fetch === 'function') {
      status = await fetch(where).then((r) => (r.ok ? `HTTP ${r.status}, ${r.headers.get('content-type') ?? 'no content type'}` : `HTTP ${r.status} ${r.statusText}`.trim()),
        (f) => `the request failed (${f?.message ?? f}; blocked by CORS or the network?)`);
    }
    throw new Error(`HeadLab could not load its WebAssembly module ${file}.wasm from ${where}: ${status ? `${status}; ` : ''}${reason}. ${advice}`, { cause: e });
  }
}

/**
 * Fetches and compiles a .wasm (streaming where the server sends application/wasm, from the bytes
 * otherwise) with one request, as Emscripten's loader would (same-origin credentials). Returns
 * { module, status }; throws `error(reason, cause)` when the request fails, answers an HTTP error
 * or the bytes do not compile.
 */
async function compileFrom(url, error) {
  let response;
  try {
    response = await fetch(url, { credentials: 'same-origin' });
  } catch (f) {
    throw error(`the request failed (${f?.message ?? f}; blocked by CORS or the network?)`, f);
  }
  if (!response.ok) throw error(`HTTP ${response.status} ${response.statusText}`.trim());
  const type = response.headers.get('content-type');
  const status = `HTTP ${response.status}, ${type ?? 'no content type'}`;
  try {
    const module = typeof WebAssembly.compileStreaming === 'function' && /^application\/wasm\b/i.test(type ?? '')
      ? await WebAssembly.compileStreaming(response)
      : await WebAssembly.compile(await response.arrayBuffer());
    return { module, status };
  } catch (e) {
    throw error(`${status}; ${e?.name ?? 'Error'}: ${e?.message ?? e}`, e);
  }
}
