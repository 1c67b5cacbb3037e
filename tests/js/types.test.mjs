// headlab.d.ts under `tsc --strict`, as a TypeScript user compiles against it: the JavaScript
// examples of the README and of docs/ (DOCS below) type-check with `lib` ES2022 + DOM and with ESNext; `returnWeights: true`
// makes `weights` non-optional, and without it reading `weights` as a Float32Array is an error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const api = path.join(repo, 'web/lib/headlab.js');

function compile(files, lib) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-types-'));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
    writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler',
        lib, types: [], skipLibCheck: false, allowImportingTsExtensions: false },
      files: Object.keys(files),
    }));
    const r = spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
    return { status: r.status, out: (r.stdout + r.stderr).replaceAll(dir, '.') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// The README first (its worked example defines `lab`), then the docs whose examples continue it.
const DOCS = ['README.md', 'docs/api.md', 'docs/training.md', 'docs/language-models.md', 'docs/install.md', 'docs/embedding.md'];
const readme = DOCS.map((f) => readFileSync(path.join(repo, f), 'utf8')).join('\n');
// The bundler recipes' blocks are files of another app (they import 'headlab', .wasm URLs, or are a config),
// not continuations of the first example; tests/browser/bundlers.test.mjs runs them.
const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]).filter((b) => !/from 'headlab(\/[^']*)?'|^\s*export default/m.test(b));
const [first, ...rest] = blocks;
// The later blocks continue the first one (they use its `lab`); each in its own block scope,
// as two of them may name a result alike (`again`).
const examples = `${first.replace("'./web/lib/headlab.js'", `'${api}'`)}\n${rest.map((b) => `{\n${b.replace(/^import .*$/gm, '')}\n}`).join('\n')}\nexport {};\n`;
const typed = `import { createHeadlab } from '${api}';
const lab = await createHeadlab();
const I = new Float32Array(16);
const r = lab.multiHeadAttention({ query: new Float32Array(8), dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I, returnWeights: true });
const w: Float32Array = r.weights;
const layer = lab.createLayer({ dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I });
const q: Float32Array = layer.forward({ query: new Float32Array(8), returnIntermediates: true }).intermediates.concat;
layer[Symbol.dispose]();
const parallel = await lab.createParallelLayer({ dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I, threads: 2 });
const pw: Float32Array = (await parallel.forward({ query: new Float32Array(8), returnWeights: true })).weights;
const mechanism: 'pthreads' | 'workers' = parallel.mechanism;
const n: number = parallel.threads + lab.liveWorkerCount() + lab.info().parallel.defaultThreads;
await parallel.dispose();
export { w, q, pw, mechanism, n };
`;
// Without returnWeights the parallel layer's weights may be undefined too.
const parallelUntyped = `import { createHeadlab } from '${api}';
const lab = await createHeadlab();
const I = new Float32Array(16);
const layer = await lab.createParallelLayer({ dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I });
const w: Float32Array = (await layer.forward({ query: new Float32Array(8) })).weights;
export { w };
`;
// The language-model API as a UI would use it: results typed precisely enough to assign without casts.
const languageModel = `import { createHeadlab, type LanguageModel, type LanguageHeadScore } from '${api}';
const lab = await createHeadlab();
const [task] = await lab.languageTasks();
const pad: string | null = task.padToken;
const lm: LanguageModel = await lab.createLanguageModel({ task: task.name, numLayers: task.defaults.numLayers, mlp: false });
const s: number = lm.step(10).step + lm.steps + lm.config().dModel + lm.config().step + lm.task.seqLen;
const { weights, shape: [L, H, T] } = lm.attention('a b c');
const w: Float32Array = weights;
const fromIds = lm.attention(new Int32Array([32, 0])).tokens.concat(lm.attention([32, 1]).tokens, lm.attention(['<s>', 'a']).tokens);
const heads: LanguageHeadScore[] = lm.headScores();
const label: string | null = heads[0].label;
const coref: number | undefined = heads[0].coreference;
const baseline: number | undefined = lm.headReport(100).bestFixedPosition;
const top: string = lm.predict('a b', { topK: 2 })[0].token;
const g: string = lm.generate({ prompt: 'a b', temperature: 0, seed: 2, maxTokens: 3 }).text;
const e: number = lm.evaluate(50).nextTokenAccuracy;
const ids: Int32Array = lm.tokenize('a').ids;
const names: string[] = lm.tokenize('a').tokens.concat(lm.tokenize('a').words);
const bytes: Uint8Array = lm.save();
using copy = await lab.loadLanguageModel(bytes);
copy.setHeadEnabled(0, 1, !copy.headEnabled(0, 1));
lm.dispose();
export { pad, s, L, H, T, w, fromIds, label, coref, baseline, top, g, e, ids, names };
`;
const languageModelMisuse = `import { createHeadlab } from '${api}';
const lab = await createHeadlab();
const lm = await lab.createLanguageModel({ task: 'induction' });
const c: number = lm.headScores()[0].coreference;
export { c };
`;
const pretrained = `import { createHeadlab, PretrainedModel } from '${api}';
const lab = await createHeadlab();
const controller = new AbortController();
const files: File[] = [new File(['{}'], 'config.json')];
const fromFiles: Promise<PretrainedModel> = lab.loadPretrained(files);
const model = await lab.loadPretrained('openai-community/gpt2', {
  revision: 'main', threads: 'auto', cache: true, maxBytes: 6e8, signal: controller.signal,
  onProgress: ({ file, loaded, total }) => console.log(file, loaded, total ?? '?'),
});
const { ids, tokens } = model.tokenize('Virat hit the ball');
const r = await model.run(ids, { attention: true, ablate: [{ layer: 0, head: 1 }], topK: 5 });
const attention: Float32Array | undefined = r.attention;
const p: number = r.next[0].probability;
const { sequence, scores } = await model.headScores({ length: 20, seed: 1 });
const induction: number = scores[0].induction + sequence[0];
const lens = await model.logitLens('The cat', { topK: 5 });
const best: string = lens.layers[0].positions[0][0].token;
const g = await model.generate('Once upon a time', { maxTokens: 5, temperature: 0.7, seed: 2 });
const text: string = g.text + g.tokens.slice(g.promptLength).join('') + model.decode(g.ids);
const dtype: 'F32' | 'F16' | 'BF16' = model.info.dtype;
const n: number = model.info.contextLength + model.threads + tokens.length;
model.dispose();
await lab.loadPretrained({ config: {}, weights: [new ArrayBuffer(8), new Uint8Array(8)], tokenizer: '{}' });
export { fromFiles, attention, p, induction, best, text, dtype, n };
`;
const untyped = `import { createHeadlab } from '${api}';
const lab = await createHeadlab();
const I = new Float32Array(16);
const w: Float32Array = lab.multiHeadAttention({ query: new Float32Array(8), dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I }).weights;
export { w };
`;

