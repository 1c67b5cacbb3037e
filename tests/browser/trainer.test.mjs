// <headlab-trainer> in headless Chromium, served from dist/ under the strict CSP:
// the demo page trains two-relations with h = 2 to held-out accuracy ≥ 0.99 in
// its Worker while the heatmaps redraw at least 10 times a second and keyboard
// input stays under 50 ms; ablation; h = 1 and h = 2 side by side; curve and
// model export, model load (good and bad files); the autoplay preset on
// embed.html; the main-thread fallback from file://. Screenshots at 1280 and
// 360 px, mid-training and after specialisation, go to tests/browser/screenshots/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DIST, SCREENSHOTS, ensureScreenshotDir, watch, fileUrl, useSite } from './helpers.mjs';
import { eventually, expectText, expectCount } from './expect.mjs';
import { quickHideShow, resumedAfterQuickHideShow } from './visibility.mjs';

const TIMEOUT = 60_000;
const PAGE = 'demos/trainer/index.html';
const problems = [];

const site = useSite({ csp: true }, {
  setup: async () => {
    assert.ok(existsSync(path.join(DIST, 'headlab-trainer-worker.js')),
      'dist/headlab-trainer-worker.js is missing: scripts/bundle.mjs must build web/components/shared/worker/trainer-worker.js');
    ensureScreenshotDir();
  },
});

function assertNoProblems() {
  const found = problems.splice(0);
  assert.deepEqual(found, [], `problems in the browser:\n${found.join('\n')}`);
}

async function openTrainer(label, { width = 1280, url = new URL(PAGE, site.server.url).href } = {}) {
  const page = watch(await site.browser.newPage({ viewport: { width, height: 900 } }), label, problems);
  await page.goto(url);
  await page.waitForFunction(() => document.querySelector('headlab-trainer')?.dataset.step !== undefined, null, { timeout: 20_000 });
  return page;
}

