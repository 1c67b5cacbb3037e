// hubDownloadSize (web/lib/teach/hub-size.js), which the model explorer asks before it offers a
// repository the learner typed: against the hub stand-in (tests/js/hub-server.mjs) with the
// checkpoints of tests/golden/pretrained/, sizes compared with the files on disk.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startHub, reposFromFolder } from './hub-server.mjs';
import { hubDownloadSize } from '../../web/lib/teach/hub-size.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../golden/pretrained');
const size = (...p) => statSync(path.join(ROOT, ...p)).size;
let hub;
before(async () => {
  const repos = reposFromFolder(ROOT);
  // A repository with only pytorch_model.bin, as TinyStories-1M's main branch.
  repos.set('headlab-test/bin-only', new Map([['main', new Map([['config.json', Buffer.from('{}')], ['pytorch_model.bin', Buffer.alloc(100)]])]]));
  hub = await startHub({ repos });
});
after(() => hub.close());

test('one safetensors file: its size plus the tokenizer\'s, read from HEAD requests only', async () => {
  const r = await hubDownloadSize({ hubUrl: hub.url, id: 'headlab-test/gpt2-f32' });
  assert.equal(r.problem, '');
  assert.equal(r.bytes, size('gpt2-f32', 'model.safetensors') + size('gpt2-f32', 'tokenizer.json'));
  const gets = hub.requests.filter((q) => q.method !== 'HEAD' && q.path.includes('gpt2-f32/'));
  assert.deepEqual(gets, [], 'no file body was fetched from the repository');
});

test('shards: the index\'s total_size', async () => {
  const index = JSON.parse(readFileSync(path.join(ROOT, 'gpt2-sharded', 'model.safetensors.index.json'), 'utf8'));
  const r = await hubDownloadSize({ hubUrl: hub.url, id: 'headlab-test/gpt2-sharded' });
  assert.equal(r.bytes, index.metadata.total_size + size('gpt2-sharded', 'tokenizer.json'));
});

test('only pytorch_model.bin, or nothing: no size, and why', async () => {
  const bin = await hubDownloadSize({ hubUrl: hub.url, id: 'headlab-test/bin-only' });
  assert.equal(bin.bytes, null);
  assert.match(bin.problem, /only pytorch_model\.bin.*refs\/pr/);
  const none = await hubDownloadSize({ hubUrl: hub.url, id: 'headlab-test/nothing-here' });
  assert.equal(none.bytes, null);
  assert.match(none.problem, /no model\.safetensors/);
  await assert.rejects(hubDownloadSize({ hubUrl: hub.url, id: 'not an id' }), /owner\/name/);
});