for (const lib of [['ES2022', 'DOM'], ['ESNext', 'DOM']]) {
  test(`tsc --strict, lib ${lib.join(' + ')}: the README and docs/ examples compile`, { timeout: 120_000 }, () => {
    assert.ok(blocks.length >= 2, 'README and docs/ have their ```js examples');
    const r = compile({ 'examples.ts': examples }, lib);
    assert.equal(r.status, 0, `tsc failed:\n${r.out}`);
  });
  test(`tsc --strict, lib ${lib.join(' + ')}: the typed results compile`, { timeout: 120_000 }, () => {
    const r = compile({ 'typed.ts': typed }, lib);
    assert.equal(r.status, 0, `tsc failed:\n${r.out}`);
  });
}

test('tsc --strict: without returnWeights, weights may be undefined (the overload does not lie)', { timeout: 120_000 }, () => {
  const r = compile({ 'untyped.ts': untyped }, ['ES2022', 'DOM']);
  assert.notEqual(r.status, 0, 'reading weights without returnWeights must not type-check as Float32Array');
  assert.match(r.out, /TS2322: Type 'Float32Array(<ArrayBufferLike>)? \| undefined' is not assignable to type 'Float32Array(<ArrayBufferLike>)?'/);
});

test('tsc --strict: ParallelLayer.forward without returnWeights may have no weights', { timeout: 120_000 }, () => {
  const r = compile({ 'parallel.ts': parallelUntyped }, ['ES2022', 'DOM']);
  assert.notEqual(r.status, 0, 'reading weights without returnWeights must not type-check as Float32Array');
  assert.match(r.out, /TS2322: Type 'Float32Array(<ArrayBufferLike>)? \| undefined' is not assignable to type 'Float32Array(<ArrayBufferLike>)?'/);
});

test('tsc --strict: the language-model API compiles as a UI uses it; cricket-only scores may be undefined', { timeout: 120_000 }, () => {
  const r = compile({ 'lm.ts': languageModel }, ['ESNext', 'DOM']);
  assert.equal(r.status, 0, `tsc failed:\n${r.out}`);
  const misuse = compile({ 'misuse.ts': languageModelMisuse }, ['ESNext', 'DOM']);
  assert.notEqual(misuse.status, 0, 'coreference is optional (cricket only)');
  assert.match(misuse.out, /TS2322: Type 'number \| undefined' is not assignable to type 'number'/);
});

test('tsc --strict: the pretrained-model API compiles as a page uses it', { timeout: 120_000 }, () => {
  const r = compile({ 'pretrained.ts': pretrained }, ['ESNext', 'DOM']);
  assert.equal(r.status, 0, `tsc failed:\n${r.out}`);
});
