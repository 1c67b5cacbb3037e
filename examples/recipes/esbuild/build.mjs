// node build.mjs: bundles src/main.js into dist/ for index.html.
import { cpSync, mkdirSync, readdirSync } from 'node:fs';
import * as esbuild from 'esbuild';

// The elements' Workers, which esbuild does not bundle by itself (they are named
// new Worker(new URL('./headlab-…-worker.js', import.meta.url)) next to the elements' code).
const workers = ['headlab-worker', 'headlab-trainer-worker', 'headlab-lm-worker', 'headlab-explorer-worker']
  .map((name) => ({ in: `node_modules/headlab/components/${name}.js`, out: name }));

await esbuild.build({
  entryPoints: [
    'src/main.js',
    // createParallelLayer's Worker, beside the chunks (esbuild does not bundle
    // new Worker(new URL(…, import.meta.url)) by itself); drop it if the app never calls createParallelLayer.
    { in: 'node_modules/headlab/web/lib/headlab-parallel-worker.js', out: 'headlab-parallel-worker' },
    ...workers,
  ],
  bundle: true, format: 'esm', splitting: true, platform: 'browser', target: 'es2022',
  outdir: 'dist',
  loader: { '.wasm': 'file' },   // import url from 'headlab/wasm/….wasm' gives the emitted file's URL
  logLevel: 'warning',
});
// What the elements name with new URL('./…', import.meta.url), which esbuild leaves as it is:
// KaTeX's fonts, the trained models, and the .wasm files their Workers load (gen/, where the
// package's headlab.js looks for them).
cpSync('node_modules/headlab/components/katex', 'dist/katex', { recursive: true });
cpSync('node_modules/headlab/components/models', 'dist/models', { recursive: true });
mkdirSync('dist/gen', { recursive: true });
for (const f of readdirSync('node_modules/headlab/web/lib/gen').filter((f) => f.endsWith('.wasm'))) {
  cpSync(`node_modules/headlab/web/lib/gen/${f}`, `dist/gen/${f}`);
}
