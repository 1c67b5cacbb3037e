// Main-thread frames while HeadLab trains (issue 32, point 5). A course page on one origin
// (http://localhost) loads the module build from another (http://127.0.0.1, with CORS), so
// training runs in a blob: Worker, as on a course platform. While <headlab-language-model>
// trains through its phase change, and separately while <headlab-trainer> trains, the page
// records Long Animation Frames (with their scripts' attribution: source, invoker, forced
// style and layout) and long tasks; a second process keeps one core busy meanwhile.
// Asserted: no forced style or layout in the page's drawing callbacks (from a Chromium trace, so
// whatever the machine's load); and, when the machine is not oversubscribed (load average below
// its cores), no main-thread task over 50 ms of CPU time and no frame over 50 ms whose script time
// is mostly HeadLab's own code (scripts loaded from the HeadLab origin). The worst frame and its
// attribution are printed either way.
// HEADLAB_FRAMES_QUIET=1 leaves the busy process out (the quiet numbers of docs/performance.md);
// HEADLAB_FRAMES_DIST=<folder> serves another build than dist/ (to measure an older one beside it).
import { test, before, after } from 'node:test';
import { spawn } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import assert from 'node:assert/strict';
import { serve } from '../../tools/serve.mjs';
import { DIST, ensureDist, launch, watch } from './helpers.mjs';
import { RECORDER, attribute as attributeTo, blockedTime } from '../../tools/frames.mjs';

const TIMEOUT = 150_000;
const LIMIT_MS = 50;
const BUSY = process.env.HEADLAB_FRAMES_QUIET !== '1';
let cdn, course, browser, base, busy = null;
const problems = [];

before(async () => {
  await ensureDist();
  cdn = await serve({ port: 0, root: process.env.HEADLAB_FRAMES_DIST ?? DIST, cors: true });
  base = cdn.url;
  course = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'close' });
    res.end(pages.get(new URL(req.url, 'http://x').pathname) ?? '');
  });
  await new Promise((resolve) => course.listen(0, '127.0.0.1', resolve));
  browser = await launch();
  // One core kept busy for the whole file, as on a learner's laptop doing something else.
  if (BUSY) {
    busy = spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' });
    process.once('exit', () => busy.kill('SIGKILL'));
  }
});

after(async () => {
  busy?.kill('SIGKILL');
  await browser?.close();
  await cdn?.close();
  course?.closeAllConnections();
  await new Promise((resolve) => (course ? course.close(resolve) : resolve()));
});

const pages = new Map();
const lesson = (body) => '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lesson</title>' +
  `<link rel="icon" href="data:,">${RECORDER}<script type="module" src="${base}headlab-components.js"></script></head>` +
  `<body><h1>Lesson</h1>${body}</body></html>`;

const attribute = (frame) => attributeTo(frame, base);

const describe = (f) => `${f.duration.toFixed(0)} ms frame (blocking ${f.blocking.toFixed(0)} ms, rendering ${f.render.toFixed(0)} ms, ` +
  `style and layout ${f.styleAndLayout.toFixed(0)} ms): HeadLab scripts ${f.headlab.toFixed(0)} ms of ${f.script.toFixed(0)} ms script, ` +
  `${f.forced.toFixed(0)} ms forced layout; ${f.scripts.map((s) => `[${s.type} ${s.invoker} ${s.url.replace(base, '')}${s.fn ? ` ${s.fn}` : ''}@${s.at} ` +
    `${s.duration.toFixed(0)} ms, forced ${s.forced.toFixed(0)} ms]`).join(' ') || 'no script'}`;

/**
 * Opens `body` on the course page, starts training with `start(element)`, waits until `done`
 * holds (or `maxSeconds`), pauses, and returns the frames and long tasks of that stretch.
 */
