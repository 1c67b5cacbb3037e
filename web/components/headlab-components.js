// HeadLab components: the one entry that registers every element, each loaded on first use.
//   <script type="module" src=".../headlab-components.js"></script>
//   <headlab-worked-example></headlab-worked-example>
// A page with one element downloads that element's code only (entries/<name>.js and the chunks it
// imports): this module watches the document for HeadLab tags and imports an element's code the
// first time its tag appears. Until then each element is a sized skeleton saying "Loading …", at
// the height it will have once drawn (shared/elements/reserve.js), so nothing below it moves.
// If its code does not load (a missing or refused headlab-chunk-*.js), the skeleton says so in words.
// The whole set at once, for classic scripts: headlab-components-all.js.
//
// Elements inside another component's shadow root are not seen by the watcher: call
// loadElement(tag) for those, or import the element's own module (entries/<name>.js).
// The builds bundle this module on its own, with what it imports statically inside (no chunk to wait
// for before it can start an element's download): its dynamic imports stay files of the main build
// (entries/<name>.js → headlab-<name>.js, shared/lab/lab-entry.js → headlab-lab.js).

import { BASE_URL } from './shared/lab/assets.js';
import { reserveRoom, releaseRoom } from './shared/elements/reserve.js';
import { wasmNextToBundle } from 'headlab:layout';
import preloads from 'headlab:preloads';
import { simdSupported } from '../lib/api/simd.js';

const LOADERS = {
  'headlab-worked-example': () => import('./entries/worked-example.js'),
  'headlab-heads': () => import('./entries/heads.js'),
  'headlab-params': () => import('./entries/params.js'),
  'headlab-scaling': () => import('./entries/scaling.js'),
  'headlab-misconceptions': () => import('./entries/misconceptions.js'),
  'headlab-choosing-h': () => import('./entries/choosing-h.js'),
  'headlab-trainer': () => import('./entries/trainer.js'),
  'headlab-language-model': () => import('./entries/language-model.js'),
  'headlab-model-explorer': () => import('./entries/model-explorer.js'),
  'headlab-theme-toggle': () => import('./entries/theme-toggle.js'),
};

/** Every HeadLab tag, in the order of the site. */
export const tags = Object.keys(LOADERS);

const loads = new Map();  // tag → Promise of the element's module

const preloaded = new Set();
/**
 * Asks for `files` (next to this module) now, as <link rel=preload> does: the chunks an element's
 * code imports (the site's build lists them, headlab:preloads), which the browser would otherwise
 * find only once that code had arrived, and the .wasm the API will fetch (as `fetch`, in the mode
 * it uses: CORS, same-origin credentials). The npm package's build lists none (its bundler names the files).
 */
function preload(files, as = 'modulepreload') {
  for (const file of files ?? []) {
    if (preloaded.has(file)) continue;
    preloaded.add(file);
    const link = document.createElement('link');
    if (as === 'modulepreload') link.rel = 'modulepreload';
    else Object.assign(link, { rel: 'preload', as, crossOrigin: 'anonymous' });
    link.href = new URL(file, BASE_URL).href;
    (document.head ?? document.documentElement).append(link);
  }
}

/**
 * Fetches `files` (next to this module) into the HTTP cache, for a Worker to find there: a Worker
 * has its own module map, and a <link rel=preload> that the page itself never uses draws a warning.
 * Same mode as the API's own requests (CORS, same-origin credentials).
 */
function warmCache(files) {
  for (const file of files ?? []) {
    if (preloaded.has(file)) continue;
    preloaded.add(file);
    fetch(new URL(file, BASE_URL).href, { credentials: 'same-origin' }).then((r) => r.arrayBuffer()).catch(() => {});
  }
}

// The elements whose first draw waits for the training module: the trainer loads it on the page,
// the language model in its Worker (where both are single-threaded: not on cross-origin isolated pages).
const TRAIN_TAGS = new Set(['headlab-trainer', 'headlab-language-model']);

