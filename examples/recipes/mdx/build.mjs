// node build.mjs: compiles the MDX page (with @mdx-js/esbuild) and bundles it into dist/ for index.html.
import { cpSync } from 'node:fs';
import * as esbuild from 'esbuild';
import mdx from '@mdx-js/esbuild';

await esbuild.build({
  entryPoints: ['src/main.jsx'],
  plugins: [mdx()],               // .mdx → JSX for React's automatic runtime
  jsx: 'automatic',               // the .jsx files too
  bundle: true, format: 'esm', splitting: true, platform: 'browser', target: 'es2022',
  outdir: 'dist',
  loader: { '.wasm': 'file' },    // see src/wasm-files.js
  define: { 'process.env.NODE_ENV': '"production"' },  // React's production build
  minify: true,
  logLevel: 'warning',
});
// The elements' KaTeX fonts, which their styles name next to the code (esbuild does not follow
// new URL(…, import.meta.url), so it does not copy them).
cpSync('node_modules/headlab/components/katex', 'dist/katex', { recursive: true });
