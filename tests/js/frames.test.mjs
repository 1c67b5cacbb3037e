// tools/frames.mjs's reading of a Chromium trace (bench/browser/long-frames.mjs): each main-thread task's CPU
// split into script, style and layout, and paint, on a hand-made trace whose answers are worked out below.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mainThreadTasks } from '../../tools/frames.mjs';

const X = (name, ts, dur, tdur, tid = 1) => ({ ph: 'X', pid: 7, tid, name, ts, dur, tdur });

test('mainThreadTasks: CPU of each renderer main-thread task, split into script / style and layout / paint', () => {
  const trace = { traceEvents: [
    { ph: 'M', pid: 7, tid: 1, name: 'thread_name', args: { name: 'CrRendererMain' } },
    { ph: 'M', pid: 7, tid: 2, name: 'thread_name', args: { name: 'Compositor' } },
    // A frame: 6 ms of callbacks (2 ms of it a layout the script forced: still script), 3 ms style and
    // layout, 4 ms paint; 14 ms of CPU in all (1 ms in nothing named here).
    X('RunTask', 1000, 20000, 14000),
    X('FireAnimationFrame', 1000, 7000, 6000),
    X('FunctionCall', 1100, 6000, 5500),
    X('Layout', 3000, 2500, 2000),
    X('UpdateLayoutTree', 9000, 1500, 1000),
    X('Layout', 11000, 2500, 2000),
    X('Paint', 14000, 5000, 4000),
    // A task with no animation frame: a timer's 1 ms of script.
    X('RunTask', 30000, 1500, 1200),
    X('TimerFire', 30100, 1200, 1000),
    // Another thread's task: left out.
    X('RunTask', 1000, 50000, 40000, 2),
  ] };
  assert.deepEqual(mainThreadTasks(trace), [
    { cpu: 14, script: 6, styleAndLayout: 3, paint: 4, frame: true },
    { cpu: 1.2, script: 1, styleAndLayout: 0, paint: 0, frame: false },
  ]);
});
