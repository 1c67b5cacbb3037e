// How often Firefox ESR freezes a Worker that starts a thread Worker (docs/pretrained.md,
// docs/safety.md): a stress run, not part of `npm test`. Each page of one Firefox runs a module
// Worker of a cross-origin isolated page that makes ROUNDS language models on threads ('auto'), one
// per round, posting a mark at each; a Worker silent for 20 s is counted frozen at the round it
// marked last. MODE=dispose makes each model in a module of its own (the old one disposed first),
// MODE=replace makes each after the first with `replacing: previous` (it takes over the old one's
// thread Workers, so none starts). Prints one line per page and a summary.
//   MODE=dispose PAGES=10 ROUNDS=8 node --test tests/engines/firefox-freeze.stress.mjs
//   MODE=replace PAGES=12 ROUNDS=8 node --test tests/engines/firefox-freeze.stress.mjs
import { after } from 'node:test';
import { CHECKS, engineSuite } from './checks.mjs';
import { firefox } from './drivers.mjs';

const MODE = process.env.MODE ?? 'replace';
const PAGES = Number(process.env.PAGES ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 8);
if (!['dispose', 'replace'].includes(MODE)) throw new Error(`MODE must be dispose or replace, got ${MODE}`);
const pages = [];

const stress = (i) => ({
  name: `${MODE}: page ${i + 1} of ${PAGES}, ${ROUNDS} threaded language models in one Worker`,
  timeout: 60_000 + ROUNDS * 10_000,
  // A frozen Worker is what is counted, not a failure of the run.
  errorsChecked: true,
  async run(page, site) {
    await page.goto(new URL('index.html', site.isolatedOpen).href);
    await page.waitFor(() => document.readyState === 'complete', null, 10_000);
    const body = `
      const { createHeadlab } = await import('__ORIGIN__/lib/headlab.js');
      const lab = await createHeadlab();
      let model = null;
      for (let round = 0; round < ${ROUNDS}; round++) {
        postMessage({ mark: round });
        const old = model;
        if (${MODE === 'dispose'} && old) old.dispose();
        model = await lab.createLanguageModel({ task: 'induction', seed: round + 1, threads: 'auto', ...(${MODE === 'replace'} && old ? { replacing: old } : {}) });
      }
      postMessage({ done: true, threads: model.threads, live: lab.liveWorkerCount() });
      model.dispose();`;
    const r = await page.evaluate(`() => new Promise((resolve) => {
      const src = ${JSON.stringify(body)}.replace('__ORIGIN__', location.origin);
      const worker = new Worker(URL.createObjectURL(new Blob([src], { type: 'text/javascript' })), { type: 'module' });
      let last = null, timer;
      const watch = () => { clearTimeout(timer); timer = setTimeout(() => { worker.terminate(); resolve({ frozenAt: last }); }, 20000); };
      watch();
      worker.onmessage = (e) => {
        if (e.data.mark !== undefined) { last = e.data.mark; watch(); return; }
        clearTimeout(timer); worker.terminate(); resolve(e.data);
      };
      worker.onerror = (e) => { clearTimeout(timer); worker.terminate(); resolve({ error: e.message || 'no message' }); };
    })`);
    pages.push(r);
    console.log(`# page ${i + 1}: ${r.done ? `${ROUNDS} models, ${r.threads} threads each, ${r.live} thread Workers live at the end`
      : r.error ? `error: ${r.error}` : `frozen at round ${r.frozenAt}`}`);
  },
});

CHECKS.splice(0, CHECKS.length, ...Array.from({ length: PAGES }, (_, i) => stress(i)));
after(() => {
  const frozen = pages.filter((r) => r.frozenAt !== undefined);
  console.log(`# ${MODE}: ${frozen.length} of ${pages.length} pages frozen (at rounds ${frozen.map((r) => r.frozenAt).join(', ') || '—'}), ${ROUNDS} rounds each`);
});
engineSuite(firefox);
