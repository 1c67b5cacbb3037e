// node build.mjs: compiles the MDX page (with @mdx-js/esbuild) and bundles it into dist/ for index.html.
import { cpSync, mkdirSync, readdirSync } from 'node:fs';
import * as esbuild from 'esbuild';
import mdx from '@mdx-js/esbuild';

// The elements' Workers, which esbuild does not bundle by itself (they are named
// new Worker(new URL('./headlab-…-worker.js', import.meta.url)) next to the elements' code).
const workers = ['headlab-worker', 'headlab-trainer-worker', 'headlab-lm-worker', 'headlab-explorer-worker']
  .map((name) => ({ in: `node_modules/headlab/components/${name}.js`, out: name }));

await esbuild.build({
  entryPoints: ['src/main.jsx', ...workers],
  plugins: [mdx()],               // .mdx → JSX for React's automatic runtime
  jsx: 'automatic',               // the .jsx files too
  bundle: true, format: 'esm', splitting: true, platform: 'browser', target: 'es2022',
  outdir: 'dist',
  loader: { '.wasm': 'file' },    // see src/wasm-files.js
  define: { 'process.env.NODE_ENV': '"production"' },  // React's production build
  minify: true,
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
