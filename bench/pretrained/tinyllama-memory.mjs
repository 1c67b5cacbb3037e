// One measurement (not a test): the TinyLlama-shaped bfloat16 checkpoint of make_tinyllama.py (a
// 2.2 GB file) loaded in headless Chromium from a local server: load time, WebAssembly memory, a run
// over 64 tokens with every position's logits against PyTorch's float32 forward, greedy generation.
//   node bench/pretrained/tinyllama-memory.mjs [THREADS] [FOLDER]   (default 1, build/bench-tinyllama/)
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../../tools/serve.mjs';
import { launch } from '../../tools/chromium.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const threads = Number(process.argv[2] ?? 1);
const folder = path.relative(repo, path.resolve(process.argv[3] ?? path.join(repo, 'build/bench-tinyllama')));
if (folder.startsWith('..')) throw new Error('the folder must be inside the repository (its files are served from there)');
const server = await serve({ port: 0, root: repo, isolate: threads > 1 });
const browser = await launch();
try {
  const page = await browser.newPage();
  page.on('console', (m) => console.log('page:', m.text()));
  await page.goto(`${server.url}bench/pretrained/page.html`);
  const r = await page.evaluate(async ({ threads, folder }) => {
    const { createHeadlab } = await import('/web/lib/headlab.js');
    const lab = await createHeadlab();
    const t0 = performance.now();
    const model = await lab.loadPretrained(new URL(`/${folder}/`, location.href).href, { cache: false, threads });
    const load = performance.now() - t0;
    const ref = await (await fetch(`/${folder}/reference.json`)).json();
    const t1 = performance.now();
    const out = await model.run(ref.ids, { allLogits: true });
    const run = performance.now() - t1;
    const want = new Float32Array(await (await fetch(`/${folder}/reference-logits.f32`)).arrayBuffer());
    let worst = 0, worstRel = 0, bad = 0, scale = 0;
    for (let i = 0; i < want.length; i++) scale = Math.max(scale, Math.abs(want[i]));
    const firstRows = [];
    for (let i = 0; i < want.length; i++) {
      const dd = Math.abs(out.logits[i] - want[i]);
      worst = Math.max(worst, dd);
      worstRel = Math.max(worstRel, dd / Math.max(Math.abs(want[i]), 1e-3));
      if (!(dd <= 2e-3 + 2e-3 * Math.abs(want[i]))) bad++;
    }
    for (let t = 0; t < 4; t++) {
      let m = 0;
      for (let v = 0; v < ref.V; v++) m = Math.max(m, Math.abs(out.logits[t * ref.V + v] - want[t * ref.V + v]));
      firstRows.push(m);
    }
    const argmax = (a, t) => {
      let best = 0;
      for (let v = 1; v < ref.V; v++) if (a[t * ref.V + v] > a[t * ref.V + best]) best = v;
      return best;
    };
    let argmaxAgree = 0;
    for (let t = 0; t < ref.T; t++) if (argmax(out.logits, t) === argmax(want, t)) argmaxAgree++;
    const t2 = performance.now();
    const g = await model.generate(ref.ids.slice(0, 8), { maxTokens: 8, temperature: 0 });
    const gen = performance.now() - t2;
    const memory = model._module.HEAPU8.length;
    return { load, run, gen, generated: g.ids.length - 8, memory, heapMax: model._module.heapMax(), bytes: model.info.bytes,
      worst, worstRel, bad, scale, firstRows, argmaxAgree, T: ref.T, threads: model.threads };
  }, { threads, folder });
  console.log(JSON.stringify(r, null, 1));
} finally {
  await browser.close();
  await server.close();
}
process.exit(0);
