// headlab.d.ts under `tsc --strict` (the installed TypeScript, 5.9), as a TypeScript user compiles against it,
// importing 'headlab' from an app whose node_modules/headlab is this repository: the JavaScript examples of the
// README and of docs/ (DOCS below) type-check with `lib` ES2022 + DOM and with ESNext, under `moduleResolution`
// bundler and nodenext; `returnWeights: true` makes `weights` non-optional, and without it reading `weights`
// as a Float32Array is an error; results are ArrayBuffer-backed (Blob, crypto.subtle take them); a misspelt
// option is a compile error; the .wasm subpath exports have types; `await using` disposes a ParallelLayer.
// TypeScript < 5.7 gets web/lib/ts5.6/headlab.d.ts (tools/types-compat.mjs): its routing and its text are
// checked with this TypeScript, by a package.json whose version ranges are rewritten to select it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHeadlab } from '../../web/lib/headlab.js';
import { writeCompatTypes } from '../../tools/types-compat.mjs';
import { fixtureObjects } from './pretrained-helpers.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);
const tsVersion = require('typescript/package.json').version;
const api = 'headlab';
const MODULE = { bundler: 'ESNext', nodenext: 'NodeNext', node10: 'ESNext' };

// TypeScript runs in this process, one program per compile, sharing the parsed lib files (lib.dom.d.ts is most
// of a compile's time): what `tsc -p` does, with its diagnostics in tsc's own format, a fraction of the time.
const ts = require('typescript');
const libFiles = new Map();

/**
 * Compiles `files` in a new app whose node_modules/headlab is the repository (or, with `pkg`, a package
 * of that package.json whose web/ is the repository's). Returns tsc's status, output and the files it read.
 */
