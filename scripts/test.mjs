// Runs every test stage and prints one summary line with the counts:
//   1. ESLint over the JavaScript (eslint.config.js): each file linted counts as one passed
//      when it is clean, one failed when it has a problem (each problem is printed)
//   2. the doctest suite, native
//   3. the same doctest suite compiled to wasm, under Node
//   4. the JavaScript API tests under Node (node:test)
//   5. the browser tests in headless Chromium (node:test + playwright-core), with the
//      page checks shared by every engine (tests/engines/checks.mjs)
//   6. the shared page checks in Firefox ESR, headless (puppeteer-core, WebDriver BiDi)
//   7. the shared page checks in WebKitGTK's MiniBrowser under Xvfb (selenium-webdriver)
//   8. the doctest suite again under AddressSanitizer + UndefinedBehaviorSanitizer (less two long runs)
//   9. libFuzzer on the two model-file parsers for a bounded time (FUZZ_SECONDS in all, default 60)
// Assumes scripts/setup.sh test and scripts/build.sh test have run (npm test does both).
// `node scripts/test.mjs js browser` runs only the named stages.
// Stages that each keep about one core busy share the machine's two (GROUPS, CORES): lint, native,
// wasm and the js files, each taking a core as one is free; Firefox, WebKit, sanitize and the fuzzer
// (whose time is fixed) the same way; a group's output is printed as each of its stages ends. The
// browser files run two at a time, longest first (browserStage); the js and browser files after one
// `npm pack` that both share (packOnce).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'headlab-test-'));
const failures = [];

/**
 * Runs `cmd args` in the repository; resolves with { status, out } (stdout, then stderr). `live`:
 * the output is also written as it comes (a stage that runs alone).
 */
function run(cmd, args, { live = false, ...options } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: repo, ...options });
    let out = '';
    const take = (chunk) => {
      out += chunk;
      if (live) process.stdout.write(chunk);
    };
    child.stdout.setEncoding('utf8').on('data', take);
    child.stderr.setEncoding('utf8').on('data', take);
    child.on('error', (e) => resolve({ status: 1, out: `${out}${cmd}: ${e.message}\n` }));
    child.on('close', (code) => resolve({ status: code ?? 1, out }));
  });
}

async function doctestStage(io, cmd, args) {
  const r = await run(cmd, [...args, '--no-colors=true', '--no-version=true']);
  io.log(r.out);
  const m = /test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed/.exec(r.out);
  if (!m) return { passed: 0, failed: 1, status: r.status || 1 };
  return { passed: Number(m[2]), failed: Number(m[3]) + (r.status && Number(m[3]) === 0 ? 1 : 0), status: r.status };
}

// node --test over `files` (a folder or test files), `concurrency` files at once.
// `live` (default: the stage's): print the output as it comes; otherwise when the files are done.
async function nodeTestStage(io, files, { concurrency = 1, label = path.basename(String(files)), live = io.live } = {}) {
  const tap = path.join(tmp, `${label}.tap`);
  const r = await run(process.execPath, ['--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', '--test-reporter-destination=stdout',
    '--test-reporter=tap', `--test-reporter-destination=${tap}`, ...[files].flat()], { live });
  if (!live) io.log(r.out);
  let text = '';
  try { text = readFileSync(tap, 'utf8'); } catch { /* reported below as a failure */ }
  const count = (key) => Number((new RegExp(`^# ${key} (\\d+)$`, 'm').exec(text) ?? [0, 0])[1]);
  const passed = count('pass'), failed = count('fail') + count('cancelled');
  const status = r.status;
  failures.push(...failedBlocks(text).map((block) => `[${label}] ${block}`));
  return { passed, failed: failed + (status !== 0 && failed === 0 ? 1 : 0), status };
}

