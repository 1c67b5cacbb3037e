// The threaded modules (pthreads builds): where they may run, loading one with its pool of thread
// Workers, ending it, and why a lab does without them. headlab_core_threads serves the pthreads
// ParallelLayer (parallel-pthreads.js); headlab_train_threads serves language models that split
// their batches (language-model.js); headlab_pretrained_threads serves pretrained models that split
// each forward pass (pretrained.js). A threaded module is loaded only where SharedArrayBuffer and
// wasm threads are allowed: Node, and cross-origin isolated pages and their Workers. Elsewhere it
// would fail to start, so it is never fetched there.
import { MODULES } from '../headlab-files.js';
import { isNode, nodeBuiltin } from './load.js';

// The threaded modules, each next to its one-thread twin (whose file name shows where the pair
// was served from): `core` for ParallelLayer, `train` for language models that split their
// batches (language-model.js), `pretrained` for pretrained models (pretrained.js). Each glue finds
// its thread Workers' script, NAME.worker.js, through locateFile, in the same folder.
const THREADED = {
  core: { name: 'headlab_core_threads', beside: 'headlab_core.wasm' },
  train: { name: 'headlab_train_threads', beside: 'headlab_train.wasm' },
  pretrained: { name: 'headlab_pretrained_threads', beside: 'headlab_pretrained.wasm' },
};

let liveThreadWorkers = 0;  // thread Workers of threaded modules not yet ended

// Why each lab's threads build did not load, once it failed and the lab went on without it.
// Set by doWithoutThreads, read by threadsUnavailable: nothing else keeps it.
const failures = new WeakMap();
// The errors loadThreaded threw because a module did not load (isLoadFailure).
const loadFailures = new WeakSet();

// A browser's main thread must not block (Emscripten warns, and the page would freeze).
const mainThread = !isNode && typeof window === 'object';
/** Whether this is a browser page's main thread (where nothing may block). */
export const onPageMainThread = mainThread;

/** Thread Workers started by threaded modules that have not ended yet (for lab.liveWorkerCount()). */
export function threadWorkerCount() {
  return liveThreadWorkers;
}

/**
 * Why a threaded module cannot run for this lab, or '' when it can be tried: it needs
 * SharedArrayBuffer with cross-origin isolation (always there in Node), the SIMD build, and the
 * module's files in the folder its one-thread twin (headlab_core.wasm, headlab_train.wasm) is
 * loaded from (createHeadlab's locateFile, or next to headlab.js), judged by that file keeping its
 * name: a bundler that renamed the files it emitted (Vite, webpack, esbuild's file loader) did not
 * emit these. Once the lab went on without a module that failed to load ({@link doWithoutThreads}),
 * the reason is kept and given here.
 * @param {'core'|'train'|'pretrained'} [kind]
 */
export function threadsUnavailable(lab, kind = 'core') {
  const failure = failures.get(lab);
  if (failure) return failure;
  if (!isNode && globalThis.crossOriginIsolated !== true) return 'the page is not cross-origin isolated (COOP/COEP headers)';
  if (typeof SharedArrayBuffer !== 'function' || typeof Atomics !== 'object') return 'no SharedArrayBuffer here';
  if (lab._flavour !== 'simd') return 'the threads build is SIMD only';
  const { beside } = THREADED[kind];
  const twin = new URL(twinHref(lab, kind));
  // Its thread Workers are started by Emscripten's glue with new Worker(url): same origin only.
  if (!isNode && globalThis.location && twin.origin !== globalThis.location.origin) {
    return `the threads build is on another origin (${twin.origin}) than this page, and its thread Workers must be same-origin`;
  }
  if (!twin.pathname.endsWith(`/${beside}`)) {
    return `bundled: ${beside} was renamed (by a bundler), so the threads build is not next to it`;
  }
  return '';
}

/**
 * Where the one-thread twin's .wasm is loaded from: locateFile's answer, else next to headlab.js.
 * The threads build is looked for in the same folder, and only when the file there has kept its name.
 */
function twinHref(lab, kind) {
  const def = MODULES[kind].simd.url();
  const { beside } = THREADED[kind];
  if (!lab._options.locateFile) return def.href;
  const where = String(lab._options.locateFile(beside, new URL('.', def).href));
  if (isNode && !/^[a-z][a-z0-9+.-]*:/i.test(where)) return nodeBuiltin('url').pathToFileURL(where).href;
  return new URL(where, globalThis.location?.href ?? def).href;
}

/** Where each file of a threaded module is: next to its twin. */
function locator(lab, kind) {
  const dir = twinHref(lab, kind);
  return (name) => new URL(name, dir).href;
}

/** A file: URL as the path Node's worker_threads and fs want; anything else unchanged. */
function nodePath(where) {
  return /^file:/i.test(where) ? nodeBuiltin('url').fileURLToPath(where) : where;
}

