// The elements typed as a framework app types them (issue 32): one tsc --strict run (DOM lib, skipLibCheck off)
// over an app whose node_modules has this repository's dependencies and headlab (this repository with its
// package build, components/), holding
//  - React 19 (@types/react): <headlab-worked-example step={7}> with a ref typed to its class, an
//    onheadlab-change prop and addEventListener('headlab-step', (e) => e.detail.step) reading typed details;
//  - Vue 3: GlobalComponents' entries as h() checks their props;
//  - Svelte 5: svelteHTML.IntrinsicElements as svelte-check reads it (with svelte's svelte-html.d.ts);
//  - Preact 11: its JSX.IntrinsicElements, with a ref and an on<event> prop;
//  - and mistakes, each of which must be a compile error on its own line: a step that does not exist, an
//    unknown task, a detail field no event has, a method's wrong argument, a read-only property set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildComponents } from '../../tools/package-components.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

const REACT = `import { useEffect, useRef } from 'react';
import 'headlab/components/react';
import type { HeadlabWorkedExample, HeadlabLanguageModel, HeadlabModelExplorer } from 'headlab/components';

export function Lesson() {
  const ref = useRef<HeadlabWorkedExample>(null);
  const lm = useRef<HeadlabLanguageModel>(null);
  const explorer = useRef<HeadlabModelExplorer>(null);
  useEffect(() => {
    const query: number = ref.current?.query ?? 3;
    lm.current?.addEventListener('headlab-step', (e) => console.log(e.detail.step, e.detail.runs[0].loss ?? 0, query));
    lm.current?.addEventListener('click', (e) => console.log(e.clientX));
    const x = explorer.current;
    if (x) {
      const state: 'empty' | 'loading' | 'ready' | 'running' | 'error' | 'cancelled' = x.state;
      const where: 'worker' | 'main-thread' | null = x.runsIn;
      x.load({ kind: 'shipped', name: 'induction' }).then(() => x.setText('a b a'));
      x.addEventListener('headlab-state', (e) => console.log(e.detail.from, e.detail.to, state, where, x.info));
    }
  }, []);
  return (
    <>
      <headlab-worked-example ref={ref} step={7} hide-controls tokens="ball full it" className="demo"
        onheadlab-change={(e) => console.log(e.detail.weights[0][0][0])} />
      <headlab-language-model ref={lm} task="induction" layers={2} onheadlab-phase-change={(e) => console.log(e.detail.step.toFixed(0))} />
      <headlab-model-explorer ref={explorer} model="induction" hub-url="https://huggingface.co" />
      <headlab-theme-toggle theme="dark" />
      <headlab-misconceptions part="b" swap />
    </>
  );
}
`;
const VUE = `import { h, type GlobalComponents } from 'vue';
import 'headlab/components/vue';

declare const WorkedExample: GlobalComponents['headlab-worked-example'];
declare const LanguageModel: GlobalComponents['headlab-language-model'];
export const nodes = [h(WorkedExample, { step: 7, 'hide-controls': true }), h(LanguageModel, { task: 'cricket', layers: 2 })];
`;
const SVELTE = `import 'headlab/components/svelte';

type WorkedExample = svelteHTML.IntrinsicElements['headlab-worked-example'];
export const props: WorkedExample = { step: 'all', 'hide-controls': true, class: 'demo', 'onheadlab-change': (e) => console.log(e.detail.output[0]) };
`;
// Preact through its automatic JSX runtime (the pragma: this app's default is React's).
const PREACT = `/** @jsxImportSource preact */
import { useRef } from 'preact/hooks';
import 'headlab/components/preact';
import type { HeadlabTrainer } from 'headlab/components';

export function Lesson() {
  const ref = useRef<HeadlabTrainer>(null);
  return <headlab-trainer ref={ref} class="demo" heads={4} compare onheadlab-specialised={(e) => console.log(e.detail.tracks[0].head, ref.current?.runsIn)} />;
}
`;
// Each line after the first is a mistake the types must refuse (one error on that line).
const MISTAKES = {
  'react-mistakes.tsx': `import 'headlab/components/react';
export const a = <headlab-worked-example step={11} />;
export const b = <headlab-language-model task="sorting" />;
export const c = <headlab-worked-example onheadlab-change={(e) => e.detail.nothing} />;
document.querySelector('headlab-trainer')?.addEventListener('headlab-diverged', (e) => e.detail.reason === 'nan');
document.querySelector('headlab-model-explorer')?.setHeadEnabled(0, 1, 'off');
document.querySelector('headlab-model-explorer')!.state = 'ready';
`,
  'vue-mistakes.ts': `import { h, type GlobalComponents } from 'vue';
declare const LanguageModel: GlobalComponents['headlab-language-model']; export const bad = h(LanguageModel, { task: 'sorting' });
`,
  'preact-mistakes.tsx': `/** @jsxImportSource preact */ import 'headlab/components/preact';
export const bad = <headlab-trainer speed="turbo" />;
`,
  'svelte-mistakes.ts': `import 'headlab/components/svelte';
export const bad: svelteHTML.IntrinsicElements['headlab-worked-example'] = { step: 11 };
`,
};

test('React 19, Vue 3, Svelte and Preact type the elements from headlab/components/<framework>; mistakes do not compile', { timeout: 180_000 }, async () => {
  await buildComponents();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-frameworks-'));
  try {
    mkdirSync(path.join(dir, 'node_modules'));
    for (const name of readdirSync(path.join(repo, 'node_modules'))) symlinkSync(path.join(repo, 'node_modules', name), path.join(dir, 'node_modules', name));
    symlinkSync(repo, path.join(dir, 'node_modules/headlab'));
    const files = { 'react.tsx': REACT, 'vue.ts': VUE, 'svelte.ts': SVELTE, 'preact.tsx': PREACT, ...MISTAKES };
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', jsx: 'react-jsx',
        lib: ['ES2022', 'DOM'], types: [], skipLibCheck: false },
      // svelte-check loads svelte-html.d.ts itself (it is not in svelte's exports).
      files: ['node_modules/svelte/svelte-html.d.ts', ...Object.keys(files)],
    }));
    const r = spawnSync(process.execPath, [tsc, '-p', '.'], { cwd: dir, encoding: 'utf8' });
    const out = (r.stdout + r.stderr).replaceAll(dir, '.');
    const errors = [...out.matchAll(/^([\w.-]+)\((\d+),\d+\): error (TS\d+)/gm)].map(([, file, line]) => `${file}:${line}`);
    const expected = Object.entries(MISTAKES).flatMap(([file, text]) => text.trim().split('\n').slice(1).map((_, i) => `${file}:${i + 2}`));
    assert.deepEqual([...new Set(errors)].sort(), expected.sort(), `one error on each mistake's line and none elsewhere:\n${out}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