// The package packed once (`npm pack`, prepack included) for every js and browser file that installs
// it (tests/fixtures/pack.mjs copies HEADLAB_TEST_TARBALL): a pack swaps README.md and rewrites
// components/, which the files running beside it read.
let packed = null;
function packOnce() {
  packed ??= (async () => {
    const packDir = path.join(tmp, 'pack');
    mkdirSync(packDir);
    const r = await run('npm', ['pack', '--pack-destination', packDir]);
    if (r.status !== 0) return `npm pack failed:\n${r.out}`;
    process.env.HEADLAB_TEST_TARBALL = path.join(packDir, readdirSync(packDir).find((f) => f.endsWith('.tgz')));
    return null;
  })();
  return packed;
}

// The js files on the group's two cores (io.slot): the files that build the package's elements into
// components/ or its types into web/lib/ts5.6, or pack it (doc-figures' `npm pack --dry-run` swaps
// README.md), or read what those rewrite, one after another, as one job; the rest each a job of its
// own, beside that chain and beside each other: a core that the native or wasm stage, or the chain,
// leaves takes the next file. All after lint: the pack rewrites components/, which the imports
// ESLint resolves may reach.
// Most files are one core's work (a wasm module, tsc).
const JS_PACKAGE = ['asset-urls', 'custom-elements', 'doc-figures', 'framework-types', 'package', 'readme', 'server-import', 'types']
  .map((f) => `tests/js/${f}.test.mjs`);
async function jsStage(io) {
  await io.after('lint');
  const error = await packOnce();
  if (error) {
    io.log(error);
    return { passed: 0, failed: 1, status: 1 };
  }
  const rest = readdirSync(path.join(repo, 'tests/js')).filter((f) => f.endsWith('.test.mjs')).sort()
    .map((f) => `tests/js/${f}`).filter((f) => !JS_PACKAGE.includes(f));
  const total = { passed: 0, failed: 0, status: 0 };
  const add = (r) => {
    total.passed += r.passed;
    total.failed += r.failed;
    total.status ||= r.status;
  };
  await Promise.all([
    io.slot(() => nodeTestStage(io, JS_PACKAGE, { label: 'js-package', live: false })).then(add),
    ...rest.map((file) => io.slot(() => nodeTestStage(io, file, { label: `js-${path.basename(file, '.test.mjs')}`, live: false })).then(add)),
  ]);
  return total;
}

// `files` in `lanes` lanes, each file a `node --test` of its own, in the order given (one `node --test`
// over several files runs them in name order, whatever order they are given in): a lane takes the next
// file when its last one ends. Each file's output is printed when it ends, with its time.
async function laneStage(io, files, { lanes, label }) {
  const queue = [...files];
  const t0 = Date.now();
  const total = { passed: 0, failed: 0, status: 0 };
  await Promise.all(Array.from({ length: lanes }, async () => {
    for (let file = queue.shift(); file; file = queue.shift()) {
      const start = Date.now();
      const r = await nodeTestStage(io, file, { label: `${label}-${path.basename(file, '.test.mjs')}`, live: false });
      io.log(`${label}: ${file} took ${((Date.now() - start) / 1000).toFixed(1)} s (${((start - t0) / 1000).toFixed(0)} to ${((Date.now() - t0) / 1000).toFixed(0)} s)\n`);
      total.passed += r.passed;
      total.failed += r.failed;
      total.status ||= r.status;
    }
  }));
  return total;
}

// The browser files two at a time: most of a file's time is a page loading, a Worker training or a
// bundler writing, so one file rarely keeps both cores busy, and every file serves on its own port.
// The longest first (BROWSER_LONG, the files over 15 s by the stage's per-file times, longest first),
// then the rest (each under 15 s) by name: started last, a long file runs on alone at the end with the
// other lane idle.
// The files that measure the main thread's tasks while something trains run afterwards, alone: their
// own busy process is the load they are written for.
// package-components first: its npm installs and webpack build took from 40 to 306 s.
const BROWSER_LONG = ['package-components', 'recipes', 'site', 'a11y', 'engine-checks', 'language-model', 'embed-fit', 'trainer',
  'english', 'model-explorer', 'bundlers', 'i18n', 'reliability', 'choosing-h', 'i18n-lm', 'embedding', 'first-picture',
  'worked-example', 'findings-panel', 'explorer-families'].map((f) => `tests/browser/${f}.test.mjs`);