async function trainAndRecord(label, tag, body, { done, maxSeconds }) {
  pages.set(`/${label}.html`, lesson(body));
  const page = watch(await browser.newPage({ viewport: { width: 1280, height: 900 } }), label, problems);
  await page.goto(`http://localhost:${course.address().port}/${label}.html`);
  await page.waitForFunction((t) => { const e = document.querySelector(t); return e?.dataset.state === 'ready' && !e.hasAttribute('data-busy') && e.runsIn !== null; },
    tag, { timeout: 60_000 });
  await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline'] });
  // What the element's heatmaps show when it is started (to compare with what they showed when it became ready).
  const maps = (t) => [...document.querySelector(t).shadowRoot.querySelectorAll('.heatmap__figure')].map((f) => f.querySelector('svg')?.getAttribute('viewBox') ?? null);
  const mapsAtStart = await page.evaluate(maps, tag);
  const mapsAtReady = await page.evaluate(() => window.mapsAtReady_ ?? null);
  const from = await page.evaluate((t) => { document.querySelector(t).start(); return performance.now(); }, tag);
  const load = [os.loadavg()[0]];
  await page.waitForFunction(done, tag, { timeout: maxSeconds * 1000, polling: 250 }).catch(() => {});
  load.push(os.loadavg()[0]);
  const r = await page.evaluate(([t, from]) => {
    const e = document.querySelector(t);
    e.pause();
    const since = (x) => x.start + x.duration > from;
    return { runsIn: e.runsIn, step: e.snapshot?.runs[0].step ?? 0, seconds: (performance.now() - from) / 1000,
      phase: e.phaseChange?.step ?? null, frames: window.frames_.filter(since), tasks: window.tasks_.filter(since) };
  }, [tag, from]);
  const cpu = mainThreadCpu(JSON.parse((await browser.stopTracing()).toString('utf8')));
  await page.close();
  const frames = r.frames.map(attribute);
  const ours = frames.filter((f) => f.ours);
  const worst = [...frames].sort((a, b) => b.duration - a.duration)[0];
  const worstOurs = [...ours].sort((a, b) => b.duration - a.duration)[0];
  const blocked = blockedTime(r.tasks);
  console.log(`# ${label}${BUSY ? ', one core busy' : ', quiet'}: ${r.step} steps in ${r.seconds.toFixed(1)} s in ${r.runsIn}${r.phase ? `, phase change at step ${r.phase}` : ''}; ` +
    `load ${load.map((x) => x.toFixed(1)).join(' → ')} on ${os.availableParallelism()} cores`);
  console.log(`#   long animation frames: ${frames.length} (HeadLab's: ${ours.length}); long tasks: ${r.tasks.length}, longest ${Math.max(0, ...r.tasks.map((x) => x.duration)).toFixed(0)} ms, ` +
    `blocked ${blocked.toFixed(0)} ms in all; HeadLab scripts' forced layout, most in one frame: ${Math.max(0, ...frames.map((f) => f.forced)).toFixed(0)} ms`);
  console.log(`#   main-thread tasks: ${cpu.length}, CPU time of the longest: ${cpu.slice(0, 5).map((x) => x.toFixed(0)).join(', ')} ms; ` +
    `median ${(cpu[cpu.length >> 1] ?? 0).toFixed(1)} ms; in the longest (nested, ms): ${cpu.worst}`);
  console.log(`#   forced style and layout while drawing (trace): ${cpu.forced.length} times, ${cpu.forced.reduce((a, x) => a + x, 0).toFixed(1)} ms of CPU`);
  if (worst) console.log(`#   worst frame: ${describe(worst)}`);
  if (worstOurs && worstOurs !== worst) console.log(`#   worst HeadLab frame: ${describe(worstOurs)}`);
  return { ...r, frames, ours, cpu, load: Math.max(...load), mapsAtReady, mapsAtStart };
}

/**
 * A script for the lesson: records what `tag`'s heatmaps show (each SVG's viewBox) the moment the element is
 * ready and shown (data-state ready, no data-busy), before any animation frame after it (window.mapsAtReady_).
 */
const recordMapsAtReady = (tag) => `<script>new MutationObserver((list, o) => {
  const e = document.querySelector('${tag}');
  if (!e || e.dataset.state !== 'ready' || e.hasAttribute('data-busy')) return;
  o.disconnect();
  window.mapsAtReady_ = [...e.shadowRoot.querySelectorAll('.heatmap__figure')].map((f) => f.querySelector('svg')?.getAttribute('viewBox') ?? null);
}).observe(document.body, { attributes: true, subtree: true, attributeFilter: ['data-state', 'data-busy'] });</script>`;

/**
 * The CPU time (thread time, ms) of each task of the renderer's main thread in a Chromium trace,
 * longest first. A frame's or long task's duration is wall time: on a machine running more threads
 * than it has cores it includes the time other processes held the core; the CPU time does not.
 */