function compile(files, lib, { moduleResolution = 'bundler', pkg } = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-types-'));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
    mkdirSync(path.join(dir, 'node_modules'));
    if (pkg) {
      const copy = path.join(dir, 'node_modules/headlab');
      mkdirSync(copy);
      writeFileSync(path.join(copy, 'package.json'), JSON.stringify(pkg));
      symlinkSync(path.join(repo, 'web'), path.join(copy, 'web'));
    } else {
      symlinkSync(repo, path.join(dir, 'node_modules/headlab'));
    }
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    const json = {
      strict: true, noEmit: true, target: 'ES2022', module: MODULE[moduleResolution], moduleResolution,
      lib, types: [], skipLibCheck: false, allowImportingTsExtensions: false,
      ...(moduleResolution === 'node10' ? { ignoreDeprecations: '5.0' } : {}),
    };
    const { options, errors } = ts.convertCompilerOptionsFromJson(json, dir);
    assert.deepEqual(errors, [], 'the test\'s compiler options are valid');
    const host = ts.createCompilerHost(options);
    const read = host.getSourceFile.bind(host);
    host.getSourceFile = (fileName, version, ...rest) => {
      if (!fileName.includes('/node_modules/typescript/lib/')) return read(fileName, version, ...rest);
      const key = `${fileName}|${JSON.stringify(version)}`;
      if (!libFiles.has(key)) libFiles.set(key, read(fileName, version, ...rest));
      return libFiles.get(key);
    };
    const program = ts.createProgram(Object.keys(files).map((f) => path.join(dir, f)), options, host);
    const diagnostics = ts.getPreEmitDiagnostics(program);
    const out = ts.formatDiagnostics(diagnostics, {
      getCanonicalFileName: (f) => f, getCurrentDirectory: () => dir, getNewLine: () => '\n',
    }).replaceAll(dir, '.');
    // HeadLab's own declaration files: under the repository, not TypeScript's lib files in node_modules.
    const readFiles = program.getSourceFiles().map((f) => f.fileName)
      .filter((f) => f.endsWith('.d.ts') && f.startsWith(repo)).map((f) => path.relative(repo, f)).filter((f) => !f.startsWith('node_modules/'));
    const status = diagnostics.some((d) => d.category === ts.DiagnosticCategory.Error) ? 2 : 0;
    return { status, out, read: readFiles };
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
const mechanism: 'pthreads' | 'workers' | 'calling-thread' = parallel.mechanism;
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
const languageModel = `import { createHeadlab, type LanguageModel, type LanguageHeadScore, type ExplorableModel } from '${api}';
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
// The explorer's interface, which a PretrainedModel has too.
const shared: ExplorableModel = lm;
const arch: 'headlab' = lm.info.architecture;
const kv: number = lm.info.numKeyValueHeads + lm.info.contextLength;
const run = await lm.run('a b', { allLogits: true, attention: true, ablate: [{ layer: 0, head: 1 }], topK: 3 });
const maps: Float32Array = run.attention;
const logits: Float32Array = (await shared.run([32, 0])).logits;
const basis: 'task' = (await lm.headScores({ examples: 10 })).basis;
const generated = await lm.generate('a b', { maxTokens: 2, temperature: 0 });
const promptLength: number = generated.promptLength;
lm.dispose();
export { pad, s, L, H, T, w, fromIds, label, coref, baseline, top, g, e, ids, names, arch, kv, maps, logits, basis, promptLength };
`;
const languageModelMisuse = `import { createHeadlab } from '${api}';
const lab = await createHeadlab();
const lm = await lab.createLanguageModel({ task: 'induction' });
const c: number = lm.headScores()[0].coreference;
export { c };
`;
const pretrained = `import { createHeadlab, PretrainedModel, type ExplorableModel, type ModelShapeInfo } from '${api}';
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
const [prompt] = lab.findings.ioiPrompts({ n: 1, seed: 0 });
const patched = await model.patchHeads({ ...prompt, onProgress: ({ done, total }) => console.log(done / total), signal: controller.signal });
const effect: number = patched.effects[9 * model.info.numHeads + 9] + patched.metricClean - patched.metricCorrupted;
const viaIds = await model.patchHeads({ clean: ids, corrupted: [1, 2, 3], answer: 3, wrong: ' John', position: 2, tokenTypes: [0, 0, 1] });
const dla = await model.directLogitAttribution({ ids: prompt.clean, answer: prompt.answer, wrong: prompt.wrong });
const share: number = dla.heads[0] + dla.mlps[0] + dla.scale + dla.logitDiff + viaIds.answer;
const swapped = await model.run(ids, { patch: { source: 'Virat hit the bat', heads: [{ layer: 9, head: 9 }] } });
const n: number = model.info.contextLength + model.threads + tokens.length;
const shared: ExplorableModel = model;
// One shape interface under both models' info: what a view of any model reads.
const lm = await lab.createLanguageModel({ task: 'induction' });
const shapes: ModelShapeInfo[] = [model.info, lm.info, shared.info];
const heads: number = shapes[0].numKeyValueHeads + shapes[1].dModel + shapes[2].bytes;
const kind: 'decoder' | 'encoder' = shapes[1].kind;
shared.dispose();
await lab.loadPretrained({ config: {}, weights: [new ArrayBuffer(8), new Uint8Array(8)], tokenizer: '{}' });
export { fromFiles, attention, p, induction, best, text, dtype, n, effect, share, swapped, heads, kind };
`;
const untyped = `import { createHeadlab } from '${api}';
const lab = await createHeadlab();
const I = new Float32Array(16);
const w: Float32Array = lab.multiHeadAttention({ query: new Float32Array(8), dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I }).weights;
export { w };
`;

// What issue 25 found failing to compile under TypeScript >= 5.7 with the DOM lib, and what must not compile.
// Each @ts-expect-error fails the compile (TS2578) the day its line compiles.
const holds = `import { createHeadlab, type PretrainedModel } from '${api}';
import core from '${api}/wasm/headlab_core.wasm';
import train from '${api}/wasm/headlab_train_scalar.wasm';
const urls: Record<string, string> = { 'headlab_core.wasm': core, 'headlab_train_scalar.wasm': train };
const lab = await createHeadlab({ locateFile: (file) => urls[file] ?? file });
const I = new Float32Array(16);
const weights = { dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I };
const r = lab.multiHeadAttention({ ...weights, query: new Float32Array(8), returnWeights: true });
const blobs = [new Blob([r.output]), new Blob([r.output, r.weights])];
const digests: Promise<ArrayBuffer>[] = [crypto.subtle.digest('SHA-256', r.output), crypto.subtle.digest('SHA-256', r.weights)];
const trainer = await lab.createTrainer();
blobs.push(new Blob([trainer.save(), trainer.attentionWeights(), trainer.probe().tokens, trainer.exportModel().wQ]));
const lm = await lab.createLanguageModel({ task: 'induction' });
blobs.push(new Blob([lm.save(), lm.tokenize('a b').ids, lm.attention('a b').weights]));
digests.push(crypto.subtle.digest('SHA-256', lm.save()));
declare const model: PretrainedModel;
const run = await model.run('Virat hit the ball', { attention: true });
blobs.push(new Blob([run.logits, run.ids, model.tokenize('a').ids, (await model.generate('a')).ids]));
digests.push(crypto.subtle.digest('SHA-256', run.attention));
const plainRun = await model.run('Virat', { topK: 2 });
// @ts-expect-error without attention: true, attention may be undefined
const noAttention: Float32Array = plainRun.attention;
// @ts-expect-error topk (misspelt) is no option of PretrainedModel.run
await model.run('Virat', { topk: 2 });
// @ts-expect-error a patch needs the heads it patches
await model.run('Virat', { patch: { source: 'Kohli' } });
// @ts-expect-error the metric's tokens are answer and wrong, not target
await model.patchHeads({ clean: 'a', corrupted: 'b', answer: 1, target: 2 });
const scaling = lab.scalingExperiment({ dK: 8 });
blobs.push(new Blob([scaling.dotProducts, scaling.weightsScaled]));
const layer = lab.createLayer(weights);
const both = layer.forward({ query: new Float32Array(8), returnWeights: true, returnIntermediates: true });
const exact: [Float32Array<ArrayBuffer>, Float32Array<ArrayBuffer>] = [both.weights, both.intermediates.concat];
let disposed = 0;
{
  await using parallel = await lab.createParallelLayer({ ...weights, threads: 2 });
  const p = await parallel.forward({ query: new Float32Array(8), returnWeights: true });
  blobs.push(new Blob([p.output, p.weights]));
  const inter = await parallel.forward({ query: new Float32Array(8), returnIntermediates: true });
  digests.push(crypto.subtle.digest('SHA-256', inter.intermediates.scores));
  disposed = parallel.threads;
}
{
  using plain = lab.createLayer(weights);
  disposed += plain.shape.dModel;
}
// @ts-expect-error returnWeight (misspelt) is no option of multiHeadAttention
lab.multiHeadAttention({ ...weights, query: new Float32Array(8), returnWeight: true });
// @ts-expect-error returnWeight (misspelt) is no option of AttentionLayer.forward
layer.forward({ query: new Float32Array(8), returnWeight: true });
const parallel = await lab.createParallelLayer(weights);
// @ts-expect-error returnWeight (misspelt) is no option of ParallelLayer.forward
await parallel.forward({ query: new Float32Array(8), returnWeight: true });
// @ts-expect-error without returnWeights, weights may be undefined
const none: Float32Array = (await parallel.forward({ query: new Float32Array(8), returnWeights: false })).weights;
// @ts-expect-error the .wasm exports are URLs, not modules
core.instance;
export { blobs, digests, exact, disposed, none, noAttention };
`;
// The same misspelling without the directive: the error a user sees.
const misspelt = `import { createHeadlab } from '${api}';
const lab = await createHeadlab();
const I = new Float32Array(16);
const r = lab.multiHeadAttention({ query: new Float32Array(8), dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I, returnWeight: true });
export { r };
`;

for (const moduleResolution of ['bundler', 'nodenext']) {
  for (const lib of [['ES2022', 'DOM'], ['ESNext', 'DOM']]) {
    test(`tsc ${tsVersion} --strict, moduleResolution ${moduleResolution}, lib ${lib.join(' + ')}: the README and docs/ examples, the typed results, ArrayBuffer results, the .wasm imports, await using and the rejected misspellings compile`, { timeout: 120_000 }, () => {
      assert.ok(blocks.length >= 2, 'README and docs/ have their ```js examples');
      const r = compile({ 'examples.ts': examples, 'typed.ts': typed, 'holds.ts': holds }, lib, { moduleResolution });
      assert.equal(r.status, 0, `tsc failed:\n${r.out}`);
      assert.deepEqual(r.read.sort(), ['web/lib/headlab.d.ts', 'web/lib/wasm.d.ts'], 'TypeScript >= 5.7 reads headlab.d.ts itself');
    });
  }
}

// Issue 32: a Node-only project (lib ES2022, no DOM lib, no @types/node) failed on headlab.d.ts's
// FileList, Blob, URL and AbortSignal.
test('tsc --strict: a Node project without the DOM lib compiles against headlab.d.ts', { timeout: 120_000 }, () => {
  const r = compile({ 'typed.ts': typed, 'lm.ts': languageModel }, ['ES2022'], { moduleResolution: 'nodenext' });
  assert.equal(r.status, 0, `tsc failed:\n${r.out}`);
  assert.deepEqual(r.read.sort(), ['web/lib/headlab.d.ts']);
});

test('tsc --strict: a misspelt option (returnWeight) is a compile error that names the right one', { timeout: 120_000 }, () => {
  const r = compile({ 'misspelt.ts': misspelt }, ['ES2022', 'DOM']);
  assert.notEqual(r.status, 0, 'returnWeight: true must not compile');
  assert.match(r.out, /TS2769: No overload matches this call/);
  assert.match(r.out, /'returnWeight' does not exist in type 'MultiHeadAttentionOptions'. Did you mean to write 'returnWeights'\?/);
});

// TypeScript < 5.7 is not installed (no new dependencies): what can be checked with this one is that the
// package.json routes a TypeScript its ranges select to the copy, under each resolution, and that the copy
// compiles the examples. A package.json whose "<5.7" ranges are rewritten to select every version stands in.
test('TypeScript < 5.7: typesVersions and types@<5.7 lead to web/lib/ts5.6/headlab.d.ts, which compiles the examples', { timeout: 180_000 }, () => {
  writeCompatTypes();
  const compat = readFileSync(path.join(repo, 'web/lib/ts5.6/headlab.d.ts'), 'utf8');
  assert.equal(/\b\w+Array<\s*\w*ArrayBuffer\w*\s*>/.exec(compat), null, 'no typed array takes a type argument');
  assert.ok(/Float32Array<ArrayBuffer>/.test(readFileSync(path.join(repo, 'web/lib/headlab.d.ts'), 'utf8')));
  const real = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8'));
  assert.ok(real.typesVersions['<5.7'] && real.exports['.']['types@<5.7'], 'package.json has both routes');
  const older = JSON.parse(JSON.stringify(real).replaceAll('<5.7', '>=0'));
  for (const moduleResolution of ['bundler', 'nodenext', 'node10']) {
    const r = compile({ 'examples.ts': examples, 'typed.ts': typed }, ['ES2022', 'DOM'], { moduleResolution, pkg: older });
    assert.equal(r.status, 0, `${moduleResolution}: tsc failed on the copy:\n${r.out}`);
    assert.ok(r.read.includes('web/lib/ts5.6/headlab.d.ts') && !r.read.includes('web/lib/headlab.d.ts'), `${moduleResolution} reads the copy: ${r.read}`);
    const now = compile({ 'typed.ts': typed }, ['ES2022', 'DOM'], { moduleResolution, pkg: real });
    assert.equal(now.status, 0, `${moduleResolution}: tsc failed:\n${now.out}`);
    assert.deepEqual(now.read, ['web/lib/headlab.d.ts'], `${moduleResolution}: TypeScript ${tsVersion} reads headlab.d.ts`);
  }
  // The copy is 0.2.0's typing: under TypeScript >= 5.7 it fails where issue 25 said, which shows the check above is not vacuous.
  const r = compile({ 'holds.ts': holds }, ['ES2022', 'DOM'], { pkg: older });
  assert.notEqual(r.status, 0);
  assert.match(r.out, /TS2322: Type 'Float32Array<ArrayBufferLike>' is not assignable to type 'BlobPart'|TS2345: Argument of type 'Float32Array<ArrayBufferLike>'/);
});

// What the types promise at run time: every typed array a call returns is over a plain ArrayBuffer (a copy),
// the threads builds' too, whose wasm heap is a SharedArrayBuffer.
test('every typed-array result is over a plain ArrayBuffer, from the threads builds too', { timeout: 120_000 }, async () => {
  const lab = await createHeadlab();
  const plain = (what, a) => assert.equal(Object.prototype.toString.call(a.buffer), '[object ArrayBuffer]', `${what}: ${a.constructor.name} over ${Object.prototype.toString.call(a.buffer)}`);
  const every = (what, o) => Object.entries(o).forEach(([k, v]) => ArrayBuffer.isView(v) ? plain(`${what}.${k}`, v) : v && typeof v === 'object' && !Array.isArray(v) && every(`${what}.${k}`, v));
  const I = new Float32Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
  const weights = { dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I };
  const query = new Float32Array([3, 0, 0, 1, 0, 3, 0, 1, 1, 1, 0, 1]);
  const all = { query, returnWeights: true, returnIntermediates: true };
  every('multiHeadAttention', lab.multiHeadAttention({ ...weights, ...all }));
  every('scalingExperiment', lab.scalingExperiment({ dK: 8, numQueries: 4, numKeys: 4 }));
  const layer = lab.createLayer(weights);
  every('AttentionLayer.forward', layer.forward(all));
  layer.dispose();
  for (const mechanism of ['pthreads', 'workers']) {
    const parallel = await lab.createParallelLayer({ ...weights, threads: 2, mechanism });
    assert.equal(parallel.mechanism, mechanism);
    every(`ParallelLayer.forward (${mechanism})`, await parallel.forward(all));
    await parallel.dispose();
  }
  const trainer = await lab.createTrainer();
  every('Trainer', { attentionWeights: trainer.attentionWeights(), probe: trainer.probe(), save: trainer.save(), exportModel: trainer.exportModel() });
  trainer.dispose();
  for (const threads of [1, 2]) {
    const lm = await lab.createLanguageModel({ task: 'induction', batchSize: 4, threads });
    lm.step(1);
    every(`LanguageModel (threads ${threads})`, { save: lm.save(), tokenize: lm.tokenize('a b'), attention: lm.attention('a b') });
    lm.dispose();
  }
  const model = await lab.loadPretrained(fixtureObjects('gpt2-f32'));
  every('PretrainedModel', {
    tokenize: model.tokenize('Virat hit the ball'), run: await model.run('Virat hit the ball', { attention: true, allLogits: true }),
    headScores: await model.headScores({ length: 4 }), logitLens: await model.logitLens('The cat', { topK: 2 }),
    generate: await model.generate('a', { maxTokens: 2, temperature: 0 }),
    patchHeads: await model.patchHeads({ clean: [5, 6, 7], corrupted: [5, 8, 7], answer: 1, wrong: 2 }),
    directLogitAttribution: await model.directLogitAttribution({ ids: 'Virat hit', answer: 1, wrong: 2 }),
  });
  model.dispose();
  assert.equal(lab.liveWorkerCount(), 0);
});

test('tsc --strict: without returnWeights, weights may be undefined (the overload does not lie)', { timeout: 120_000 }, () => {
  const r = compile({ 'untyped.ts': untyped }, ['ES2022', 'DOM']);
  assert.notEqual(r.status, 0, 'reading weights without returnWeights must not type-check as Float32Array');
  assert.match(r.out, /TS2322: Type 'Float32Array(<ArrayBuffer>)? \| undefined' is not assignable to type 'Float32Array(<ArrayBufferLike>)?'/);
});

test('tsc --strict: ParallelLayer.forward without returnWeights may have no weights', { timeout: 120_000 }, () => {
  const r = compile({ 'parallel.ts': parallelUntyped }, ['ES2022', 'DOM']);
  assert.notEqual(r.status, 0, 'reading weights without returnWeights must not type-check as Float32Array');
  assert.match(r.out, /TS2322: Type 'Float32Array(<ArrayBuffer>)? \| undefined' is not assignable to type 'Float32Array(<ArrayBufferLike>)?'/);
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
