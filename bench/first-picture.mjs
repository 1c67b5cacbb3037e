// The first picture on a slow link: how long a course page takes, on a throttled connection
// (Chromium's network emulation: 1.6 Mbit/s down, 750 kbit/s up, 150 ms round trip; an empty cache),
// until the worked example is interactive and until the language model's controls appear
// (the element's data-drawn: its controls live and shown), measured in the page from navigation
// start. Pages: one element with the module build (headlab-components.js, which loads that
// element's code on first use), and the site's demo pages (the same module build, which
// site/page.js loads over http(s), with the site's stylesheet and prose around it). dist/ is served as scripts/serve.mjs serves it
// (brotli or gzip, precompressed). Goals (issue 23): worked example ≤ 2 s, language model ≤ 4 s.
//   node bench/first-picture.mjs [--runs 3]      (after `node scripts/bundle.mjs`)
// Writes bench/results/first-picture.md and prints the table.
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../tools/serve.mjs';
import { launch } from '../tools/chromium.mjs';
import { SCENARIOS, PAGES, measure, pageServer } from '../tools/first-picture.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 3;
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[(s.length - 1) >> 1]; };

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dist = await serve({ port: 0, root: path.join(repo, 'dist') });
  const site = await pageServer(dist.url, PAGES);
  const browser = await launch();
  const rows = [];
  const loadBefore = os.loadavg()[0];
  try {
    for (const scenario of SCENARIOS) {
      const runs = [];
      for (let i = 0; i < RUNS; i++) {
        runs.push(await measure(browser, site.url, scenario));
        const r = runs[runs.length - 1];
        console.error(`${scenario.name}: run ${i + 1}: skeleton ${r.skeleton?.toFixed(0)} ms, drawn ${r.drawn.toFixed(0)} ms, ` +
          `formulas ${r.formulas?.toFixed(0) ?? '-'} ms, ${(r.bytes / 1024).toFixed(0)} KiB in ${r.requests} requests`);
      }
      rows.push({ scenario, runs });
    }
  } finally {
    await browser.close();
    await site.close();
    await dist.close();
  }
  const table = [
    '| page | first skeleton (ms) | interactive / controls shown (ms), median of runs | best | goal | formulas shown (ms) | transferred |',
    '| --- | ---: | ---: | ---: | --- | ---: | ---: |',
    ...rows.map(({ scenario, runs }) => {
      const drawn = median(runs.map((r) => r.drawn));
      const formulas = runs[0].formulas === undefined ? '–' : median(runs.map((r) => r.formulas)).toFixed(0);
      return `| ${scenario.name} | ${median(runs.map((r) => r.skeleton ?? NaN)).toFixed(0)} | ${drawn.toFixed(0)} | ${Math.min(...runs.map((r) => r.drawn)).toFixed(0)} | ` +
        `≤ ${scenario.goal} ms: ${drawn <= scenario.goal ? 'met' : `not met (+${(drawn - scenario.goal).toFixed(0)} ms)`} | ${formulas} | ${(median(runs.map((r) => r.bytes)) / 1024).toFixed(0)} KiB in ${median(runs.map((r) => r.requests))} requests |`;
    }),
  ].join('\n');
  const md = `# First picture on a throttled link\n\n` +
    `\`node bench/first-picture.mjs --runs ${RUNS}\`, ${new Date().toISOString().slice(0, 10)}: Chromium, network emulation 1.6 Mbit/s down, ` +
    `750 kbit/s up, 150 ms round trip, a new browser context (empty cache) per load; dist/ served by tools/serve.mjs (brotli; no-cache, so repeated requests are revalidated). Times from navigation start, ` +
    'measured in the page: "first skeleton" is when the element first takes its room (a sized "Loading …" box), ' +
    '"interactive" when it has drawn its first result with its controls live (data-drawn), "formulas shown" when its formulas, ' +
    'typeset but unseen until KaTeX\'s fonts have loaded, are shown (data-formulas="ready"); "transferred" counts the page\'s ' +
    'and its Workers\' responses. CPU time adds to the network time, so other jobs on the machine slow the ' +
    'figures down; its 1-minute load average was ' +
    `${loadBefore.toFixed(1)} at the start and ${os.loadavg()[0].toFixed(1)} at the end (${os.cpus().length} cores). ` +
    'Compare builds by ratios from runs made one after the other.\n\n' + `${table}\n`;
  await writeFile(path.join(repo, 'bench/results/first-picture.md'), md);
  console.log(md);
}
