// Long tasks on the page's main thread while HeadLab's elements train (issue 32, point 5), before and after
// a change, on a quiet machine and a busy one.
//
//   node bench/browser/long-frames.mjs --before build/dist-main --after dist [--seconds 20] [--rounds 1] \
//     [--out bench/results/long-frames-YYYY-MM-DD] [--doc] [--elements language-model,trainer] [--loads quiet,one,busy]
//   node bench/browser/long-frames.mjs --render bench/results/long-frames-YYYY-MM-DD.json   (the table again)
//
// Each build (a dist/ folder: --before, --after; their labels are the folders' COMMIT file or name) is
// served from http://127.0.0.1 with CORS to a course page on http://localhost, so training runs in a
// blob: Worker, as on a course platform. For each element (<headlab-language-model task="induction">,
// <headlab-trainer compare>), each load (quiet; one: a `node -e "for(;;){}"` process beside it, keeping one core
// busy, as issue 32 sets the goal; busy: two such processes) and
// each build, alternating the builds' order from one round to the next, a fresh page waits for the
// element, starts training, records `--seconds` of Long Animation Frames and long tasks
// (PerformanceObserver, tools/frames.mjs), pauses and reports: long tasks (over 50 ms), the longest,
// total blocked time (what each spent over 50 ms), long animation frames (all and HeadLab's, the frames
// mostly HeadLab's own scripts), the forced style and layout inside HeadLab's scripts, the main thread's
// CPU time from a Chromium trace (in all, the longest task's, tasks over 50 ms of it: wall times on a
// loaded machine include waiting for a core, CPU times do not), the tasks that ran animation-frame callbacks
// (the page's drawing: how many, their CPU split into script / style and layout / paint, its 99th percentile,
// how many over 16 ms of CPU; tools/frames.mjs mainThreadTasks), and the steps trained (the Worker went on).
// Writes OUT.json (every frame and task) and OUT.md; --doc also puts the table into docs/performance.md in
// place of the block after <!-- long-frames: … -->.
// Not a test: nothing is asserted. A benchmark of the machine's moment, too: run builds alternately.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../../tools/serve.mjs';
import { launch } from '../../tools/chromium.mjs';
import { RECORDER, attribute, blockedTime, mainThreadCpu, mainThreadTasks } from '../../tools/frames.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function options(argv) {
  const o = { before: null, after: 'dist', seconds: 20, rounds: 1, out: `bench/results/long-frames-${new Date().toISOString().slice(0, 10)}`, doc: false,
    elements: 'language-model,trainer', loads: 'quiet,one,busy' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--before') o.before = value();
    else if (a === '--after') o.after = value();
    else if (a === '--seconds') o.seconds = Number(value());
    else if (a === '--rounds') o.rounds = Number(value());
    else if (a === '--out') o.out = value();
    else if (a === '--elements') o.elements = value();
    else if (a === '--loads') o.loads = value();
    else if (a === '--doc') o.doc = true;
    else throw new Error(`unknown option ${a}; see the comment at the top of bench/browser/long-frames.mjs`);
  }
  if (!(o.seconds >= 1)) throw new Error(`--seconds must be a number of seconds ≥ 1, got ${o.seconds}`);
  if (!(Number.isInteger(o.rounds) && o.rounds >= 1)) throw new Error(`--rounds must be a whole number ≥ 1, got ${o.rounds}`);
  for (const dir of [o.before, o.after].filter(Boolean)) {
    if (!existsSync(path.resolve(repo, dir, 'headlab-components.js'))) throw new Error(`${dir} holds no headlab-components.js: build it (node scripts/bundle.mjs) or name a dist/ folder`);
  }
  o.elements = o.elements.split(',');
  o.loads = o.loads.split(',');
  for (const e of o.elements) if (!ELEMENTS[e]) throw new Error(`--elements: unknown element "${e}" (language-model, trainer)`);
  for (const l of o.loads) if (!(l in BURNERS)) throw new Error(`--loads: unknown load "${l}" (${Object.keys(BURNERS).join(', ')})`);
  return o;
}

const ELEMENTS = {
  'language-model': { tag: 'headlab-language-model', body: '<headlab-language-model task="induction"></headlab-language-model>' },
  trainer: { tag: 'headlab-trainer', body: '<headlab-trainer compare speed="normal"></headlab-trainer>' },
};

/** A build's label: its COMMIT file (written when it was copied aside) or its folder's name. */
function label(dir) {
  const file = path.resolve(repo, dir, 'COMMIT');
  return existsSync(file) ? `${readFileSync(file, 'utf8').trim()} (${dir})` : dir;
}

