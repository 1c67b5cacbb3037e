// tools/serve.mjs sends the precompressed copies that tools/precompress.mjs writes (as
// scripts/bundle.mjs does for dist/): br when the request accepts it, else gzip, else the file
// itself; always Vary: Accept-Encoding and the original's Content-Type. Range and HEAD requests
// keep working. Each body is decompressed here and compared with the original file's bytes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { serve, acceptedEncodings } from '../../tools/serve.mjs';
import { precompress } from '../../tools/precompress.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let dir;
let server;

// Real files of the site, and two a server must send as they are: a small one and one that does not compress.
const FILES = {
  'lib/headlab.js': 'web/lib/headlab.js',
  'styles/headlab.css': 'web/styles/headlab.css',
  'demos/worked-example/index.html': 'web/demos/worked-example/index.html',
  'models/induction.hlm': 'web/models/induction.hlm',
};

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'headlab-serve-'));
  for (const [to, from] of Object.entries(FILES)) await cp(path.join(repo, from), path.join(dir, to), { recursive: true });
  await writeFile(path.join(dir, 'small.js'), 'export const x = 1;\n');
  await writeFile(path.join(dir, 'noise.wasm'), randomBytes(8192));
  await precompress(dir);
  server = await serve({ port: 0, root: dir });
});

after(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A raw request (no automatic decompression): { status, headers, body: Buffer }. */
function request(file, headers = {}, method = 'GET') {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(file, server.url), { method, headers: { Connection: 'close', ...headers } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const decode = (res) => ({ br: brotliDecompressSync, gzip: gunzipSync }[res.headers['content-encoding']] ?? ((b) => b))(res.body);
const original = (file) => readFile(path.join(dir, file));

test('the bundle step writes .br and .gz copies only for compressible files over 1 KiB that shrink', async () => {
  for (const file of Object.keys(FILES)) {
    for (const ext of ['br', 'gz']) assert.ok((await stat(path.join(dir, `${file}.${ext}`))).size < (await stat(path.join(dir, file))).size, `${file}.${ext} is smaller`);
  }
  await assert.rejects(stat(path.join(dir, 'small.js.br')), /ENOENT/, 'no copy of a file under 1 KiB');
  await assert.rejects(stat(path.join(dir, 'noise.wasm.br')), /ENOENT/, 'no copy that is not smaller');
});

test('Accept-Encoding chooses br, then gzip, then the file itself; the bytes are the original ones', async () => {
  const cases = [['gzip, deflate, br', 'br'], ['br;q=1, gzip;q=0.8', 'br'], ['gzip', 'gzip'], ['br;q=0, gzip', 'gzip'], ['*', 'br'], ['identity', undefined], [undefined, undefined]];
  for (const file of Object.keys(FILES)) {
    const bytes = await original(file);
    const type = (await request(file)).headers['content-type'];
    assert.ok(type && type !== 'application/octet-stream' || file.endsWith('.hlm'), `${file}: a Content-Type (${type})`);
    for (const [accept, encoding] of cases) {
      const res = await request(file, accept === undefined ? {} : { 'Accept-Encoding': accept });
      const what = `${file} with Accept-Encoding: ${accept}`;
      assert.equal(res.status, 200, what);
      assert.equal(res.headers['content-encoding'], encoding, what);
      assert.equal(res.headers['content-type'], type, `${what}: the original's Content-Type`);
      assert.match(res.headers.vary ?? '', /Accept-Encoding/i, `${what}: Vary`);
      assert.equal(Number(res.headers['content-length']), res.body.length, `${what}: Content-Length counts the bytes sent`);
      if (encoding) assert.ok(res.body.length < bytes.length, `${what}: fewer bytes sent (${res.body.length} < ${bytes.length})`);
      assert.ok(decode(res).equals(bytes), `${what}: the decompressed bytes are the file's`);
    }
  }
});

test('files without a smaller copy are sent as they are to every client', async () => {
  for (const file of ['small.js', 'noise.wasm']) {
    const res = await request(file, { 'Accept-Encoding': 'br, gzip' });
    assert.equal(res.headers['content-encoding'], undefined, file);
    assert.ok(res.body.equals(await original(file)), file);
  }
});

test('a range request gets the original bytes at those offsets; HEAD sends the headers alone', async () => {
  const bytes = await original('models/induction.hlm');
  const res = await request('models/induction.hlm', { 'Accept-Encoding': 'br, gzip', Range: 'bytes=100-1123' });
  assert.equal(res.status, 206);
  assert.equal(res.headers['content-encoding'], undefined, 'no encoding on a range');
  assert.equal(res.headers['content-range'], `bytes 100-1123/${bytes.length}`);
  assert.ok(res.body.equals(bytes.subarray(100, 1124)));

  const head = await request('lib/headlab.js', { 'Accept-Encoding': 'br' }, 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.headers['content-encoding'], 'br');
  assert.equal(Number(head.headers['content-length']), (await stat(path.join(dir, 'lib/headlab.js.br'))).size);
  assert.equal(head.body.length, 0);
});

test('acceptedEncodings reads q-values and wildcards', () => {
  assert.equal(acceptedEncodings('gzip, deflate, br, zstd'), 'br, gzip');
  assert.equal(acceptedEncodings('br;q=0'), '');
  assert.equal(acceptedEncodings('*;q=0.1, gzip;q=0'), 'br');
  assert.equal(acceptedEncodings(''), '');
  assert.equal(acceptedEncodings('BR'), 'br');
});
