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
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'headlab-test-'));
const failures = [];

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { cwd: repo, encoding: 'utf8', maxBuffer: 64 * 2 ** 20, ...options });
  if (r.error) return { status: 1, out: `${cmd}: ${r.error.message}\n` };
  return { status: r.status ?? 1, out: (r.stdout ?? '') + (r.stderr ?? '') };
}

function doctestStage(cmd, args) {
  const r = run(cmd, [...args, '--no-colors=true', '--no-version=true']);
  process.stdout.write(r.out);
  const m = /test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed/.exec(r.out);
  if (!m) return { passed: 0, failed: 1, status: r.status || 1 };
  return { passed: Number(m[2]), failed: Number(m[3]) + (r.status && Number(m[3]) === 0 ? 1 : 0), status: r.status };
}

function nodeTestStage(dir) {
  const tap = path.join(tmp, `${path.basename(dir)}.tap`);
  const r = spawnSync(process.execPath, ['--test', '--test-reporter=spec', '--test-reporter-destination=stdout',
    '--test-reporter=tap', `--test-reporter-destination=${tap}`, dir], { cwd: repo, stdio: 'inherit' });
  let text = '';
  try { text = readFileSync(tap, 'utf8'); } catch { /* reported below as a failure */ }
  const count = (key) => Number((new RegExp(`^# ${key} (\\d+)$`, 'm').exec(text) ?? [0, 0])[1]);
  const passed = count('pass'), failed = count('fail') + count('cancelled');
  const status = r.status ?? 1;
  failures.push(...failedBlocks(text).map((block) => `[${path.basename(dir)}] ${block}`));
  return { passed, failed: failed + (status !== 0 && failed === 0 ? 1 : 0), status };
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
function lintStage() {
  const report = path.join(tmp, 'eslint.json');
  const r = run(process.execPath, [path.join(repo, 'node_modules/eslint/bin/eslint.js'), '--format', 'json', '--output-file', report, '.']);
  let files;
  try { files = JSON.parse(readFileSync(report, 'utf8')); } catch {
    process.stdout.write(r.out);
    return { passed: 0, failed: 1, status: r.status || 1 };
  }
  let failed = 0;
  for (const f of files) {
    if (f.errorCount + f.warningCount === 0) continue;
    failed++;
    for (const m of f.messages) console.log(`${path.relative(repo, f.filePath)}:${m.line}:${m.column}  ${m.message}  (${m.ruleId ?? 'eslint'})`);
  }
  console.log(`eslint: ${files.length} files, ${files.length - failed} clean`);
  return { passed: files.length - failed, failed, status: r.status };
}

// Each file parser (the trainer's, the language model's, the safetensors reader of the
// pretrained checkpoints) for a third of FUZZ_SECONDS.
function fuzzStage() {
  const targets = [['headlab_fuzz_load', 'load_trainer'], ['headlab_fuzz_load_lm', 'load_lm'],
    ['headlab_fuzz_safetensors', 'safetensors']];
  const seconds = Math.max(1, Math.round(Number(process.env.FUZZ_SECONDS ?? 60) / targets.length));
  let passed = 0, failed = 0, status = 0;
  for (const [binary, seeds] of targets) {
    const corpus = path.join(tmp, `corpus-${seeds}`);
    run('cp', ['-r', path.join(repo, 'tests/fuzz/corpus', seeds), corpus]);
    const r = run(path.join(repo, 'build/fuzz', binary),
      [`-max_total_time=${seconds}`, '-rss_limit_mb=2048', '-timeout=10', `-artifact_prefix=${tmp}/${seeds}-`, corpus]);
    const done = /Done (\d+) runs in (\d+) second/.exec(r.out);
    console.log(r.status === 0 && done ? `fuzz ${seeds}: ${done[1]} runs in ${done[2]} s, no crash` : r.out.split('\n').slice(-40).join('\n'));
    if (r.status === 0) passed++;
    else { failed++; status = r.status; }
  }
  return { passed, failed, status };
}

const stages = {
  lint: lintStage,
  native: () => doctestStage(path.join(repo, 'build/native/headlab_tests'), []),
  wasm: () => doctestStage(process.execPath, ['--no-experimental-fetch', path.join(repo, 'build/wasm/headlab_tests.js')]),
  js: () => nodeTestStage('tests/js/'),
  browser: () => nodeTestStage('tests/browser/'),
  firefox: () => nodeTestStage('tests/engines/firefox.test.mjs'),
  webkit: () => nodeTestStage('tests/engines/webkit.test.mjs'),
  // Without the two long training runs (300 steps on 2 threads; the d_model 16 heads trial):
  // the native and wasm stages run them, and under the sanitizers they took half the stage's time
  // for code the short cases already cover (one threaded step, one trial).
  sanitize: () => doctestStage(path.join(repo, 'build/sanitize/headlab_tests'),
    ['--test-case-exclude=lm parallel: 300 induction steps*,heads trial: on lookup at d_model 16*']),
  fuzz: fuzzStage,
};

const wanted = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(stages);
let passed = 0, failed = 0;
const lines = [];
for (const name of wanted) {
  if (!stages[name]) {
    console.error(`test: unknown stage "${name}"; stages are ${Object.keys(stages).join(', ')}`);
    process.exit(2);
  }
  console.log(`\n=== ${name} ===`);
  const t0 = Date.now();
  const r = stages[name]();
  passed += r.passed;
  failed += r.failed;
  lines.push(`  ${name.padEnd(8)} ${String(r.passed).padStart(4)} passed ${String(r.failed).padStart(3)} failed  (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}
rmSync(tmp, { recursive: true, force: true });
if (failures.length) console.log(`\n=== failed tests ===\n${failures.join('\n')}`);
console.log('\n' + lines.join('\n'));
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
