// node build.mjs: bundles src/main.js into dist/ for index.html.
import * as esbuild from 'esbuild';

await esbuild.build({
  entryPoints: [
    'src/main.js',
    // createParallelLayer's Worker, beside the chunks (esbuild does not bundle
    // new Worker(new URL(…, import.meta.url)) by itself); drop it if the app never calls createParallelLayer.
    { in: 'node_modules/headlab/web/lib/headlab-parallel-worker.js', out: 'headlab-parallel-worker' },
  ],
  bundle: true, format: 'esm', splitting: true, platform: 'browser', target: 'es2022',
  outdir: 'dist',
  loader: { '.wasm': 'file' },   // import url from 'headlab/wasm/….wasm' gives the emitted file's URL
  logLevel: 'warning',
});
