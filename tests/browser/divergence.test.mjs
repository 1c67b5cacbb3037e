// <headlab-trainer> when training diverges, in headless Chromium, served from
// dist/ under the strict CSP: at learning rate 10 the loss blows up; training
// stops at the last good step, the element says so in plain words with the step
// and the rate, Start and Step are off, the kept model still evaluates finite,
// and "Lower the rate" trains again at a rate that works.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { watch, useSite } from './helpers.mjs';

const TIMEOUT = 90_000;
const PAGE = 'demos/trainer/index.html';
const problems = [];

const site = useSite({ csp: true });

const trainer = (page) => page.locator('headlab-trainer');

test('learning rate 10 diverges: the element stops, says where and why, and "Lower the rate" trains on with a finite loss', { timeout: TIMEOUT }, async () => {
  const page = watch(await site.browser.newPage({ viewport: { width: 1280, height: 900 } }), 'divergence', problems);
  await page.goto(new URL(`${PAGE}#trainer.learning-rate=10&trainer.speed=fast`, site.server.url).href);
  await page.waitForFunction(() => document.querySelector('headlab-trainer')?.dataset.step !== undefined, null, { timeout: 20_000 });
  assert.equal(await trainer(page).locator('[data-testid="trainer-lr"]').inputValue(), '10');
  await page.evaluate(() => {
    const t = document.querySelector('headlab-trainer');
    t.setAttribute('max-steps', '50000');  // one round long enough to diverge in
    window.divergedEvents = [];
    t.addEventListener('headlab-diverged', (e) => window.divergedEvents.push(e.detail));
  });

  await trainer(page).locator('[data-action="start"]').click();
  const message = trainer(page).locator('[data-testid="trainer-errors"]');
  await trainer(page).locator('[data-testid="trainer-diverged"]').waitFor({ timeout: 60_000 });
  const text = await message.textContent();
  const step = Number(/Training diverged at step (\d+)\./.exec(text)?.[1]);
  console.log(`# diverged at step ${step}: ${text}`);
  assert.ok(step > 1, `a step number in: ${text}`);
  assert.match(text, /With learning rate 10, the loss blew up/);
  assert.match(text, new RegExp(`kept as it was at step ${step - 1}\\b`));

  // Training stopped on the kept model: finite held-out loss, Start and Step off, Save still on.
  await page.waitForFunction(() => !document.querySelector('headlab-trainer').running);
  const s = await page.evaluate(() => {
    const t = document.querySelector('headlab-trainer');
    return { step: t.snapshot.runs[0].step, loss: t.snapshot.runs[0].eval.loss, events: window.divergedEvents };
  });
  assert.equal(s.step, step - 1);
  assert.ok(Number.isFinite(s.loss), `held-out loss of the kept model: ${s.loss}`);
  assert.deepEqual(s.events.map((e) => [e.step, e.learningRate, e.optimizer]), [[step, 10, 'adam']]);
  assert.ok(await trainer(page).locator('[data-action="start"]').isDisabled());
  assert.ok(await trainer(page).locator('[data-action="step"]').isDisabled());
  assert.ok(await trainer(page).locator('[data-action="save-model"]').isEnabled());
  const stepError = await page.evaluate(() => document.querySelector('headlab-trainer').step(1).then(() => 'resolved', (e) => `${e.constructor.name}: ${e.message}`));
  assert.match(stepError, /^RangeError: headlab-trainer: step\(n\): training diverged at step \d+ with learning rate 10/);

  // Both actions are buttons in the alert, reachable from the keyboard.
  const lower = trainer(page).locator('[data-action="lower-rate"]');
  assert.equal(await lower.evaluate((b) => b.localName), 'button');
  assert.equal(await trainer(page).locator('[data-action="reset-diverged"]').evaluate((b) => b.localName), 'button');
  await lower.focus();
  assert.equal(await page.evaluate(() => document.querySelector('headlab-trainer').shadowRoot.activeElement?.dataset.action), 'lower-rate');
  assert.match(await lower.textContent(), /Lower the rate to 0\.003 and train again/);

  await lower.click();
  await page.waitForFunction(() => {
    const t = document.querySelector('headlab-trainer');
    const r = t.snapshot?.runs[0];
    return t.learningRate === 0.003 && t.running && r && r.step >= 200 &&
      Number.isFinite(r.eval.loss) && r.train && Number.isFinite(r.train.loss);
  }, null, { timeout: 30_000 });
  assert.equal(await trainer(page).locator('[data-testid="trainer-diverged"]').count(), 0, 'the divergence message is gone');
  assert.equal(await trainer(page).locator('[data-testid="trainer-lr"]').inputValue(), '0.003');
  await trainer(page).locator('[data-action="start"]').click();  // pause
  await page.waitForFunction(() => !document.querySelector('headlab-trainer').running);
  const after = await page.evaluate(() => document.querySelector('headlab-trainer').snapshot.runs[0]);
  assert.ok(after.eval.loss < s.loss, `held-out loss ${after.eval.loss} after lowering the rate, ${s.loss} when it diverged`);
  await page.close();
  const found = problems.splice(0);
  assert.deepEqual(found, [], `problems in the browser:\n${found.join('\n')}`);
});
