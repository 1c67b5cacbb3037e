// The pacing of a training element's costly redraw (web/lib/teach/paced-refresh.js), driven by a fake
// clock, fake animation frames and fake timers: one part per frame while training, at most one refresh
// per gap, the parts left taking frames of their own when no update comes, everything at once when stopped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PacedRefresh } from '../../web/lib/teach/paced-refresh.js';

/** A clock, a frame counter and timers that only move when the test says so. */
function fakePage() {
  const page = { now: 0, frame: 0, timers: [], frames: [], nextId: 1 };
  page.timersApi = {
    setTimeout: (fn, ms) => { const id = page.nextId++; page.timers.push({ id, at: page.now + ms, fn }); return id; },
    clearTimeout: (id) => { page.timers = page.timers.filter((t) => t.id !== id); },
    requestFrame: (fn) => { const id = page.nextId++; page.frames.push({ id, fn }); return id; },
    cancelFrame: (id) => { page.frames = page.frames.filter((f) => f.id !== id); },
  };
  /** Moves the clock by ms, firing the timers that come due, in order. */
  page.advance = (ms) => {
    const until = page.now + ms;
    for (;;) {
      const due = page.timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      page.timers = page.timers.filter((t) => t !== due);
      page.now = due.at;
      due.fn();
    }
    page.now = until;
  };
  /** A new animation frame: its callbacks run. */
  page.drawFrame = () => {
    page.frame += 1;
    const frames = page.frames;
    page.frames = [];
    for (const f of frames) f.fn();
  };
  page.pace = new PacedRefresh({ clock: () => page.now, frame: () => page.frame, timers: page.timersApi });
  return page;
}

function partsLog() {
  const drawn = [];
  let made = 0;
  return {
    drawn,
    made: () => made,
    parts: () => { made += 1; const n = made; return ['a', 'b', 'c'].map((p) => () => drawn.push(`${p}${n}`)); },
  };
}

test('stopped: every part at once, no timer left', () => {
  const page = fakePage();
  const log = partsLog();
  assert.equal(page.pace.update({ running: false, gap: 250, parts: log.parts, again: () => assert.fail('no update asked') }), true);
  assert.deepEqual(log.drawn, ['a1', 'b1', 'c1']);
  assert.equal(page.timers.length, 0);
  assert.equal(page.frames.length, 0);
});

test('training: one part per animation frame, never two in one frame', () => {
  const page = fakePage();
  const log = partsLog();
  const again = () => {};
  page.now = 1000;
  assert.equal(page.pace.update({ running: true, gap: 250, parts: log.parts, again }), true);
  assert.deepEqual(log.drawn, ['a1']);
  // A second update within the same frame draws nothing.
  assert.equal(page.pace.update({ running: true, gap: 250, parts: log.parts, again }), false);
  assert.deepEqual(log.drawn, ['a1']);
  page.drawFrame();
  page.now += 16;
  page.pace.update({ running: true, gap: 250, parts: log.parts, again });
  page.drawFrame();
  page.now += 16;
  page.pace.update({ running: true, gap: 250, parts: log.parts, again });
  assert.deepEqual(log.drawn, ['a1', 'b1', 'c1']);
  assert.equal(log.made(), 1, 'one refresh made its parts once');
  assert.equal(page.pace.pending, null);
});

test('training: the next refresh waits for the gap, then its update is asked for', () => {
  const page = fakePage();
  const log = partsLog();
  let asked = 0;
  const update = () => page.pace.update({ running: true, gap: 250, parts: log.parts, again: () => { asked += 1; page.pace.force(); } });
  page.now = 1000;
  for (let i = 0; i < 3; i++) { update(); page.drawFrame(); page.now += 16; }
  assert.deepEqual(log.drawn, ['a1', 'b1', 'c1']);
  assert.equal(page.pace.due(250), false);
  // Updates inside the gap draw no part; the last one leaves one timer that asks again after the gap.
  assert.equal(update(), false);
  page.drawFrame();
  page.now += 16;
  assert.equal(update(), false);
  assert.equal(page.timers.length, 1);
  page.advance(249);
  assert.equal(asked, 0);
  page.advance(1);
  assert.equal(asked, 1);
  assert.equal(page.pace.due(250), true);
  page.drawFrame();
  assert.equal(update(), true);
  assert.deepEqual(log.drawn.slice(3), ['a2']);
});

