// Precompressed copies of a built site, for servers that send them as they are (tools/serve.mjs,
// nginx's gzip_static / brotli_static, Netlify): <file>.br (brotli, quality 11) and <file>.gz
// (gzip, level 9) next to each compressible file of at least MIN_BYTES, each kept only when smaller
// than the original. scripts/bundle.mjs runs it on dist/.
import { readFile, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlibConstants, gzip } from 'node:zlib';

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

export const COMPRESSIBLE = /\.(js|mjs|css|html|json|wasm|svg|txt|hlm)$/;
export const MIN_BYTES = 1024;

async function* filesUnder(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(p);
    else yield p;
  }
}

/**
 * Writes the .br and .gz copies under `dir`. Resolves to { files, bytes, br, gz }: how many files
 * were compressible, their bytes, and the bytes of the copies written.
 * @example
 * const { bytes, br } = await precompress('dist');
 */
export async function precompress(dir) {
  const total = { files: 0, bytes: 0, br: 0, gz: 0 };
  const files = [];
  for await (const file of filesUnder(dir)) {
    if (!COMPRESSIBLE.test(file)) continue;
    const bytes = await readFile(file);
    if (bytes.length >= MIN_BYTES) files.push({ file, bytes });
  }
  // The compressions run on libuv's threads, as many files at once as the machine has cores, the
  // largest first (brotli at quality 11 is most of a bundle's time: 26 s of CPU for 10 MB, one
  // file after another on one core before). The copies are the same bytes whatever the order.
  files.sort((a, b) => b.bytes.length - a.bytes.length);
  const one = async ({ file, bytes }) => {
    const [br, gz] = await Promise.all([
      brotliAsync(bytes, { params: {
        [zlibConstants.BROTLI_PARAM_QUALITY]: 11,
        [zlibConstants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
        [zlibConstants.BROTLI_PARAM_MODE]: /\.(wasm|hlm)$/.test(file) ? zlibConstants.BROTLI_MODE_GENERIC : zlibConstants.BROTLI_MODE_TEXT,
      } }),
      gzipAsync(bytes, { level: 9 }),
    ]);
    if (br.length < bytes.length) { await writeFile(`${file}.br`, br); total.br += br.length; }
    if (gz.length < bytes.length) { await writeFile(`${file}.gz`, gz); total.gz += gz.length; }
    total.files++;
    total.bytes += bytes.length;
  };
  const lanes = Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
  await Promise.all(Array.from({ length: lanes }, async () => {
    for (let next = files.shift(); next; next = files.shift()) await one(next);
  }));
  return total;
}