/** How many processes keep a core busy beside the browser under each load, as a learner's laptop doing something else. */
const BURNERS = { quiet: 0, one: 1, busy: 2 };
function burn(n) {
  const kids = Array.from({ length: n }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
  const stop = () => kids.forEach((k) => k.kill('SIGKILL'));
  process.once('exit', stop);
  return stop;
}

async function measure(browser, course, cdn, element, seconds) {
  const { tag, body } = ELEMENTS[element];
  const name = `/${element}-${Math.random().toString(36).slice(2)}.html`;
  course.pages.set(name, '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lesson</title>' +
    `<link rel="icon" href="data:,">${RECORDER}<script type="module" src="${cdn.url}headlab-components.js"></script></head>` +
    `<body><h1>Lesson</h1>${body}</body></html>`);
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await page.goto(`${course.url}${name.slice(1)}`);
    await page.waitForFunction((t) => { const e = document.querySelector(t); return e?.dataset.state === 'ready' && !e.hasAttribute('data-busy') && e.runsIn !== null; },
      tag, { timeout: 120_000 });
    const loadAverage = [os.loadavg()[0]];
    await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline'] });
    const from = await page.evaluate((t) => { document.querySelector(t).start(); return performance.now(); }, tag);
    await new Promise((r) => setTimeout(r, seconds * 1000));
    loadAverage.push(os.loadavg()[0]);
    const r = await page.evaluate(([t, from]) => {
      const e = document.querySelector(t);
      e.pause();
      const since = (x) => x.start + x.duration > from;
      return { runsIn: e.runsIn, steps: e.snapshot?.runs[0].step ?? 0, seconds: (performance.now() - from) / 1000,
        frames: window.frames_.filter(since), tasks: window.tasks_.filter(since) };
    }, [tag, from]);
    const trace = JSON.parse((await browser.stopTracing()).toString('utf8'));
    const cpu = mainThreadCpu(trace);
    // The tasks that ran animation-frame callbacks (the page's drawing), CPU split, costliest first.
    const frameTasks = mainThreadTasks(trace).filter((x) => x.frame).sort((a, b) => b.cpu - a.cpu);
    const frames = r.frames.map((f) => attribute(f, cdn.url));
    const ours = frames.filter((f) => f.ours);
    return {
      runsIn: r.runsIn, steps: r.steps, seconds: r.seconds, loadAverage, errors,
      longTasks: r.tasks.length, longest: Math.max(0, ...r.tasks.map((x) => x.duration)), blocked: blockedTime(r.tasks),
      frames: frames.length, headlabFrames: ours.length, worstHeadlabFrame: Math.max(0, ...ours.map((f) => f.duration)),
      forced: frames.reduce((a, f) => a + f.forced, 0), forcedMax: Math.max(0, ...frames.map((f) => f.forced)),
      cpuTotal: cpu.reduce((a, x) => a + x, 0), cpuLongest: cpu[0] ?? 0, cpuOver50: cpu.filter((x) => x > 50).length,
      frameTasks: frameTasks.length, frameCpu: frameTasks.reduce((a, x) => a + x.cpu, 0),
      frameCpuP99: frameTasks[Math.floor(frameTasks.length * 0.01)]?.cpu ?? 0, frameCpuOver16: frameTasks.filter((x) => x.cpu > 16).length,
      frameSplit: ['script', 'styleAndLayout', 'paint'].map((k) => frameTasks.reduce((a, x) => a + x[k], 0)),
      raw: { frames, tasks: r.tasks, frameTasks },
    };
  } finally {
    await page.close();
  }
}

const ms = (x) => `${Math.round(x)}`;

