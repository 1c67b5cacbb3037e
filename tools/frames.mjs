// Main-thread frames of a page while HeadLab trains, as tests/browser/long-frames.test.mjs asserts them and
// bench/browser/long-frames.mjs measures them: a script (first in the page's <head>) that records every
// Long Animation Frame, with its scripts' attribution, and every long task; and how to read them.

/** Records every long animation frame and long task from the page's first script on (window.frames_, window.tasks_). */
export const RECORDER = `<script>window.frames_ = []; window.tasks_ = [];
new PerformanceObserver((l) => { for (const e of l.getEntries()) window.frames_.push({ start: e.startTime, duration: e.duration,
  blocking: e.blockingDuration, render: e.renderStart ? e.startTime + e.duration - e.renderStart : 0,
  styleAndLayout: e.styleAndLayoutStart ? e.startTime + e.duration - e.styleAndLayoutStart : 0,
  scripts: e.scripts.map((s) => ({ url: s.sourceURL, fn: s.sourceFunctionName, at: s.sourceCharPosition, invoker: s.invoker,
    type: s.invokerType, duration: s.duration, forced: s.forcedStyleAndLayoutDuration })) }); })
  .observe({ type: 'long-animation-frame', buffered: true });
new PerformanceObserver((l) => { for (const e of l.getEntries()) window.tasks_.push({ start: e.startTime, duration: e.duration }); })
  .observe({ type: 'longtask', buffered: true });</script>`;

/**
 * A frame's HeadLab part: the time of its scripts loaded from `base` (the HeadLab origin), their forced
 * style and layout included. A frame is HeadLab's (`ours`) when that is most of the frame's script time.
 */
export function attribute(frame, base) {
  const ours = frame.scripts.filter((s) => s.url.startsWith(base));
  const script = frame.scripts.reduce((a, s) => a + s.duration, 0);
  const headlab = ours.reduce((a, s) => a + s.duration, 0);
  return { ...frame, headlab, forced: ours.reduce((a, s) => a + s.forced, 0), script, ours: headlab > 0 && headlab >= script / 2 };
}

/** Total blocking time of long tasks: what each spent over 50 ms, summed. */
export const blockedTime = (tasks) => tasks.reduce((a, x) => a + Math.max(0, x.duration - 50), 0);

/**
 * The CPU time (thread time, ms) of every task of the renderers' main threads in a Chromium trace (categories
 * devtools.timeline and disabled-by-default-devtools.timeline), longest first. A long task's duration is wall
 * time: on a machine running more threads than it has cores it includes the time other processes held the
 * core; the CPU time does not.
 */
export function mainThreadCpu(trace) {
  const events = trace.traceEvents ?? trace;
  const main = new Set(events.filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`));
  return events.filter((e) => e.ph === 'X' && e.name === 'RunTask' && main.has(`${e.pid}:${e.tid}`))
    .map((e) => (e.tdur ?? e.dur) / 1000).sort((a, b) => b - a);
}

const SCRIPT = new Set(['FireAnimationFrame', 'FunctionCall', 'EventDispatch', 'TimerFire', 'v8.run', 'EvaluateScript']);
const STYLE_LAYOUT = new Set(['UpdateLayoutTree', 'Layout', 'RecalculateStyles']);
const PAINT = new Set(['PrePaint', 'Paint', 'Layerize', 'UpdateLayer', 'CompositeLayers', 'Commit', 'PaintImage']);

/**
 * Every task of the renderers' main threads in a Chromium trace (as mainThreadCpu), in order, each with its CPU
 * time (ms) split into script, style and layout, and paint (the outermost such events inside it: style or layout
 * forced by a script counts as script), and whether it ran animation-frame callbacks (`frame`).
 */
export function mainThreadTasks(trace) {
  const events = trace.traceEvents ?? trace;
  const main = new Set(events.filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`));
  const xs = events.filter((e) => e.ph === 'X' && main.has(`${e.pid}:${e.tid}`)).sort((a, b) => a.ts - b.ts);
  const out = [];
  let j = 0;
  for (const t of xs.filter((e) => e.name === 'RunTask')) {
    const end = t.ts + t.dur;
    const o = { cpu: (t.tdur ?? t.dur) / 1000, script: 0, styleAndLayout: 0, paint: 0, frame: false };
    let coveredTo = -Infinity;
    while (j < xs.length && xs[j].ts < t.ts) j++;
    for (let i = j; i < xs.length && xs[i].ts < end; i++) {
      const e = xs[i];
      if (e === t) continue;
      if (e.name === 'FireAnimationFrame') o.frame = true;
      const kind = SCRIPT.has(e.name) ? 'script' : STYLE_LAYOUT.has(e.name) ? 'styleAndLayout' : PAINT.has(e.name) ? 'paint' : null;
      if (!kind || e.ts < coveredTo) continue;
      o[kind] += (e.tdur ?? e.dur) / 1000;
      coveredTo = e.ts + e.dur;
    }
    out.push(o);
  }
  return out;
}
