// tools/serve.mjs's `drop` switch, which the offline engine check uses in place of a browser's own
// offline mode: the paths it chooses get no answer (the connection is closed, so fetch rejects as on a
// lost network), asked again on every request; everything else is served; a `drop` that is not a function
// is refused naming it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../../tools/serve.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const get = (url) => fetch(url, { headers: { Connection: 'close' } });

test('serve: `drop` closes the chosen requests unanswered, asked on every request; the rest are served', async () => {
  let gone = true;
  const asked = [];
  const server = await serve({ port: 0, root: path.join(repo, 'web'), drop: (pathname) => { asked.push(pathname); return gone && pathname.endsWith('.hlm'); } });
  try {
    await assert.rejects(get(new URL('models/induction.hlm', server.url)), (e) => e instanceof TypeError, 'no answer: fetch rejects');
    const other = await get(new URL('lib/headlab.js', server.url));
    assert.equal(other.status, 200);
    await other.arrayBuffer();
    gone = false;
    const back = await get(new URL('models/induction.hlm', server.url));
    assert.equal(back.status, 200);
    assert.deepEqual(new Uint8Array(await back.arrayBuffer()), new Uint8Array(readFileSync(path.join(repo, 'web/models/induction.hlm'))));
    assert.deepEqual(asked, ['/models/induction.hlm', '/lib/headlab.js', '/models/induction.hlm']);
  } finally {
    await server.close();
  }
  assert.throws(() => serve({ port: 0, drop: true }), /drop must be a function/);
});