/** The Markdown table of the runs (one row per element, load and build, each round's numbers side by side). */
function table(runs, o) {
  const lines = [
    `Builds: before = ${runs.builds.before ?? '—'}, after = ${runs.builds.after}. ${o.seconds} s of training per run, ${o.rounds} round(s), builds alternating; ` +
    `${os.availableParallelism()} cores (${os.cpus()[0]?.model.trim()}); "one" = one \`node -e "for(;;){}"\` process beside the browser, "busy" = two. ` +
    'Times in ms; with more than one round, each cell lists the rounds. Long tasks, frames and blocked time are wall time (Long Tasks and ' +
    'Long Animation Frames); the CPU columns are the main thread\'s thread time from a Chromium trace over the same stretch.',
    '',
    '| element | machine | build | steps trained | long tasks | longest task | blocked time | long frames (HeadLab\'s) | worst HeadLab frame | forced layout in HeadLab scripts | ' +
    'main-thread CPU | longest task\'s CPU | tasks over 50 ms of CPU | frame tasks | their CPU: script + style and layout + paint | ' +
    'frame tasks\' CPU, 99th percentile | frame tasks over 16 ms of CPU | load average |',
    '| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  ];
  const groups = new Map();
  for (const r of runs.list) {
    const key = `${r.element}|${r.load}|${r.build}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(r);
  }
  for (const [key, rs] of groups) {
    const [element, load, build] = key.split('|');
    const col = (f) => rs.map(f).join(' / ');
    lines.push(`| ${element} | ${load} | ${build} | ${col((r) => r.steps)} | ${col((r) => r.longTasks)} | ${col((r) => ms(r.longest))} | ${col((r) => ms(r.blocked))} | ` +
      `${col((r) => `${r.frames} (${r.headlabFrames})`)} | ${col((r) => ms(r.worstHeadlabFrame))} | ${col((r) => ms(r.forced))} | ` +
      `${col((r) => ms(r.cpuTotal))} | ${col((r) => ms(r.cpuLongest))} | ${col((r) => r.cpuOver50)} | ` +
      `${col((r) => r.frameTasks ?? '—')} | ${col((r) => (r.frameSplit ? r.frameSplit.map(ms).join(' + ') : '—'))} | ` +
      `${col((r) => (r.frameCpuP99 === undefined ? '—' : r.frameCpuP99.toFixed(1)))} | ${col((r) => r.frameCpuOver16 ?? '—')} | ${col((r) => r.loadAverage.map((x) => x.toFixed(1)).join('–'))} |`);
  }
  return `${lines.join('\n')}\n`;
}

/** Replaces the block after docs/performance.md's <!-- long-frames: … --> line with the table, quoted from OUT.md. */
function writeDoc(md, out) {
  const file = path.join(repo, 'docs/performance.md');
  const text = readFileSync(file, 'utf8');
  const re = /(<!-- long-frames: [^\n]*-->\n)<!-- bench-quote: [^\n]*-->\n[\s\S]*?<!-- \/bench-quote -->\n/;
  if (!re.test(text)) throw new Error('docs/performance.md has no <!-- long-frames: … --> line followed by a bench-quote block');
  const rows = md.split('\n').filter((l) => l.startsWith('|')).join('\n');
  writeFileSync(file, text.replace(re, (_, head) => `${head}<!-- bench-quote: ${out}.md -->\n${rows}\n<!-- /bench-quote -->\n`));
}

async function main() {
  if (process.argv[2] === '--render') {
    // The Markdown again from a run's JSON (after a change to the table's layout).
    const runs = JSON.parse(readFileSync(path.resolve(process.argv[3]), 'utf8'));
    process.stdout.write(table(runs, runs.options));
    return;
  }
  const o = options(process.argv.slice(2));
  const builds = { after: o.after, ...(o.before ? { before: o.before } : {}) };
  const cdns = {};
  for (const [k, dir] of Object.entries(builds)) cdns[k] = await serve({ port: 0, root: path.resolve(repo, dir), cors: true });
  const pages = new Map();
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'close' });
    res.end(pages.get(new URL(req.url, 'http://x').pathname) ?? '');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const course = { pages, url: `http://localhost:${server.address().port}/` };
  const browser = await launch({ windowErrors: false });
  const names = Object.fromEntries(Object.entries(builds).map(([k, d]) => [k, label(d)]));
  const runs = { builds: names, list: [], started: new Date().toISOString() };
  try {
    for (let round = 0; round < o.rounds; round++) {
      for (const load of o.loads) {
        const stop = burn(BURNERS[load]);
        try {
          for (const element of o.elements) {
            const order = Object.keys(builds);
            if (round % 2) order.reverse();
            for (const build of order) {
              process.stderr.write(`round ${round + 1}, ${element}, ${load}, ${build}… `);
              const r = await measure(browser, course, cdns[build], element, o.seconds);
              process.stderr.write(`${r.steps} steps, ${r.longTasks} long tasks, longest ${ms(r.longest)} ms, blocked ${ms(r.blocked)} ms\n`);
              runs.list.push({ round, element, load, build, ...r });
              writeFileSync(path.resolve(repo, `${o.out}.json`), `${JSON.stringify({ ...runs, options: o, complete: false }, null, 1)}\n`);
            }
          }
        } finally {
          stop();
        }
      }
    }
  } finally {
    await browser.close();
    for (const c of Object.values(cdns)) await c.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  writeFileSync(path.resolve(repo, `${o.out}.json`), `${JSON.stringify({ ...runs, options: o, complete: true, ended: new Date().toISOString() }, null, 1)}\n`);
  const md = table(runs, o);
  writeFileSync(path.resolve(repo, `${o.out}.md`), `# Long tasks while training (bench/browser/long-frames.mjs, ${runs.started})\n\n${md}`);
  process.stdout.write(md);
  if (o.doc) writeDoc(md, o.out);
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