const trainer = (page) => page.locator('headlab-trainer');
const state = (page) => page.evaluate(() => {
  const t = document.querySelector('headlab-trainer');
  const s = t.snapshot;
  return {
    running: t.running, mode: t.computeMode, step: s?.runs[0].step,
    runs: s?.runs.map((r) => ({ heads: r.numHeads, step: r.step, evalAccuracy: r.eval.accuracy, evalLoss: r.eval.loss, enabled: r.enabled,
      shares: r.metrics.map((m) => m.relationShare) })),
    specialisedStep: t.dataset.specialisedStep ?? null,
  };
});
/** The "Now" table of a run, once it shows the latest update (it is redrawn on the next frames). */
const readout = async (page, run = 1) => {
  await page.waitForFunction((k) => {
    const t = document.querySelector('headlab-trainer');
    const s = t.snapshot?.runs[k - 1];
    const cells = [...t.shadowRoot.querySelectorAll(`[data-testid="trainer-readout"] tbody tr[data-run="${k}"] td`)].map((c) => c.textContent);
    return s && cells[0] === String(s.step) && cells[3] === s.eval.loss.toFixed(4) && cells[4] === s.eval.accuracy.toFixed(3);
  }, run, { timeout: 5000 });
  const cells = await trainer(page).locator(`[data-testid="trainer-readout"] tbody tr[data-run="${run}"] td`).allTextContents();
  const [step, trainLoss, trainAccuracy, evalLoss, evalAccuracy] = cells.map((c) => Number(c.trim()));
  return { step, trainLoss, trainAccuracy, evalLoss, evalAccuracy };
};
/** Resolves after the page has rendered two more frames (what a resize or an update redraws). */
const nextFrames = (page) => page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
/** Waits until the page does not scroll sideways (after a resize its charts redraw for the new width). */
const noOverflow = (page, width) => eventually(async () => {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than a ${width}px screen`);
});
const heatmapNumbers = async (page, run, head) => (await trainer(page).locator(`[data-testid="trainer-weights-${run}-${head}"] td.num`).allTextContents()).map(Number);

// Redraw rate and key latency are printed, not asserted: they are timings, and on a loaded
// 2-core machine the OS can delay any frame or event. What is asserted: training runs in the
// Worker while the page keeps redrawing and every key press reaches its handler.
test('the demo page trains h = 2 to ≥ 0.99 in a Worker while the heatmaps redraw and keys are answered', { timeout: TIMEOUT }, async () => {
  const page = await openTrainer('trainer');
  const before = await heatmapNumbers(page, 1, 1);
  assert.equal(before.length, 64, 'an 8 × 8 table of head 1’s weights');

  // Count heatmap redraws and time keyboard input while it trains.
  await page.evaluate(() => {
    const root = document.querySelector('headlab-trainer').shadowRoot;
    // One callback per rendered update of the map, whether it was redrawn or recoloured in place.
    window.__redraws = 0;
    new MutationObserver(() => { window.__redraws += 1; })
      .observe(root.querySelector('[data-testid="trainer-weights-1-1"]').closest('figure').querySelector('.heatmap__figure'),
        { childList: true, subtree: true, attributes: true, attributeFilter: ['fill'] });
    window.__longTasks = [];
    new PerformanceObserver((l) => window.__longTasks.push(...l.getEntries().map((e) => e.duration))).observe({ type: 'longtask' });
    const input = Object.assign(document.createElement('input'), { id: 'latency-probe', 'aria-label': 'typing probe' });
    document.body.prepend(input);
    window.__latency = [];
    input.addEventListener('keydown', (e) => window.__latency.push(performance.now() - e.timeStamp));
    document.querySelector('headlab-trainer').addEventListener('headlab-specialised', (e) => { window.__specialised = e.detail; });
  });
  // The default speed is a slow first run: slow until the heads specialise, then normal.
  assert.equal(await page.evaluate(() => document.querySelector('headlab-trainer').speed), 'learn');
  assert.equal(await page.evaluate(() => document.querySelector('headlab-trainer').pace()), 40, 'slow before the heads specialise');
  await trainer(page).locator('[data-action="start"]').click();
  await page.waitForFunction(() => (document.querySelector('headlab-trainer').snapshot?.runs[0].step ?? 0) >= 90);
  // Pause takes effect within a chunk, and the step counter stops; the screenshots show training under way.
  await trainer(page).locator('[data-action="start"]').click();
  await page.waitForFunction(() => !document.querySelector('headlab-trainer').running, null, { timeout: 10_000 });
  const paused = (await state(page)).step;
  // That nothing happens has no event to wait for: the counter is watched over a short window.
  await page.waitForTimeout(300);
  assert.equal((await state(page)).step, paused, 'no steps after Pause');
  await page.screenshot({ path: `${SCREENSHOTS}/trainer-mid-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 360, height: 740 });
  await noOverflow(page, 360);
  await nextFrames(page);
  await page.screenshot({ path: `${SCREENSHOTS}/trainer-mid-360.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await trainer(page).locator('[data-action="start"]').click();
  await page.waitForFunction(() => document.querySelector('headlab-trainer').running);
  await page.evaluate(() => { window.__redraws = 0; window.__t = performance.now(); });
  await page.locator('#latency-probe').focus();
  // Twenty key presses, each after the heatmap has redrawn once more.
  for (let i = 0; i < 20; i++) {
    await page.keyboard.press('a');
    await page.waitForFunction((n) => window.__redraws > n, await page.evaluate(() => window.__redraws), { timeout: 10_000 });
  }
  await page.waitForFunction(() => window.__latency.length === 20, null, { timeout: 10_000 });
  const { redraws, seconds, latency, longTasks } = await page.evaluate(() => ({
    redraws: window.__redraws, seconds: (performance.now() - window.__t) / 1000, latency: window.__latency, longTasks: window.__longTasks,
  }));
  const s = await state(page);
  assert.equal(s.mode, 'worker', 'training runs in the trainer Worker');
  assert.ok(s.running, 'still training while typing');
  assert.ok(redraws >= 20, `head 1's heatmap redrew while keys were pressed: ${redraws} times`);
  assert.equal(latency.length, 20, 'every key press reached its handler');
  const sorted = latency.slice().sort((a, b) => a - b);
  const median = sorted[10], worst = sorted[19];

  await page.waitForFunction(() => {
    const t = document.querySelector('headlab-trainer');
    return t.snapshot?.runs[0].eval.accuracy >= 0.99 && t.hasAttribute('data-specialised-step');
  }, null, { timeout: 25_000 });
  const done = await state(page);
  assert.equal(await page.evaluate(() => document.querySelector('headlab-trainer').pace()), 200, 'normal once they have');
  const after = await heatmapNumbers(page, 1, 1);
  assert.ok(after.some((v, i) => Math.abs(v - before[i]) > 0.05), 'head 1’s heatmap changed during training');
  const r = await readout(page);
  assert.ok(r.evalAccuracy >= 0.99, `held-out accuracy shown ${r.evalAccuracy}`);
  // Each relation position has its own head with ≥ 0.7 of the query row's weight, and the verdicts say so.
  const [shares1, shares2] = done.runs[0].shares;
  assert.ok((shares1[0] >= 0.7 && shares2[1] >= 0.7) || (shares1[1] >= 0.7 && shares2[0] >= 0.7), `shares ${JSON.stringify(done.runs[0].shares)}`);
  const verdicts = await trainer(page).locator('[data-testid^="trainer-verdict-1-"] .tag').allTextContents();
  assert.deepEqual([...verdicts].sort(), ['Tracks relation 1', 'Tracks relation 2']);
  const event = await page.evaluate(() => window.__specialised);
  assert.equal(String(event.step), done.specialisedStep, 'headlab-specialised names the step');
  console.log(`# specialised at step ${event.step} after ${event.seconds.toFixed(2)} s of training (slow first run); ` +
    `${(redraws / seconds).toFixed(1)} heatmap redraws/s; key latency median ${median.toFixed(1)} ms, worst ${worst.toFixed(1)} ms; ` +
    `main-thread long tasks: ${longTasks.map((d) => d.toFixed(0)).join(', ') || 'none'}`);

  await readout(page);
  await page.screenshot({ path: `${SCREENSHOTS}/trainer-after-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 360, height: 740 });
  await noOverflow(page, 360);
  await nextFrames(page);
  await page.screenshot({ path: `${SCREENSHOTS}/trainer-after-360.png`, fullPage: true });

  await page.close();
  assertNoProblems();
});

test('a quick tab switch (hidden and shown before the pause took effect): training pauses, then goes on', { timeout: TIMEOUT }, async () => {
  const page = await openTrainer('trainer hide show');
  await page.evaluate(() => { const t = document.querySelector('headlab-trainer'); t.speed = 'normal'; t.start(); });
  await eventually(async () => {
    const s = await state(page);
    assert.ok(s.running && s.step > 0, `training: running ${s.running}, step ${s.step}`);
  });
  const switched = await page.evaluate(quickHideShow, 'headlab-trainer');
  assert.deepEqual([switched.before, switched.between, switched.after], [true, true, true],
    'shown again while the pause was still on its way (the element trains until it takes effect)');
  const resumed = await eventually(async () => {
    const r = await page.evaluate(resumedAfterQuickHideShow, 'headlab-trainer');
    assert.ok(r.ok, `paused, then training again past the pause: running ${r.running}, step ${r.step}, run events ${JSON.stringify(r.log)}`);
    return r;
  }, { timeout: 30_000 });
  console.log(`# quick tab switch at step ${switched.step}: paused at step ${resumed.log.find((x) => !x.running).step}, training again (step ${resumed.step})`);
  await trainer(page).locator('[data-action="start"]').click();
  await page.waitForFunction(() => !document.querySelector('headlab-trainer').running);
  await page.close();
  assertNoProblems();
});

test('ablation: switching a specialised head off drops accuracy and raises loss; on again restores them', { timeout: TIMEOUT }, async () => {
  const page = await openTrainer('trainer ablation');
  await trainer(page).locator('[data-testid="trainer-speed"]').selectOption('fast');
  await trainer(page).locator('[data-action="start"]').click();
  await page.waitForFunction(() => document.querySelector('headlab-trainer').hasAttribute('data-specialised-step'), null, { timeout: 20_000 });
  await trainer(page).locator('[data-action="start"]').click();  // pause
  await page.waitForFunction(() => !document.querySelector('headlab-trainer').running);
  const on = await readout(page);
  assert.ok(on.evalAccuracy >= 0.99, `before ablation ${on.evalAccuracy}`);

  await trainer(page).locator('[data-testid="trainer-switch-1-1"]').uncheck();
  await page.waitForFunction(() => document.querySelector('headlab-trainer').snapshot.runs[0].enabled[0] === false);
  const off = await readout(page);
  assert.ok(off.evalAccuracy < 0.5, `with head 1 off, held-out accuracy ${off.evalAccuracy} (was ${on.evalAccuracy})`);
  assert.ok(off.evalLoss > on.evalLoss + 0.5, `with head 1 off, held-out loss ${off.evalLoss} (was ${on.evalLoss})`);
  assert.equal(off.step, on.step, 'ablation trains nothing');
  await expectText(trainer(page).locator('[data-testid="trainer-ablation-1"]'), /Head 1 switched off/);
  await expectText(trainer(page).locator('[data-testid="trainer-verdict-1-1"]'), /Switched off/);

  await trainer(page).locator('[data-testid="trainer-switch-1-1"]').check();
  await page.waitForFunction(() => document.querySelector('headlab-trainer').snapshot.runs[0].enabled[0] === true);
  const back = await readout(page);
  assert.equal(back.evalAccuracy, on.evalAccuracy, 'head 1 on again: the same accuracy');

  // "Show in the heads view" hands the trained layer to the page's <headlab-heads>.
  await trainer(page).locator('[data-action="heads-view"]').click();
  await page.waitForFunction(() => {
    const hv = document.getElementById('trained-heads');
    return !hv.hidden && /Trained on two-relations, h = 2/.test(hv.shadowRoot.querySelector('[data-testid="model-info"]')?.textContent ?? '');
  }, null, { timeout: 10_000 });
  await eventually(async () => {
    const names = await page.locator('#trained-heads figure.heatmap h4').allTextContents();
    assert.deepEqual(names.map((n) => n.replace(/^Head \d+ · /, '')).sort(), ['tracks relation 1', 'tracks relation 2'], `heads view titles: ${names}`);
  });

  // During training too: the next updates reflect the switch.
  await trainer(page).locator('[data-action="start"]').click();
  await trainer(page).locator('[data-testid="trainer-switch-1-2"]').uncheck();
  await page.waitForFunction(() => {
    const r = document.querySelector('headlab-trainer').snapshot.runs[0];
    return r.enabled[1] === false && r.allOn && r.eval.accuracy < r.allOn.accuracy - 0.3;
  }, null, { timeout: 5000 });
  await page.close();
  assertNoProblems();
});

test('side by side: h = 1 and h = 2 on the same data, both loss curves on one chart; the single head blends', { timeout: TIMEOUT }, async () => {
  const page = await openTrainer('trainer compare');
  await page.evaluate(() => document.querySelector('headlab-trainer').setAttribute('max-steps', '1000'));
  await trainer(page).locator('[data-testid="trainer-compare"]').check();
  await page.waitForFunction(() => document.querySelector('headlab-trainer').shadowRoot.querySelectorAll('section.run').length === 2);
  await trainer(page).locator('[data-testid="trainer-speed"]').selectOption('fast');
  await trainer(page).locator('[data-action="start"]').click();
  await page.waitForFunction(() => {
    const t = document.querySelector('headlab-trainer');
    return !t.running && t.snapshot?.runs[0].step >= 1000;
  }, null, { timeout: 40_000 });
  const s = await state(page);
  assert.deepEqual(s.runs.map((r) => r.heads), [1, 2]);
  assert.equal(s.runs[0].step, s.runs[1].step, 'both runs took the same steps');
  const [one] = s.runs[0].shares;
  assert.ok(one[0] >= 0.2 && one[1] >= 0.2, `h = 1 splits its weight between the two positions: ${one}`);
  assert.ok(s.runs[1].evalLoss < s.runs[0].evalLoss, `h = 2 ends with the lower held-out loss (${s.runs[1].evalLoss} vs ${s.runs[0].evalLoss})`);
  await expectText(trainer(page).locator('[data-testid="trainer-verdict-1-1"] .tag'), /Blends relations 1 and 2/);
  // The comparison leads with the measure that shows the gap: the held-out loss of each, from the snapshot.
  const summary = await expectText(trainer(page).locator('[data-testid="trainer-summary"]'), /^Held-out loss h = 1: \d+\.\d{3}, h = 2: \d+\.\d{3} \(lower is better\)/);
  const [loss1, loss2] = [...summary.matchAll(/h = \d: (\d+\.\d{3})/g)].map((m) => Number(m[1]));
  assert.ok(Math.abs(loss1 - s.runs[0].evalLoss) < 6e-4 && Math.abs(loss2 - s.runs[1].evalLoss) < 6e-4, `summary ${summary} vs snapshot ${s.runs[0].evalLoss}, ${s.runs[1].evalLoss}`);
  assert.match(summary, /head 1 blends: averaged over 256 held-out examples/);

  const history = await page.evaluate(() => document.querySelector('headlab-trainer').history.map((h) => ({ heads: h.heads, n: h.points.length })));
  assert.ok(history.every((h) => h.n >= 5), `both runs have curves: ${JSON.stringify(history)}`);
  // The loss chart draws a held-out line in each run's colour, with both in the legend (once it has redrawn).
  const chart = trainer(page).locator('[data-testid="trainer-chart-loss"] svg');
  await eventually(async () => {
    const legend = await chart.locator('text').allTextContents();
    for (const label of ['h = 1 held-out', 'h = 2 held-out']) assert.ok(legend.includes(label), `legend has “${label}”: ${legend.join(' | ')}`);
    const strokes = await chart.evaluate((svg) => {
      const points = {};
      for (const l of svg.querySelectorAll('polyline')) {
        if (l.getAttribute('opacity')) continue;  // the faint training-batch lines
        const n = l.getAttribute('points').split(' ').length;
        points[l.getAttribute('stroke')] = Math.max(points[l.getAttribute('stroke')] ?? 0, n);
      }
      return points;
    });
    assert.ok(strokes['#2f6fd0'] >= 5 && strokes['#d55e00'] >= 5, `points of the longest held-out line per colour: ${JSON.stringify(strokes)}`);
  });
  await trainer(page).screenshot({ path: `${SCREENSHOTS}/trainer-compare-1280.png` });
  await page.close();
  assertNoProblems();
});

test('curves export as CSV, SVG and PNG; the model saves as .hlab and loads back; bad files are refused clearly', { timeout: TIMEOUT }, async () => {
  const page = await openTrainer('trainer files');
  // No round limit: the run goes on until the curve has its points, however fast the machine.
  await page.evaluate(() => document.querySelector('headlab-trainer').setAttribute('max-steps', '1000000'));
  await trainer(page).locator('[data-testid="trainer-speed"]').selectOption('fast');
  await trainer(page).locator('[data-action="start"]').click();
  // At the fast speed many steps fit in one update: wait for enough points on the curve, not a step count.
  await page.waitForFunction(() => {
    const t = document.querySelector('headlab-trainer');
    return (t.snapshot?.runs[0].step ?? 0) >= 300 && t.history[0]?.points.length >= 8;
  }, null, { timeout: 30_000 });
  await trainer(page).locator('[data-action="start"]').click();
  await page.waitForFunction(() => !document.querySelector('headlab-trainer').running);
  const saved = await readout(page);

  const chart = trainer(page).locator('[data-testid="trainer-chart-loss"]');
  const fetch = async (format) => {
    await chart.locator('summary').click();
    const [d] = await Promise.all([page.waitForEvent('download'), chart.locator(`[data-export="${format}"]`).click()]);
    const data = await readFile(await d.path());
    await chart.locator('summary').click();
    return { name: d.suggestedFilename(), data };
  };
  const csv = await fetch('csv');
  const lines = csv.data.toString('utf8').trim().split(/\r?\n/);
  assert.equal(lines[0], 'heads,step,training_loss,training_accuracy,heldout_loss,heldout_accuracy,heads_on,seconds');
  assert.ok(lines.length > 5, `CSV rows: ${lines.length}`);
  assert.equal(Number(lines[lines.length - 1].split(',')[1]), saved.step, 'the last CSV row is the current step');
  const svg = await fetch('svg');
  assert.match(svg.name, /\.svg$/);
  assert.match(svg.data.toString('utf8'), /<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  const png = await fetch('png');
  assert.deepEqual([...png.data.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'a PNG file');

  const [d] = await Promise.all([page.waitForEvent('download'), trainer(page).locator('[data-action="save-model"]').click()]);
  const model = await readFile(await d.path());
  assert.match(d.suggestedFilename(), /^headlab-two-relations-h2-d16-seed7-step\d+\.hlab$/);
  assert.equal(model.subarray(0, 4).toString('latin1'), 'HLAB');

  // A fresh page with other settings loads it: same step, same held-out numbers, settings follow the file.
  const other = await openTrainer('trainer load', { url: new URL(`${PAGE}#trainer.heads=4&trainer.seed=3`, site.server.url).href });
  await trainer(other).locator('[data-testid="trainer-model-file"]').setInputFiles({ name: 'model.hlab', mimeType: 'application/octet-stream', buffer: model });
  await other.waitForFunction((step) => document.querySelector('headlab-trainer').snapshot?.runs[0].step === step, saved.step);
  const loaded = await readout(other);
  assert.equal(loaded.step, saved.step);
  assert.equal(loaded.evalAccuracy, saved.evalAccuracy);
  assert.equal(loaded.evalLoss, saved.evalLoss);
  assert.equal(await trainer(other).locator('[data-testid="trainer-heads"]').inputValue(), '2');
  assert.equal(await trainer(other).locator('[data-testid="trainer-seed"]').inputValue(), '7');
  // It trains on from there.
  await trainer(other).locator('[data-action="step"]').click();
  await other.waitForFunction((step) => document.querySelector('headlab-trainer').snapshot.runs[0].step === step + 1, saved.step);

  // Bad files: an error naming the file and the reason, and the loaded model stays.
  const refuse = async (name, buffer, pattern) => {
    await trainer(other).locator('[data-testid="trainer-model-file"]').setInputFiles({ name, mimeType: 'application/octet-stream', buffer });
    await other.waitForFunction(() => document.querySelector('headlab-trainer').shadowRoot.querySelector('[data-testid="trainer-errors"]').textContent.length > 0);
    const text = await trainer(other).locator('[data-testid="trainer-errors"]').textContent();
    assert.ok(text.includes(`“${name}” was not loaded.`) && pattern.test(text), `error for ${name}: ${text}`);
    await other.evaluate(() => document.querySelector('headlab-trainer').shadowRoot.querySelector('[data-testid="trainer-errors"]').replaceChildren());
  };
  await refuse('notes.txt', Buffer.from('just some text, not a model'), /magic 'HLAB' missing/);
  await refuse('cut.hlab', model.subarray(0, 100), /expected \d+ bytes of parameters, found \d+/);
  await refuse('empty.hlab', Buffer.alloc(0), /empty/);
  assert.equal((await state(other)).step, saved.step + 1, 'the model in use is unchanged');
  await page.close();
  await other.close();
  assertNoProblems();
});

test('keyboard only: Tab to Start, Space starts and pauses; invalid h and d_model are explained', { timeout: TIMEOUT }, async () => {
  const page = await openTrainer('trainer keyboard');
  await trainer(page).locator('[data-testid="trainer-speed"]').focus();
  let focused = null;
  for (let i = 0; i < 10 && focused !== 'start'; i++) {
    await page.keyboard.press('Tab');
    focused = await page.evaluate(() => document.querySelector('headlab-trainer').shadowRoot.activeElement?.dataset.action ?? null);
  }
  assert.equal(focused, 'start', 'Start is reachable with Tab');
  const outline = await page.evaluate(() => getComputedStyle(document.querySelector('headlab-trainer').shadowRoot.activeElement).outlineStyle);
  assert.equal(outline, 'solid', 'focus is visible');
  await page.keyboard.press('Space');
  await page.waitForFunction(() => document.querySelector('headlab-trainer').running);
  await page.keyboard.press('Space');
  await page.waitForFunction(() => !document.querySelector('headlab-trainer').running);

  await trainer(page).locator('[data-testid="trainer-heads"]').selectOption('3');
  const dk = await expectText(trainer(page).locator('[data-testid="trainer-dk"]'), /h = 3 does not divide d_model = 16/);
  assert.match(dk, /or d_model = 12, 24, 48\./);
  await eventually(async () => assert.ok(await trainer(page).locator('[data-action="start"]').isDisabled(), 'Start is disabled while h does not divide d_model'));
  await trainer(page).locator('[data-testid="trainer-dmodel"]').selectOption('24');
  await page.waitForFunction(() => document.querySelector('headlab-trainer').snapshot?.runs[0].numHeads === 3);
  await expectText(trainer(page).locator('[data-testid="trainer-dk"]'), /= 24 \/ 3 = 8 per head/);
  await expectCount(trainer(page).locator('[data-testid="trainer-metrics-1"] tbody tr'), 3);
  await page.close();
  assertNoProblems();
});

// The slow part of a redraw (the runs' text and tables, the readout, both charts, the summary) costs
// style and layout; done in one animation frame it made frames over 50 ms on a busy machine (issue 32,
// point 5). Each change in the element is filed under the animation frame it was made in
// (document.timeline.currentTime, the same for every callback of a frame): no frame may change the
// metrics tables, the loss chart and the accuracy chart together, nor one of them and a heatmap's
// full redraw (its table of numbers), and each of them does change.
test('while training h = 1 and h = 2 side by side, the runs\' tables, the two charts and a map\'s numbers are redrawn in frames of their own', { timeout: TIMEOUT }, async () => {
  const page = await openTrainer('trainer split redraw');
  await trainer(page).locator('[data-testid="trainer-compare"]').check();
  await page.waitForFunction(() => document.querySelector('headlab-trainer').snapshot?.runs.length === 2, null, { timeout: 20_000 });
  await page.evaluate(() => {
    const t = document.querySelector('headlab-trainer');
    const parts = { metrics: '[data-testid^="trainer-metrics-"]',
      loss: '[data-testid="trainer-chart-loss"]', accuracy: '[data-testid="trainer-chart-accuracy"]',
      mapTable: '[data-testid^="trainer-weights-"]' };
    window.__frames = new Map();
    // From the first frame after a trained step has been drawn: the frame that starts training may
    // still draw as stopped (everything at once, by design).
    let trained = false;
    new MutationObserver((records) => {
      const frame = document.timeline.currentTime;
      if (!trained) {
        trained = t.running && t.snapshot.runs[0].step > 0;
        if (trained) window.__firstFrame = frame;
        return;
      }
      if (frame === window.__firstFrame) return;
      for (const r of records) {
        const node = r.target.nodeType === 1 ? r.target : r.target.parentElement;
        for (const [name, sel] of Object.entries(parts)) {
          if (!node?.closest(sel) || (name === 'mapTable' && !node.closest('table'))) continue;
          if (!window.__frames.has(frame)) window.__frames.set(frame, new Set());
          window.__frames.get(frame).add(name);
        }
      }
    }).observe(t.shadowRoot, { subtree: true, childList: true, attributes: true, characterData: true });
    t.start();
  });
  await page.waitForFunction(() => document.querySelector('headlab-trainer').snapshot.runs[0].step > 300, null, { timeout: 30_000 });
  // Read before pausing: once training stops, everything is redrawn at once (what it shows is final).
  const frames = await page.evaluate(() => [...window.__frames.values()].map((s) => [...s].sort()));
  await page.evaluate(() => document.querySelector('headlab-trainer').pause());
  const seen = new Set(frames.flat());
  assert.deepEqual([...seen].sort(), ['accuracy', 'loss', 'mapTable', 'metrics'], `what changed while training: ${[...seen]}`);
  const crowded = frames.filter((f) => f.length > 1);
  assert.deepEqual(crowded, [], `${crowded.length} of ${frames.length} frames changed more than one of the tables, the charts and a map's numbers: ${JSON.stringify(crowded)} (frames: ${JSON.stringify(frames.slice(0, 12))})`);
  await page.close();
  assertNoProblems();
});

test('prefers-reduced-motion: fewer redraws while training', { timeout: TIMEOUT }, async () => {
  const page = watch(await site.browser.newPage({ viewport: { width: 1280, height: 900 }, reducedMotion: 'reduce' }), 'trainer reduced motion', problems);
  await page.goto(new URL(PAGE, site.server.url).href);
  await page.waitForFunction(() => document.querySelector('headlab-trainer')?.dataset.step !== undefined, null, { timeout: 20_000 });
  await page.evaluate(() => {
    window.__updates = 0;
    window.__t0 = performance.now();
    document.querySelector('headlab-trainer').addEventListener('headlab-step', () => { window.__updates += 1; });
    document.querySelector('headlab-trainer').start();
  });
  // Wait for training to be under way, then compare the updates with the time they took:
  // a slow machine gives fewer updates, never more.
  await page.waitForFunction(() => window.__updates >= 3 && document.querySelector('headlab-trainer').snapshot.runs[0].step > 100, null, { timeout: 30_000 });
  const { updates, step, ms } = await page.evaluate(() => ({ updates: window.__updates, ms: performance.now() - window.__t0,
    step: document.querySelector('headlab-trainer').snapshot.runs[0].step }));
  assert.ok(step > 100, `it trains (step ${step})`);
  assert.ok(updates <= ms / 400 + 1, `${updates} updates in ${(ms / 1000).toFixed(2)} s with reduced motion (one about every 500 ms)`);
  await page.close();
  assertNoProblems();
});

test('embed.html: the autoplay preset trains by itself', { timeout: TIMEOUT }, async () => {
  const page = await openTrainer('embed', { url: new URL('examples/embed.html', site.server.url).href });
  await page.waitForFunction(() => (document.querySelector('headlab-trainer[autoplay]')?.snapshot?.runs[0].step ?? 0) > 50, null, { timeout: 20_000 });
  const attrs = await page.evaluate(() => {
    const t = document.querySelector('headlab-trainer[autoplay]');
    return { task: t.task, heads: t.heads, dModel: t.dModel, seed: t.seed, autoplay: t.autoplay, mode: t.computeMode };
  });
  assert.deepEqual(attrs, { task: 'two-relations', heads: 2, dModel: 16, seed: 7, autoplay: true, mode: 'worker' });
  await page.close();
  assertNoProblems();
});

test('from file:// it trains on the main thread and says so', { timeout: TIMEOUT }, async () => {
  const page = await openTrainer('trainer file://', { url: fileUrl(PAGE) });
  assert.match(await trainer(page).locator('[data-testid="trainer-mode"]').textContent(), /main thread.*file:\/\//);
  await page.evaluate(() => document.querySelector('headlab-trainer').setAttribute('max-steps', '1000000'));
  await trainer(page).locator('[data-testid="trainer-speed"]').selectOption('fast');
  await trainer(page).locator('[data-action="start"]').click();
  await page.waitForFunction(() => (document.querySelector('headlab-trainer').snapshot?.runs[0].step ?? 0) >= 100, null, { timeout: 20_000 });
  // Short chunks keep the page answering: tasks queued while it trains run between chunks, with
  // training still under way (a page that trained in one long task would run them only after it).
  // The waits are printed, not asserted (timings; a loaded machine delays any task).
  const { lags, steps, running } = await page.evaluate(async () => {
    const stepNow = () => document.querySelector('headlab-trainer').snapshot.runs[0].step;
    const out = [], seen = [];
    for (let i = 0; i < 30; i++) {
      const t = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 0));
      out.push(performance.now() - t);
      seen.push(stepNow());
      await new Promise((resolve) => requestAnimationFrame(resolve));
    }
    return { lags: out.sort((a, b) => a - b), steps: seen, running: document.querySelector('headlab-trainer').running };
  });
  assert.ok(running, 'still training after the 30 tasks ran');
  assert.ok(new Set(steps).size >= 3, `training went on between the page's tasks: steps seen ${steps.join(', ')}`);
  console.log(`# file://, main-thread training: median wait of a task ${lags[15].toFixed(0)} ms (all: ${lags.map((x) => x.toFixed(0)).join(', ')})`);
  await trainer(page).locator('[data-action="start"]').click();
  await page.close();
  assertNoProblems();
});