let warmed = false;
/**
 * What every computing element waits for besides its own code, started at once instead of after
 * it: the API and its WebAssembly module (the page's one instance, which the element's getLab()
 * then returns: one fetch), and the training module of the trainer and the language model.
 * KaTeX's fonts are not among them: an element draws before its formulas are shown (shared/elements/base.js),
 * and the fonts load once its formulas are laid out, off the link its code and module need first.
 * A failure here is the element's to report.
 */
function warmUp(tag) {
  // The trainer also needs the training module (headlab_train.wasm) on the page before it draws
  // (the language model asks its Worker, which it starts at once, for what it needs of it).
  if (tag === 'headlab-trainer') {
    import('./shared/lab/lab-entry.js').then((m) => m.getLab()).then((lab) => lab.tasks()).catch(() => {});
  }
  if (TRAIN_TAGS.has(tag) && preloads && wasmNextToBundle && !globalThis.crossOriginIsolated) {
    const train = simdSupported() ? 'headlab_train' : 'headlab_train_scalar';
    warmCache([`${train}.wasm`, ...preloads[train]]);
  }
  if (!warmed) {
    warmed = true;
    import('./shared/lab/lab-entry.js').then((m) => m.getLab()).catch(() => {});
    if (preloads) {
      preload(preloads['headlab-lab']);
      const core = simdSupported() ? 'headlab_core' : 'headlab_core_scalar';
      preload(preloads[core]);
      if (wasmNextToBundle) preload([`${core}.wasm`], 'fetch');
    }
  }
}

/** Loads and registers the element `tag` (once); resolves to its module ({ Headlab… class }). */
export function loadElement(tag) {
  const load = LOADERS[tag];
  if (!load) return Promise.reject(new Error(`loadElement: "${tag}" is not a HeadLab element; expected one of ${tags.join(', ')}`));
  // On a server (Node, server rendering) the tag is sent as HTML; the browser loads its code.
  if (typeof customElements === 'undefined' || typeof document === 'undefined') {
    return Promise.reject(new Error(`loadElement("${tag}"): custom elements need a browser's document and customElements, ` +
      'which this environment (a server or Node) does not have. Render the tag as HTML; importing \'headlab/components\' ' +
      'in the browser loads its code.'));
  }
  if (!loads.has(tag)) {
    // The element's entry is asked for first, then the API (which then asks for the .wasm).
    const pending = load();
    if (preloads) preload(preloads[tag]);
    pending.catch((e) => { loads.delete(tag); explainFailure(tag, e); });
    loads.set(tag, pending);
    if (tag !== 'headlab-theme-toggle') warmUp(tag);
  }
  return loads.get(tag);
}

/**
 * createHeadlab() of web/lib/headlab.js, except that without options it resolves to the
 * instance the elements use (one per page). The API's code is loaded on the first call.
 * @param {object} [options] as for createHeadlab of web/lib/headlab.js
 */
export async function createHeadlab(options) {
  const lab = await import('./shared/lab/lab-entry.js');
  return options === undefined ? lab.getLab() : lab.createHeadlab(options);
}

// The skeleton of an element whose code has not arrived (a document rule: it has no shadow root yet).
// The box is the element's own (shared/elements/styles.js :host): same margin, border and box sizing.
const SKELETON_CSS = `${tags.filter((t) => t !== 'headlab-theme-toggle').map((t) => `${t}:not(:defined)`).join(',\n')} {
  display: block; box-sizing: border-box; max-width: 100%; min-height: 24rem; margin: 1rem 0; padding: 1rem;
  border: 1px solid color-mix(in srgb, currentColor 22%, transparent); border-radius: 10px;
}
${tags.filter((t) => t !== 'headlab-theme-toggle').map((t) => `${t}:not(:defined)::before`).join(',\n')} {
  content: "Loading …"; display: block; opacity: 0.75; font: 15px/1.5 system-ui, sans-serif;
}
/* The page's fallback content inside the tag (for readers without JavaScript) is not shown while the code loads. */
${tags.filter((t) => t !== 'headlab-theme-toggle').map((t) => `${t}:not(:defined):not([data-headlab-failed]) > *`).join(',\n')} { visibility: hidden; }
headlab-theme-toggle:not(:defined) { display: inline-block; min-width: 9.5rem; min-height: 2.3rem; }
[data-headlab-failed]::before { content: none !important; }`;