function mainThreadCpu(trace) {
  const events = trace.traceEvents ?? trace;
  const main = new Set(events.filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`));
  const own = events.filter((e) => e.ph === 'X' && main.has(`${e.pid}:${e.tid}`));
  const tasks = own.filter((e) => e.name === 'RunTask').map((e) => ({ e, cpu: (e.tdur ?? e.dur) / 1000 })).sort((a, b) => b.cpu - a.cpu);
  // What the longest task spent its time on (events directly inside it, by name).
  const top = tasks[0]?.e;
  const parts = new Map();
  if (top) {
    for (const e of own) {
      if (e === top || e.ts < top.ts || e.ts + e.dur > top.ts + top.dur || e.name === 'RunTask') continue;
      const data = e.args?.data ?? {};
      const where = data.url || data.functionName ? ` (${data.functionName ?? ''}@${String(data.url ?? '').replace(base, '')})` : '';
      parts.set(`${e.name}${where}`, (parts.get(`${e.name}${where}`) ?? 0) + (e.tdur ?? e.dur) / 1000);
    }
  }
  const cpu = tasks.map((x) => x.cpu);
  cpu.worst = [...parts].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([name, ms]) => `${name} ${ms.toFixed(0)}`).join(', ');
  // Forced style and layout in the page's drawing: a style or layout event inside a script that an
  // animation frame, a Worker's message or a timer ran (the rendering steps' own are outside any script).
  const drawing = own.filter((e) => ['FireAnimationFrame', 'HandlePostMessage', 'TimerFire'].includes(e.name));
  cpu.forced = own.filter((e) => (e.name === 'Layout' || e.name === 'UpdateLayoutTree') && drawing.some((d) => e.ts >= d.ts && e.ts + e.dur <= d.ts + d.dur))
    .map((e) => (e.tdur ?? e.dur) / 1000);
  return cpu;
}

/**
 * The goal: no HeadLab frame over 50 ms. Asserted on CPU time always (every main-thread task of
 * this page while it trains is HeadLab's), and on the frames' wall time when the machine is not
 * oversubscribed (load average below the core count), as tests/browser/cross-origin-workers does.
 */
function assertNoLongFrames(r) {
  assert.ok(r.cpu.length > 0, "the trace holds the main thread's tasks");
  assert.equal(r.cpu.forced.length, 0, `no forced style or layout while drawing: ${r.cpu.forced.map((x) => x.toFixed(1))} ms`);
  if (r.load >= os.availableParallelism()) {
    console.log(`#   load ${r.load.toFixed(1)} on ${os.availableParallelism()} cores: the 50 ms goal is printed above, not asserted`);
    return;
  }
  assert.ok(r.cpu[0] <= LIMIT_MS, `no main-thread task uses over ${LIMIT_MS} ms of CPU while training: ${r.cpu.slice(0, 5).map((x) => x.toFixed(1))}`);
  assert.deepEqual(r.ours.filter((f) => f.duration > LIMIT_MS).map(describe), [], `HeadLab frames over ${LIMIT_MS} ms`);
}

function assertNoProblems() {
  const found = problems.splice(0);
  assert.deepEqual(found, [], `problems in the browser:\n${found.join('\n')}`);
}

test('<headlab-language-model> training through its phase change: no HeadLab frame over 50 ms', { timeout: TIMEOUT }, async () => {
  const tag = 'headlab-language-model';
  // Until 250 steps past the phase change (the labels, the opened head and the charts all change there), at most 30 s.
  const r = await trainAndRecord('language-model', tag, `<${tag} task="induction"></${tag}>`, {
    maxSeconds: 30,
    done: (t) => { const e = document.querySelector(t); return e.phaseChange && e.snapshot.runs[0].step >= e.phaseChange.step + 250; },
  });
  assert.equal(r.runsIn, 'worker');
  assert.ok(r.step >= 100, `it trained (${r.step} steps)`);
  assertNoLongFrames(r);
  assertNoProblems();
});

test('<headlab-trainer> training h = 1 and h = 2 side by side: no HeadLab frame over 50 ms', { timeout: TIMEOUT }, async () => {
  const tag = 'headlab-trainer';
  const r = await trainAndRecord('trainer', tag, `<${tag} compare speed="normal"></${tag}>${recordMapsAtReady(tag)}`, {
    maxSeconds: 10, done: () => false,
  });
  assert.equal(r.runsIn, 'worker');
  // Its costliest frame is its heatmaps' first draw at their width: done before it is shown ready (and can be
  // started), not in the first frames of training.
  assert.equal(r.mapsAtReady?.length, 3, 'three heatmaps (h = 1 and h = 2) when the trainer is ready');
  assert.ok(r.mapsAtReady.every(Boolean), `every heatmap is drawn when the trainer is ready: ${r.mapsAtReady}`);
  assert.deepEqual(r.mapsAtStart, r.mapsAtReady, 'the heatmaps are drawn at their size by the time the trainer is ready (none redrawn before it starts)');
  assert.ok(r.step >= 100, `it trained (${r.step} steps)`);
  assertNoLongFrames(r);
  assertNoProblems();
});