/**
 * Loads a threaded module (`kind`) whose pool holds `workers` thread Workers, all started before it
 * resolves. In browsers it rejects when one of them fails to load (a 404, a wrong MIME type, a
 * blocking policy), where Emscripten's loader would wait for it forever; its Workers are ended
 * then. (In Node the Worker script is the package's own file, and Emscripten throws on its errors.)
 * Every module loaded here must be ended by {@link endModule}.
 * @param {'core'|'train'|'pretrained'} kind
 * @returns {Promise<any>} the Emscripten module
 */
export async function loadThreaded(lab, kind, workers) {
  try {
    return await load(lab, kind, workers);
  } catch (e) {
    const error = e !== null && typeof e === 'object' ? e : new Error(String(e));
    loadFailures.add(error);
    throw error;
  }
}

/**
 * Whether `error` is one {@link loadThreaded} threw because the module did not load (a file
 * missing, a thread Worker blocked), as opposed to a bad argument found once it had.
 */
export function isLoadFailure(error) {
  return error !== null && typeof error === 'object' && loadFailures.has(error);
}

/**
 * `lab` goes on without threads because its threads build failed to load (`error`, as the load
 * threw it): from now on {@link threadsUnavailable} says so, and 'auto' picks one thread or Workers.
 */
export function doWithoutThreads(lab, error) {
  failures.set(lab, `the threads build did not load (${error?.message ?? error})`);
}

/** What loadThreaded does; whatever it throws is a load failure. */
async function load(lab, kind, workers) {
  const { name } = THREADED[kind];
  const locate = locator(lab, kind);
  const glue = locate(`${name}.mjs`);
  const args = {
    headlabThreads: workers,
    // Thread Workers import the glue from here (the Worker file is a classic script).
    mainScriptUrlOrBlob: glue,
    locateFile: (file) => (isNode ? nodePath(locate(file)) : locate(file)),
  };
  if (isNode) args.wasmBinary = await nodeBuiltin('fs/promises').readFile(nodePath(locate(`${name}.wasm`)));
  // Not a literal import: bundlers must not follow it (the module is loaded only where it runs).
  const factory = (await import(/* webpackIgnore: true */ /* @vite-ignore */ glue)).default;
  const loading = factory(args);  // the pool's Workers exist once this returns (args is the module)
  const failed = new Promise((resolve, reject) => {
    const fail = (e) => reject(new Error(`a thread Worker (${locate(`${name}.worker.js`)}) failed to load: ${e?.message || 'no message'}`));
    if (!isNode) for (const w of args.PThread?.unusedWorkers ?? []) w.addEventListener('error', fail);
  });
  failed.catch(() => {});  // an error after the pool has loaded is not this call's
  let module;
  try {
    module = await Promise.race([loading, failed]);
  } catch (e) {
    args.PThread?.terminateAllThreads();
    throw e;
  }
  const started = threadWorkers(module);
  module._headlabWorkers = started.length;
  liveThreadWorkers += started.length;
  if (isNode) {
    // Idle threads wait on a futex: they need not keep Node running (a language model's step
    // blocks its calling thread until they are done; a layer refs them while a call runs).
    for (const w of started) w.unref?.();
  }
  return module;
}

/**
 * Ends a threaded module at once: deletes `core`, whose destructor asks its threads to stop and
 * joins them (blocking: the language models use this, and run only where they may block), then
 * ends every thread Worker. On a page's main thread nothing is joined, the Workers are ended
 * outright (the layers use stopModule in parallel-pthreads.js there). The module is not used
 * again. Twice is fine.
 */
export function endModule(module, core) {
  try {
    if (core && !mainThread && !core.isDeleted()) core.delete();
  } finally {
    // Not Emscripten's terminateAllThreads: it frees each running thread's stack before its Worker
    // has ended (terminate() is asynchronous), and a thread not joined (a page's main thread joins
    // none) that woke meanwhile ran on freed memory ("memory access out of bounds" from a thread
    // Worker after a pretrained model on a page's main thread was disposed: once in a fresh clone's
    // npm test). The module is not used again, so nothing of it needs freeing: its Workers are ended.
    killModule(module);
  }
}

/** Ends a module's thread Workers with `end()`, once, and stops counting them. */
function release(module, end) {
  if (module._headlabEnded) return;
  module._headlabEnded = true;
  end();
  liveThreadWorkers -= module._headlabWorkers ?? 0;
}

/**
 * Ends every thread Worker of a threaded module at once, calling nothing in the module: after a
 * thread's Worker died (it may have left a lock held). The module is not used again. Twice is fine.
 */
export function killModule(module) {
  release(module, () => {
    for (const w of threadWorkers(module)) w.terminate();
    module.PThread.runningWorkers.length = 0;
    module.PThread.unusedWorkers.length = 0;
  });
}

/** The thread Workers of a threaded module: its pool, running a thread or not. */
export function threadWorkers(module) {
  return [...module.PThread.runningWorkers, ...module.PThread.unusedWorkers];
}
