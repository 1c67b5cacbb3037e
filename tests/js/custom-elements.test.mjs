// The elements' descriptions for tools: custom-elements.json (Custom Elements Manifest) and the
// types of 'headlab/components' (HTMLElementTagNameMap), both written by scripts/custom-elements.mjs.
//  - Neither is stale: the script, run again, writes the same text.
//  - The manifest agrees with the elements as they run: for every element its attributes are exactly
//    what observedAttributes returns, plus attributes its JSDoc documents that only its CSS reads
//    (theme), each of which its source names.
//  - Every tag has its own entry (web/components/entries/<name>.js, 'headlab/components/<name>').
//  - TypeScript (strict, DOM lib) types document.querySelector('headlab-…') as the element, with its
//    attributes' property types, through the package's exports; a wrong enum value does not compile.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, loadElementClasses, parseHeader, MANIFEST, TYPES, frameworkTypesFile } from '../../tools/custom-elements.mjs';
import { buildComponents } from '../../tools/package-components.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);

test('custom-elements.json, headlab-components.d.ts and types/*.d.ts are current (node scripts/custom-elements.mjs)', async () => {
  const { manifest, types, frameworks } = await describe();
  assert.equal(readFileSync(MANIFEST, 'utf8'), manifest, 'custom-elements.json is stale: run node scripts/custom-elements.mjs');
  assert.equal(readFileSync(TYPES, 'utf8'), types, 'web/components/headlab-components.d.ts is stale: run node scripts/custom-elements.mjs');
  assert.deepEqual(Object.keys(frameworks).sort(), ['preact', 'react', 'svelte', 'vue']);
  for (const [framework, text] of Object.entries(frameworks)) {
    assert.equal(readFileSync(frameworkTypesFile(framework), 'utf8'), text, `web/components/types/${framework}.d.ts is stale: run node scripts/custom-elements.mjs`);
  }
});

// Getters that are the elements' plumbing, not their API: the training elements' controller (made on first
// use; the explorer's is public as `controller`), and the round length and run settings the views read.
const INTERNAL_GETTERS = new Set(['ctl', 'roundSteps', 'runLayers', 'runSeed']);

