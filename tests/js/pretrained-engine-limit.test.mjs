// An engine that lets a WebAssembly memory grow less far than the pretrained module's 4 GiB: the
// probe (engine-memory.js, probeMemoryLimit) finds its limit, and loadPretrained refuses a model from the
// size the server announces with that limit in its words and params, not 4 GiB. This process
// plays such an engine: WebAssembly.Memory's grow is stopped at 2 GiB before anything loads (the
// Emscripten glue grows the module's memory through the same method).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { engineMemoryLimit, probeMemoryLimit } from '../../web/lib/api/engine-memory.js';
import { reposFromFolder, startHub } from './hub-server.mjs';
import { FIXTURES, fixtureFiles, fixtureObjects } from './pretrained-helpers.mjs';

const PAGE = 65536;
const ENGINE_PAGES = 32768;  // 2 GiB
const grow = WebAssembly.Memory.prototype.grow;
WebAssembly.Memory.prototype.grow = function (delta) {
  if (this.buffer.byteLength / PAGE + delta > ENGINE_PAGES) throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded');
  return grow.call(this, delta);
};
const { createHeadlab } = await import('../../web/lib/headlab.js');

/** A stand-in for WebAssembly.Memory whose grow stops past `pages` (and records what it was asked). */
function memoryUpTo(pages, asked = []) {
  return class {
    constructor({ initial }) { this.pages = initial; }
    grow(delta) {
      asked.push(this.pages + delta);
      if (this.pages + delta > pages) throw new RangeError('out of memory');
      this.pages += delta;
      return this.pages - delta;
    }
  };
}

test('probeMemoryLimit: the cap where a memory grows that far, else the largest step below it that grows', () => {
  const cap = 2 ** 32 - PAGE;
  assert.equal(probeMemoryLimit(cap, memoryUpTo(65536)), cap);
  const asked = [];
  assert.equal(probeMemoryLimit(cap, memoryUpTo(40000, asked)), 2 ** 31, 'an engine that stops at 2.4 GiB: 2 GiB');
  assert.deepEqual(asked, [65535, 49152, 32768], 'the cap, 3 GiB, 2 GiB: one fresh memory each');
  assert.equal(probeMemoryLimit(cap, memoryUpTo(16384)), 2 ** 30);
  assert.equal(probeMemoryLimit(cap, memoryUpTo(100)), 2 ** 29, 'none grows: the smallest step');
  assert.equal(probeMemoryLimit(2 ** 30, memoryUpTo(65536)), 2 ** 30, 'never more than the cap');
  // A model that needs no more than every engine gives (1 GiB) asks no probe: the module's cap, though this
  // process's engine stops at 2 GiB (the probe grows a throwaway memory to 4 GiB, which a page's counters report).
  assert.equal(engineMemoryLimit(2 ** 32 - PAGE, 600 * 2 ** 20), 2 ** 32 - PAGE);
  // This process's engine (grow stopped at 2 GiB), probed once.
  assert.equal(engineMemoryLimit(2 ** 32 - PAGE), 2 ** 31);
  assert.equal(engineMemoryLimit(2 ** 32 - PAGE, 600 * 2 ** 20), 2 ** 31, 'once probed, the limit holds for every model');
  assert.equal(engineMemoryLimit(2 ** 30), 2 ** 30);
});

let hub;
const gpt2 = fixtureFiles('gpt2-f32');
const repos = reposFromFolder(FIXTURES);
before(async () => {
  // GPT-2 XL's shapes, its 3 GB announced by Content-Length: within 4 GiB, more than this engine's 2 GiB.
  repos.set('headlab-test/xl', new Map([['main', new Map([
    ['config.json', Buffer.from(JSON.stringify({ ...JSON.parse(gpt2.get('config.json')), n_layer: 48, n_head: 25, n_embd: 1600, n_positions: 1024, n_ctx: 1024, vocab_size: 50257 }))],
    ['tokenizer.json', gpt2.get('tokenizer.json')], ['model.safetensors', gpt2.get('model.safetensors')]])]]));
  hub = await startHub({ repos });
});
after(async () => { await hub.close(); });

test('a model that fits 4 GiB but not this engine is refused before its weights, naming the engine\'s limit', async () => {
  const lab = await createHeadlab();
  hub.faults.set('headlab-test/xl/model.safetensors', { lie: 3_000_000_000 });
  try {
    const events = [];
    await assert.rejects(lab.loadPretrained('headlab-test/xl', { hubUrl: hub.url, onProgress: (p) => events.push(p) }),
      (e) => e instanceof RangeError && e.code === 'too-large' && e.params.limit === 2 ** 31 && e.params.bytes === 3_000_000_000 &&
        /more than the 2048 MiB this browser lets a WebAssembly module hold; nothing more was downloaded/.test(e.message));
    assert.ok(!events.some((p) => p.file === 'model.safetensors' && p.loaded > 0), 'no byte of model.safetensors was read');
  } finally {
    hub.faults.delete('headlab-test/xl/model.safetensors');
  }
  // A model that fits still loads and runs here.
  const model = await lab.loadPretrained(fixtureObjects('gpt2-f32'));
  try {
    assert.equal((await model.run([1, 2, 3])).logits.length, model.info.vocabSize);
  } finally {
    model.dispose();
  }
});
