// The elements on a server (issue 32): Next.js, Astro, SvelteKit and VitePress import modules in Node,
// where there is no DOM. In a bare Node process (no HTMLElement, document or customElements), from an app
// whose node_modules/headlab is this repository with its package build (components/), every element's
// module, 'headlab/components' and its framework entries (react, vue, svelte, preact) import without
// throwing and export their classes (tags readable); loadElement() rejects once, saying why in words, and
// nothing else is raised (no uncaught error, no unhandled rejection: the process exits 0, stderr empty).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildComponents } from '../../tools/package-components.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('every element module and headlab/components import in Node without a DOM; loadElement rejects once, in words', { timeout: 120_000 }, async () => {
  const { elements } = await buildComponents();
  assert.equal(elements.length, 10);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-server-'));
  try {
    mkdirSync(path.join(dir, 'node_modules'));
    symlinkSync(repo, path.join(dir, 'node_modules/headlab'));
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    writeFileSync(path.join(dir, 'server.mjs'), `
for (const name of ['HTMLElement', 'document', 'customElements', 'window', 'location']) {
  if (name in globalThis) throw new Error(name + ' exists in this Node');
}
const out = [];
for (const name of ${JSON.stringify(elements.map((e) => e.name))}) {
  const mod = await import('headlab/components/' + name);
  const [exported, cls] = Object.entries(mod).find(([, v]) => typeof v === 'function');
  out.push(name + ' ' + exported + ' ' + cls.tag);
}
const { tags, loadElement } = await import('headlab/components');
out.push('tags ' + tags.length);
for (const framework of ['react', 'vue', 'svelte', 'preact']) {
  const mod = await import('headlab/components/' + framework);
  out.push(framework + ' ' + (mod.tags === tags));
}
const reasons = [];
for (const tag of [tags[0], tags[1], tags[0]]) await loadElement(tag).then(() => reasons.push('resolved'), (e) => reasons.push(e.message));
await new Promise((r) => setTimeout(r, 200));
console.log(JSON.stringify({ out, reasons }));
`);
    const r = spawnSync(process.execPath, ['server.mjs'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.stderr, '', 'nothing on stderr (no uncaught error, no unhandled rejection)');
    assert.equal(r.status, 0, `exit code 0\n${r.stdout}`);
    const { out, reasons } = JSON.parse(r.stdout);
    assert.deepEqual(out, [...elements.map((e) => `${e.name} ${e.className} ${e.tag}`), 'tags 10', 'react true', 'vue true', 'svelte true', 'preact true']);
    assert.equal(reasons.length, 3);
    for (const reason of reasons) assert.match(reason, /^loadElement\("headlab-[a-z-]+"\): custom elements need a browser's document and customElements/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
