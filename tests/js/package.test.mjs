// The package as a JavaScript developer gets it: `npm pack`, then `npm install ./headlab-*.tgz`
// in a new project, offline, from the tarball alone, and the README's worked example run there
// with `import … from 'headlab'`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expected } from '../fixtures/course.mjs';
import { pack } from '../fixtures/pack.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false' } });

test('npm pack gives a tarball with the API, its types and every built module, and nothing else; installed offline it runs the README example', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-pack-'));
  try {
    // npm pack, or under scripts/test.mjs a copy of the tarball it packed before the stage (tests/fixtures/pack.mjs).
    const tgz = path.basename(await pack(dir));
    assert.match(tgz, /^headlab-\d+\.\d+\.\d+\.tgz$/, `a tarball was written: ${readdirSync(dir)}`);
    const files = execFileSync('tar', ['tzf', path.join(dir, tgz)], { encoding: 'utf8' }).trim().split('\n').map((f) => f.replace(/^package\//, '')).sort();
    const modules = ['headlab_core', 'headlab_core_scalar', 'headlab_train', 'headlab_train_scalar', 'headlab_core_threads', 'headlab_train_threads',
      'headlab_pretrained', 'headlab_pretrained_scalar', 'headlab_pretrained_threads'].flatMap((m) => [`web/lib/gen/${m}.mjs`, `web/lib/gen/${m}.wasm`]);
    // loadPretrained's tokenizer, @huggingface/tokenizers vendored with its licence.
    modules.push('web/lib/gen/tokenizers.mjs');
    // The threads builds' Worker scripts, and the package.json that makes Node run them as CommonJS.
    const threads = ['web/lib/gen/headlab_core_threads.worker.js', 'web/lib/gen/headlab_train_threads.worker.js', 'web/lib/gen/headlab_pretrained_threads.worker.js', 'web/lib/gen/package.json'];
    // headlab.js is the entry; its code is in web/lib/api/, one module per job.
    const api = ['checks', 'cores', 'engine-memory', 'experiments', 'findings', 'forward', 'lab', 'language-model', 'load', 'memory', 'parallel', 'parallel-pthreads', 'parallel-workers', 'pretrained', 'pretrained-config', 'pretrained-files', 'session', 'simd', 'specials', 'syntax', 'threaded-module', 'trainer', 'worker-start'].map((m) => `web/lib/api/${m}.js`);
    // Types: headlab.d.ts, its copy for TypeScript < 5.7 (written by prepack) and the .wasm exports'.
    const types = ['web/lib/headlab.d.ts', 'web/lib/ts5.6/headlab.d.ts', 'web/lib/wasm.d.ts'];
    // The elements ('headlab/components', written into components/ by prepack: tools/package-components.mjs)
    // and their manifest; tests/browser/package-components.test.mjs runs them.
    const components = readdirSync(path.join(repo, 'components'), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile()).map((e) => path.relative(repo, path.join(e.parentPath ?? e.path, e.name)));
    for (const f of ['components/index.js', 'components/index.d.ts', 'components/worked-example.js', 'components/worked-example.d.ts',
      'components/headlab-lm-worker.js', 'components/katex/fonts/KaTeX_Main-Regular.woff2', 'components/models/induction.hlm']) {
      assert.ok(components.includes(f), `components/ holds ${f}`);
    }
    // The user's docs that the package README links to (its links then resolve once installed).
    const docs = ['api', 'embedding', 'findings', 'install', 'language-models', 'model-explorer', 'performance', 'pretrained', 'safety', 'training'].map((d) => `docs/${d}.md`);
    assert.deepEqual(files, ['CHANGELOG.md', 'LICENSE', 'README.md', 'package.json', ...types, 'web/lib/headlab.js', 'web/lib/headlab.node.js',
      'web/lib/headlab-parallel-worker.js', 'web/lib/headlab-files.js', ...api, ...modules, ...threads, ...components, ...docs, 'custom-elements.json'].sort());

    const app = path.join(dir, 'app');
    execFileSync('mkdir', ['-p', app]);
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', type: 'module', private: true }));
    npm(['install', '--offline', '--no-package-lock', path.join(dir, tgz)], app);

    const readme = readFileSync(path.join(repo, 'README.md'), 'utf8');
    const block = /```js\n([\s\S]*?)```/.exec(readme)[1];
    writeFileSync(path.join(app, 'example.mjs'), block.replace("'./web/lib/headlab.js'", "'headlab'"));
    const out = execFileSync(process.execPath, ['example.mjs'], { cwd: app, encoding: 'utf8' });
    const numbers = (out.match(/-?\d+\.\d+|\d{4,}/g) ?? []).map(Number);
    [...expected.output, ...expected.weightsHead1].forEach((w, i) =>
      assert.ok(Math.abs(numbers[i] - w) < 5e-5, `printed ${numbers[i]}, README says ${w}\n${out}`));

    // Node gets the "node" entry; the .wasm files are subpath exports (headlab/wasm/…).
    writeFileSync(path.join(app, 'resolve.mjs'), "for (const s of ['headlab', 'headlab/wasm/headlab_core.wasm', 'headlab/wasm/headlab_train_scalar.wasm']) console.log(import.meta.resolve(s));");
    const resolved = execFileSync(process.execPath, ['resolve.mjs'], { cwd: app, encoding: 'utf8' }).trim().split('\n');
    assert.deepEqual(resolved.map((u) => u.replace(/^.*node_modules\/headlab\//, '')),
      ['web/lib/headlab.node.js', 'web/lib/gen/headlab_core.wasm', 'web/lib/gen/headlab_train_scalar.wasm']);
    // The multi-core layer's files are in the package: the threads build (Node's default) and the
    // Worker script next to headlab.js.
    writeFileSync(path.join(app, 'parallel.mjs'), `import { createHeadlab } from 'headlab';
      const lab = await createHeadlab();
      const I = new Float32Array([1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1]);
      for (const mechanism of ['auto', 'workers']) {
        const layer = await lab.createParallelLayer({ dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I, threads: 2, mechanism });
        const query = new Float32Array([3,0,0,1, 0,3,0,1, 1,1,0,1]);
        const { output } = await layer.forward({ query });
        await layer.dispose();
        const want = lab.multiHeadAttention({ dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I, query }).output;
        console.log(layer.mechanism, output.every((x, i) => Math.abs(x - want[i]) < 1e-6), lab.liveWorkerCount());
      }`);
    assert.equal(execFileSync(process.execPath, ['parallel.mjs'], { cwd: app, encoding: 'utf8' }).trim(), 'pthreads true 0\nworkers true 0');

    // TypeScript in the installed app finds the package's types, the .wasm exports' included, under both
    // resolutions a current project uses (tests/js/types.test.mjs checks the types themselves).
    writeFileSync(path.join(app, 'app.ts'), `import { createHeadlab } from 'headlab';
      import core from 'headlab/wasm/headlab_core.wasm';
      const lab = await createHeadlab({ locateFile: (file) => file === 'headlab_core.wasm' ? core : file });
      const I = new Float32Array(16);
      const r = lab.multiHeadAttention({ query: new Float32Array(8), dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I, returnWeights: true });
      export const blob = new Blob([r.output, r.weights]);`);
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    for (const [moduleResolution, module] of [['bundler', 'esnext'], ['nodenext', 'nodenext']]) {
      writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions: { noEmit: true, strict: true, target: 'es2022', lib: ['es2022', 'dom'], types: [], module, moduleResolution }, files: ['app.ts'] }));
      const r = spawnSync(process.execPath, [tsc, '-p', '.', '--listFiles'], { cwd: app, encoding: 'utf8' });
      assert.equal(r.status, 0, `tsc (${moduleResolution}) in the installed app:\n${r.stdout}${r.stderr}`);
      assert.deepEqual(r.stdout.split('\n').filter((l) => l.includes('node_modules/headlab/')).map((l) => l.replace(/^.*node_modules\/headlab\//, '')).sort(),
        ['web/lib/headlab.d.ts', 'web/lib/wasm.d.ts'], moduleResolution);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