test('training: force() starts a refresh inside the gap', () => {
  const page = fakePage();
  const log = partsLog();
  const update = () => page.pace.update({ running: true, gap: 250, parts: log.parts, again: () => {} });
  page.now = 1000;
  for (let i = 0; i < 3; i++) { update(); page.drawFrame(); page.now += 10; }
  assert.equal(update(), false);
  page.pace.force();
  assert.equal(page.pace.due(250), true);
  assert.equal(update(), true);
  assert.deepEqual(log.drawn, ['a1', 'b1', 'c1', 'a2']);
});

test('training: with no update coming, the parts left take frames of their own after partWait', () => {
  const page = fakePage();
  const log = partsLog();
  page.now = 1000;
  page.pace.update({ running: true, gap: 250, parts: log.parts, again: () => {} });
  assert.deepEqual(log.drawn, ['a1']);
  page.advance(99);
  assert.equal(page.frames.length, 0);
  page.advance(1);
  assert.equal(page.frames.length, 1, 'a frame is asked for');
  assert.deepEqual(log.drawn, ['a1'], 'but nothing drawn outside a frame');
  page.drawFrame();
  assert.deepEqual(log.drawn, ['a1', 'b1']);
  page.advance(100);
  page.drawFrame();
  assert.deepEqual(log.drawn, ['a1', 'b1', 'c1']);
  page.advance(1000);
  page.drawFrame();
  assert.equal(page.timers.length, 0);
  assert.equal(page.frames.length, 0);
});

test('stopping mid-refresh drops its parts and draws a whole refresh at once', () => {
  const page = fakePage();
  const log = partsLog();
  page.now = 1000;
  page.pace.update({ running: true, gap: 250, parts: log.parts, again: () => {} });
  assert.equal(page.pace.due(250), true, 'a refresh under way is due');
  page.drawFrame();
  page.pace.update({ running: false, gap: 250, parts: log.parts, again: () => {} });
  assert.deepEqual(log.drawn, ['a1', 'a2', 'b2', 'c2']);
  assert.equal(page.timers.length, 0, 'the waiting part is dropped');
  page.advance(1000);
  page.drawFrame();
  assert.deepEqual(log.drawn, ['a1', 'a2', 'b2', 'c2']);
});

test('without a frame id (an old browser), every update draws the next part', () => {
  let now = 0;
  const noop = () => null;
  const pace = new PacedRefresh({ clock: () => now, frame: () => null,
    timers: { setTimeout: noop, clearTimeout: noop, requestFrame: noop, cancelFrame: noop } });
  const log = partsLog();
  now = 500;
  pace.update({ running: true, gap: 250, parts: log.parts, again: () => {} });
  pace.update({ running: true, gap: 250, parts: log.parts, again: () => {} });
  pace.update({ running: true, gap: 250, parts: log.parts, again: () => {} });
  assert.deepEqual(log.drawn, ['a1', 'b1', 'c1']);
});

test('a frame claimed by something else (a full heatmap redraw) gets no part; the part takes the next update\'s frame', () => {
  const page = fakePage();
  const log = partsLog();
  const again = () => {};
  assert.equal(page.pace.frameTaken(), false);
  page.pace.claimFrame();
  assert.equal(page.pace.frameTaken(), true, 'claimed');
  // The gap has passed (first refresh): the refresh starts, but its first part waits.
  assert.equal(page.pace.update({ running: true, gap: 250, parts: log.parts, again }), false);
  assert.deepEqual(log.drawn, []);
  page.drawFrame();
  assert.equal(page.pace.frameTaken(), false, 'a new frame is free');
  assert.equal(page.pace.update({ running: true, gap: 250, parts: log.parts, again }), true);
  assert.deepEqual(log.drawn, ['a1']);
  assert.equal(page.pace.frameTaken(), true, 'a part was drawn in it');
  // A second update in the same frame draws nothing more.
  assert.equal(page.pace.update({ running: true, gap: 250, parts: log.parts, again }), false);
  assert.deepEqual(log.drawn, ['a1']);
});

test('without a frame id, claimFrame takes nothing', () => {
  const pace = new PacedRefresh({ clock: () => 0, frame: () => null, timers: fakePage().timersApi });
  pace.claimFrame();
  assert.equal(pace.frameTaken(), false);
});
