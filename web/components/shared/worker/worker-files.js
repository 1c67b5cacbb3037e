// The elements' Worker scripts, named relative to the built file that holds this code (every
// build puts its Workers next to its entries and chunks: dist/ for the site, components/ in the
// npm package). Each is written as one literal `new Worker(new URL('./…', import.meta.url),
// { type: 'module', name: '…' })`, the pattern Vite and webpack 5 bundle as a Worker entry of its
// own; `url` is the same file for callers that start the Worker another way.

export const WORKER_FILES = {
  'headlab-worker.js': {
    url: () => new URL('./headlab-worker.js', import.meta.url),
    start: () => new Worker(new URL('./headlab-worker.js', import.meta.url), { type: 'module', name: 'headlab-compute' }),
  },
  'headlab-trainer-worker.js': {
    url: () => new URL('./headlab-trainer-worker.js', import.meta.url),
    start: () => new Worker(new URL('./headlab-trainer-worker.js', import.meta.url), { type: 'module', name: 'headlab-trainer' }),
  },
  'headlab-lm-worker.js': {
    url: () => new URL('./headlab-lm-worker.js', import.meta.url),
    start: () => new Worker(new URL('./headlab-lm-worker.js', import.meta.url), { type: 'module', name: 'headlab-lm' }),
  },
  'headlab-explorer-worker.js': {
    url: () => new URL('./headlab-explorer-worker.js', import.meta.url),
    start: () => new Worker(new URL('./headlab-explorer-worker.js', import.meta.url), { type: 'module', name: 'headlab-explorer' }),
  },
};
