// Copies @huggingface/tokenizers (Apache-2.0, pure JavaScript) from node_modules into
// web/lib/gen/tokenizers.mjs, the file loadPretrained() imports, with its licence in a header
// comment that bundlers keep (/*! … */). Run by scripts/build.sh; the package ships the copy
// (package.json "files": web/lib/gen/*.mjs), so users of HeadLab need no second install.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkgDir = path.join(repo, 'node_modules/@huggingface/tokenizers');
const out = path.join(repo, 'web/lib/gen/tokenizers.mjs');

const pkg = JSON.parse(await readFile(path.join(pkgDir, 'package.json'), 'utf8'));
const code = await readFile(path.join(pkgDir, 'dist/tokenizers.min.mjs'), 'utf8');
const licence = (await readFile(path.join(pkgDir, 'LICENSE'), 'utf8')).replaceAll('*/', '* /');
const header = `/*! ${pkg.name} ${pkg.version} — ${pkg.homepage}
 * Copyright Hugging Face. Licensed under the ${pkg.license} licence, whose text follows.
 * This file is the package's dist/tokenizers.min.mjs, unchanged, copied by HeadLab's scripts/vendor-tokenizers.mjs.
 *
${licence.trimEnd().split('\n').map((l) => ` * ${l}`.trimEnd()).join('\n')}
 */
`;
await mkdir(path.dirname(out), { recursive: true });
await writeFile(out, header + code);
console.log(`vendor-tokenizers: ${path.relative(repo, out)} (${pkg.name} ${pkg.version}, ${(header.length + code.length) >> 10} KiB)`);