/** The events an element's code dispatches, read from its source and the base classes it extends. */
function dispatched(source) {
  const files = [source, readFileSync(path.join(repo, 'web/components/shared/elements/base.js'), 'utf8')];
  if (/extends TrainingElement\b/.test(source)) files.push(readFileSync(path.join(repo, 'web/components/shared/elements/training-element.js'), 'utf8'));
  const names = files.flatMap((f) => [...f.matchAll(/\bemit\('([a-z-]+)'/g)].map((m) => `headlab-${m[1]}`));
  // An element that does not extend HeadlabElement dispatches its CustomEvents itself.
  if (!/extends (HeadlabElement|TrainingElement)\b/.test(source)) return [...new Set([...source.matchAll(/new CustomEvent\('([a-z-]+)'/g)].map((m) => m[1]))].sort();
  return [...new Set(names)].sort();
}

test('the manifest\'s properties, methods and events are the elements\': each exists as documented, each public getter is documented', async () => {
  const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8'));
  const declared = new Map(manifest.modules.map((m) => [m.declarations[0].tagName, m.declarations[0]]));
  for (const { name, cls } of await loadElementClasses()) {
    const decl = declared.get(cls.tag);
    const source = readFileSync(path.join(repo, `web/components/headlab-${name}.js`), 'utf8');
    assert.equal(/^\s*\*\s*(Methods|Properties)\b/m.test(source.slice(0, source.indexOf('*/'))), false, `${cls.tag}: methods and properties are @method / @prop tags, not prose`);
    const descriptor = (key) => {
      for (let p = cls.prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
        const d = Object.getOwnPropertyDescriptor(p, key);
        if (d) return d;
      }
      return undefined;
    };
    for (const m of decl.members) {
      const d = descriptor(m.name);
      assert.ok(d, `${cls.tag}.${m.name} (in the manifest) exists on the element`);
      if (m.kind === 'method') assert.equal(typeof d.value, 'function', `${cls.tag}.${m.name}() is a method`);
      else assert.ok(d.get, `${cls.tag}.${m.name} is a property`);
      if (m.readonly) assert.equal(d.set, undefined, `${cls.tag}.${m.name} is read-only`);
      else if (m.kind === 'field') assert.ok(d.set, `${cls.tag}.${m.name} can be set`);
    }
    // The element's own getters and its training base's (HeadlabElement's are the base's plumbing; below it, the stand-in for HTMLElement).
    const getters = [];
    for (let p = cls.prototype; p.constructor.name !== 'HeadlabElement' && Object.getPrototypeOf(p) !== Object.prototype; p = Object.getPrototypeOf(p)) {
      for (const key of Object.getOwnPropertyNames(p)) {
        if (!key.startsWith('_') && Object.getOwnPropertyDescriptor(p, key).get) getters.push(key);
      }
    }
    for (const key of getters.filter((k) => !INTERNAL_GETTERS.has(k))) {
      assert.ok(decl.members.some((m) => m.name === key), `${cls.tag}.${key} is public (a getter): document it with @prop`);
    }
    assert.deepEqual(decl.events.map((e) => e.name).sort(), dispatched(source), `${cls.tag}: the events in the manifest are those its code dispatches`);
    assert.ok(decl.events.every((e) => /^CustomEvent<.+>$/.test(e.type.text) && e.type.text !== 'CustomEvent<unknown>'), `${cls.tag}: every event's detail is typed`);
  }
});

test('the manifest lists each element\'s observedAttributes, and only attributes its source reads', async () => {
  const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8'));
  const declared = new Map(manifest.modules.map((m) => [m.declarations[0].tagName, { module: m, decl: m.declarations[0] }]));
  const classes = await loadElementClasses();
  assert.equal(classes.length, 10);
  assert.deepEqual([...declared.keys()].sort(), classes.map(({ cls }) => cls.tag).sort());
  for (const { name, cls } of classes) {
    const { module, decl } = declared.get(cls.tag);
    const observed = [...cls.observedAttributes].sort();
    const listed = decl.attributes.map((a) => a.name);
    const mirrored = decl.attributes.filter((a) => a.fieldName).map((a) => a.name).sort();
    assert.deepEqual(mirrored, cls.props ? observed : [], `${cls.tag}: attributes with a property = observedAttributes`);
    for (const a of observed) assert.ok(listed.includes(a), `${cls.tag}: observed attribute ${a} is in the manifest`);
    const source = readFileSync(path.join(repo, `web/components/headlab-${name}.js`), 'utf8');
    const documented = parseHeader(source).attrs.map((a) => a.name);
    for (const a of listed.filter((x) => !observed.includes(x))) {
      assert.ok(documented.includes(a), `${cls.tag}: ${a} is documented by @attr`);
      assert.ok(source.includes(a) || readFileSync(path.join(repo, 'web/components/shared/elements/styles.js'), 'utf8').includes(`[${a}=`), `${cls.tag}: something reads ${a}`);
    }
    for (const m of decl.members.filter((x) => x.attribute)) assert.ok(m.name in cls.prototype, `${cls.tag}.${m.name} is a property`);
    assert.ok(decl.events.length > 0 && decl.events.every((e) => /^headlab-[a-z-]+$/.test(e.name)), `${cls.tag}: its events`);
    assert.equal(module.path, `components/${name}.js`);
    assert.ok(existsSync(path.join(repo, `web/components/entries/${name}.js`)), `${cls.tag} has an entry of its own`);
  }
});

test('TypeScript types the elements through \'headlab/components\' (strict, DOM)', { timeout: 180_000 }, async () => {
  await buildComponents();
  const tsc = require.resolve('typescript/bin/tsc');
  const compile = (source) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-ce-types-'));
    try {
      mkdirSync(path.join(dir, 'node_modules'));
      symlinkSync(repo, path.join(dir, 'node_modules/headlab'));
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
      writeFileSync(path.join(dir, 'app.ts'), source);
      writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', lib: ['ES2022', 'DOM'], types: [] },
        files: ['app.ts'],
      }));
      const r = spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
      return { status: r.status, out: (r.stdout + r.stderr).replaceAll(dir, '.') };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const good = compile(`import 'headlab/components/worked-example';
import type { HeadlabWorkedExample } from 'headlab/components/worked-example';
import { tags, loadElement, createHeadlab } from 'headlab/components';

const we: HeadlabWorkedExample | null = document.querySelector('headlab-worked-example');
if (we) { we.step = 'all'; const q: number = we.query; we.hideControls = true; console.log(q); }
const lm = document.createElement('headlab-language-model');
lm.task = 'cricket';
const layers: number | null = lm.layers;  // null: the task's own
const trainer = document.querySelector('headlab-trainer');
const heads: number | undefined = trainer?.heads;
await loadElement(tags[0]);
const lab = await createHeadlab();
console.log(layers, heads, lab.info().version);
`);
  assert.equal(good.status, 0, good.out);
  const bad = compile(`import 'headlab/components';
const lm = document.createElement('headlab-language-model');
lm.task = 'sorting';
`);
  assert.notEqual(bad.status, 0, 'an unknown task does not compile');
  assert.match(bad.out, /TS2322.*"sorting"/s);
});
