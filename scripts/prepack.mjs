// `npm pack` / `npm publish` run this first: the tarball must hold the built
// WebAssembly modules and their glue, which are build outputs (not in git).
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeCompatTypes } from '../tools/types-compat.mjs';
import { swapIn } from '../tools/package-readme.mjs';
import { buildComponents } from '../tools/package-components.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const gen = path.join(repo, 'web/lib/gen');
const modules = ['headlab_core', 'headlab_core_scalar', 'headlab_train', 'headlab_train_scalar', 'headlab_core_threads', 'headlab_train_threads',
  'headlab_pretrained', 'headlab_pretrained_scalar', 'headlab_pretrained_threads'];
const missing = [...modules.flatMap((m) => [`${m}.mjs`, `${m}.wasm`]), 'headlab_core_threads.worker.js', 'headlab_train_threads.worker.js', 'headlab_pretrained_threads.worker.js', 'package.json', 'tokenizers.mjs'].filter((f) => !existsSync(path.join(gen, f)) || statSync(path.join(gen, f)).size === 0);
if (missing.length > 0) {
  console.error(`prepack: web/lib/gen/ lacks ${missing.join(', ')}: run \`npm run build\` before \`npm pack\`, ` +
    'so that the package holds the WebAssembly modules it loads.');
  process.exit(1);
}
// The types for TypeScript < 5.7 (package.json `typesVersions`), generated from web/lib/headlab.d.ts.
writeCompatTypes();
// The elements for 'headlab/components' (components/, built from web/components/ against the
// package's own web/lib/headlab.js).
await buildComponents();
// The package's README.md (docs/package-readme.md) in place of the repository's, until postpack.
swapIn();