const ALONE = ['tests/browser/long-frames.test.mjs', 'tests/browser/cross-origin-workers.test.mjs'];
async function browserStage(io) {
  const files = readdirSync(path.join(repo, 'tests/browser')).filter((f) => f.endsWith('.test.mjs')).sort()
    .map((f) => `tests/browser/${f}`).filter((f) => !ALONE.includes(f));
  const error = await packOnce();
  if (error) {
    io.log(error);
    return { passed: 0, failed: 1, status: 1 };
  }
  const ordered = [...BROWSER_LONG.filter((f) => files.includes(f)), ...files.filter((f) => !BROWSER_LONG.includes(f))];
  const both = await laneStage(io, ordered, { lanes: 2, label: 'browser' });
  const alone = await nodeTestStage(io, ALONE, { label: 'browser-alone' });
  return { passed: both.passed + alone.passed, failed: both.failed + alone.failed, status: both.status || alone.status };
}

// The "not ok" entries of a TAP report, each with its YAML block (error, location), trimmed:
// printed again after the summary so the tail of a long log says what failed and why.
function failedBlocks(text) {
  const lines = text.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*not ok \d+/.test(lines[i])) continue;
    const block = [lines[i].trim()];
    for (let j = i + 1; j < lines.length && !/^\s*(ok|not ok) \d+/.test(lines[j]) && block.length < 25; j++) block.push(lines[j]);
    blocks.push(block.join('\n'));
  }
  return blocks;
}

// ESLint over the repository, one count per file: passed when clean, failed when it has a problem.
async function lintStage(io) {
  const report = path.join(tmp, 'eslint.json');
  const r = await run(process.execPath, [path.join(repo, 'node_modules/eslint/bin/eslint.js'), '--format', 'json', '--output-file', report, '.']);
  let files;
  try { files = JSON.parse(readFileSync(report, 'utf8')); } catch {
    io.log(r.out);
    return { passed: 0, failed: 1, status: r.status || 1 };
  }
  let failed = 0;
  for (const f of files) {
    if (f.errorCount + f.warningCount === 0) continue;
    failed++;
    for (const m of f.messages) io.log(`${path.relative(repo, f.filePath)}:${m.line}:${m.column}  ${m.message}  (${m.ruleId ?? 'eslint'})\n`);
  }
  io.log(`eslint: ${files.length} files, ${files.length - failed} clean\n`);
  return { passed: files.length - failed, failed, status: r.status };
}

// Each file parser (the trainer's, the language model's, the safetensors reader of the
// pretrained checkpoints) for a third of FUZZ_SECONDS.
async function fuzzStage(io) {
  const targets = [['headlab_fuzz_load', 'load_trainer'], ['headlab_fuzz_load_lm', 'load_lm'],
    ['headlab_fuzz_safetensors', 'safetensors']];
  const seconds = Math.max(1, Math.round(Number(process.env.FUZZ_SECONDS ?? 60) / targets.length));
  let passed = 0, failed = 0, status = 0;
  for (const [binary, seeds] of targets) {
    const corpus = path.join(tmp, `corpus-${seeds}`);
    await run('cp', ['-r', path.join(repo, 'tests/fuzz/corpus', seeds), corpus]);
    const r = await run(path.join(repo, 'build/fuzz', binary),
      [`-max_total_time=${seconds}`, '-rss_limit_mb=2048', '-timeout=10', `-artifact_prefix=${tmp}/${seeds}-`, corpus]);
    const done = /Done (\d+) runs in (\d+) second/.exec(r.out);
    io.log(`${r.status === 0 && done ? `fuzz ${seeds}: ${done[1]} runs in ${done[2]} s, no crash` : r.out.split('\n').slice(-40).join('\n')}\n`);
    if (r.status === 0) passed++;
    else { failed++; status = r.status; }
  }
  return { passed, failed, status };
}