function installSkeleton() {
  if (document.querySelector('style[data-headlab-skeleton]')) return;
  const style = document.createElement('style');
  style.dataset.headlabSkeleton = '';
  style.textContent = SKELETON_CSS;
  (document.head ?? document.documentElement).prepend(style);
}

/** The part of the code that did not load, from the page's resource timing (HTTP status), if it says. */
function refusedFile() {
  const entries = typeof performance !== 'undefined' ? performance.getEntriesByType('resource') : [];
  const failed = entries.filter((r) => r.name.startsWith(BASE_URL) && /\.m?js$/.test(new URL(r.name).pathname) && r.responseStatus >= 400);
  const last = failed[failed.length - 1];
  return last ? `${new URL(last.name).pathname.split('/').pop()}, HTTP ${last.responseStatus}` : '';
}

/** Replaces the skeleton of every `tag` on the page with why its code did not load (plain text). */
function explainFailure(tag, error) {
  if (typeof document === 'undefined') return;
  const file = refusedFile();
  const from = new URL(BASE_URL);
  const crossOrigin = location.protocol !== 'file:' && from.origin !== location.origin;
  const lines = [
    `This demo could not start: part of its code${file ? ` (${file})` : ''} did not load.`,
    crossOrigin
      ? `For the course author: HeadLab is served from ${from.origin}, another origin than this page, and that server did not allow ` +
        'this page to load it. Serve every HeadLab file with the header Access-Control-Allow-Origin, or load ' +
        'headlab-components.classic.js instead, which works from any origin (HeadLab docs/embedding.md, “Embedding from another origin”).'
      : 'A file may be missing, or the page’s Content-Security-Policy (script-src) may refuse it. Reloading the page may help; if you run ' +
        'the site, check that every headlab-chunk-*.js file sits next to headlab-components.js and is served in full.',
    `Details: ${String(error?.message ?? error) || 'no reason given'}`,
  ];
  for (const node of document.querySelectorAll(`${tag}:not(:defined)`)) {
    if (node.shadowRoot) continue;
    const root = node.attachShadow({ mode: 'open' });
    const box = document.createElement('div');
    box.setAttribute('role', 'alert');
    box.dataset.testid = 'fatal';
    const strong = document.createElement('strong');
    strong.textContent = lines[0];
    box.append(strong);
    for (const line of lines.slice(1)) {
      const p = document.createElement('p');
      p.textContent = line;
      box.append(p);
    }
    root.append(box);
    node.setAttribute('data-headlab-failed', '');
    releaseRoom(node);
  }
}

const SELECTOR = tags.join(',');

/** Reserves room for, and starts loading, every HeadLab element in or under `root` not yet defined. */
function visit(root) {
  const found = root.matches?.(SELECTOR) ? [root] : [];
  if (root.firstElementChild) found.push(...root.querySelectorAll(SELECTOR));
  for (const node of found) {
    if (customElements.get(node.localName)) continue;
    reserveRoom(node);
    loadElement(node.localName).catch(() => {});
  }
}

if (typeof document !== 'undefined' && typeof customElements !== 'undefined') {
  installSkeleton();
  visit(document.documentElement);
  // Elements added later (a page that builds its content with script); the watcher stops once
  // every element's code is in.
  const watcher = new MutationObserver((records) => {
    for (const record of records) {
      for (const node of record.addedNodes) if (node.nodeType === 1) visit(node);
    }
    if (tags.every((t) => customElements.get(t))) watcher.disconnect();
  });
  watcher.observe(document.documentElement, { childList: true, subtree: true });
}