const stages = {
  lint: lintStage,
  native: (io) => doctestStage(io, path.join(repo, 'build/native/headlab_tests'), []),
  wasm: (io) => doctestStage(io, process.execPath, ['--no-experimental-fetch', path.join(repo, 'build/wasm/headlab_tests.js')]),
  js: jsStage,
  browser: browserStage,
  firefox: (io) => nodeTestStage(io, 'tests/engines/firefox.test.mjs'),
  webkit: (io) => nodeTestStage(io, 'tests/engines/webkit.test.mjs'),
  // Without the four long training runs (300 steps on 2 threads; the d_model 16 heads trial; the
  // two- and three-relations convergence runs, 5 seeds each): the native and wasm stages run them,
  // and under the sanitizers they took three quarters of the stage's time (162 of 218 s) for code
  // the short cases already cover (one threaded step, one trial, the trainer's seeded loss curves).
  sanitize: (io) => doctestStage(io, path.join(repo, 'build/sanitize/headlab_tests'),
    ['--test-case-exclude=lm parallel: 300 induction steps*,heads trial: on lookup at d_model 16*,two-relations*,three-relations*']),
  fuzz: fuzzStage,
};
// The stages run group after group; a group's stages share the machine's two cores (CORES): each
// stage is one core's job (lint, native, wasm; firefox, webkit, sanitize, fuzz), taken in this order
// as a core is free, except js, whose files are jobs of their own (jsStage); so the js files start
// as soon as lint and wasm are done, beside the longer native stage, instead of after it. browser
// runs its own lanes (browserStage).
const GROUPS = [['lint', 'native', 'wasm', 'js'], ['browser'], ['firefox', 'webkit', 'sanitize', 'fuzz']];
const CORES = 2;
const OWN_JOBS = ['js', 'browser'];

/** At most `n` of the jobs given to it running at once, started in the order given. */
function slots(n) {
  let running = 0;
  const waiting = [];
  const next = () => {
    if (running >= n || waiting.length === 0) return;
    running++;
    const { job, resolve, reject } = waiting.shift();
    job().then(resolve, reject).finally(() => { running--; next(); });
  };
  return (job) => new Promise((resolve, reject) => { waiting.push({ job, resolve, reject }); next(); });
}

const wanted = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(stages);
for (const name of wanted) {
  if (!stages[name]) {
    console.error(`test: unknown stage "${name}"; stages are ${Object.keys(stages).join(', ')}`);
    process.exit(2);
  }
}
let passed = 0, failed = 0;
const lines = new Map();
for (const group of GROUPS) {
  const names = group.filter((name) => wanted.includes(name));
  const slot = slots(CORES);
  const done = {};
  const ended = Object.fromEntries(names.map((name) => [name, new Promise((resolve) => { done[name] = resolve; })]));
  await Promise.all(names.map(async (name) => {
    const live = names.length === 1;
    let buffer = '';
    let t0 = null;
    const io = {
      live, log: (text) => (live ? process.stdout.write(text) : (buffer += text)),
      // A job on one of the group's cores (the stage's time runs from its first).
      slot: (job) => slot(() => {
        t0 ??= Date.now();
        return job();
      }),
      // Resolves when stage `other` of the group has ended (at once when it is not run).
      after: (other) => ended[other] ?? Promise.resolve(),
    };
    if (live) console.log(`\n=== ${name} ===`);
    const start = Date.now();
    let r;
    try {
      r = await (OWN_JOBS.includes(name) ? stages[name](io) : io.slot(() => stages[name](io)));
    } finally {
      done[name]();
    }
    if (!live) process.stdout.write(`\n=== ${name} ===\n${buffer}`);
    passed += r.passed;
    failed += r.failed;
    lines.set(name, `  ${name.padEnd(8)} ${String(r.passed).padStart(4)} passed ${String(r.failed).padStart(3)} failed  (${((Date.now() - (t0 ?? start)) / 1000).toFixed(1)} s)`);
  }));
}
rmSync(tmp, { recursive: true, force: true });
if (failures.length) console.log(`\n=== failed tests ===\n${failures.join('\n')}`);
console.log('\n' + wanted.map((name) => lines.get(name)).join('\n'));
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
