// The size figures in docs/ match the build, and the benchmark tables quote bench/results/.
// `node scripts/doc-figures.mjs --check` is the check; the stale copies below show that it catches what it
// should (a size off by more than 2 % or 1 KiB, a file count off by one, a number no result file holds) and
// lets a rebuild's small drift pass. Needs the build (web/lib/gen/, dist/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const script = path.join(repo, 'scripts/doc-figures.mjs');
const check = (docs) =>
  spawnSync(process.execPath, [script, '--check', ...(docs ? ['--docs', docs] : [])], { cwd: repo, encoding: 'utf8' });

/** Runs the check on a copy of docs/ in which `file` had `edit` applied. */
function checkEdited(file, edit) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-docs-'));
  try {
    cpSync(path.join(repo, 'docs'), dir, { recursive: true });
    const text = readFileSync(path.join(dir, file), 'utf8');
    const edited = edit(text);
    assert.notEqual(edited, text, `the edit changed ${file}`);
    writeFileSync(path.join(dir, file), edited);
    return check(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The number stated in `file`'s row that starts with `label`, and the row. */
function stated(file, label) {
  const row = readFileSync(path.join(repo, 'docs', file), 'utf8').split('\n').find((l) => l.startsWith(`| ${label}`));
  assert.ok(row, `docs/${file} has a row for ${label}`);
  const bytes = row.split('|')[2].trim();
  return { row, bytes, n: Number(bytes.replaceAll(',', '')) };
}
const fmt = (n) => Math.round(n).toLocaleString('en-US');

test('every size in docs/ matches the build and every benchmark number is a number of bench/results/', { timeout: 60_000 }, () => {
  const r = check();
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
});

test('a stale size is caught: dist/lib/headlab.js stated 15 % smaller than built', { timeout: 60_000 }, () => {
  const { row, bytes, n } = stated('install.md', '`dist/lib/headlab.js`');
  const r = checkEdited('install.md', (t) => t.replace(row, row.replace(bytes, fmt(n * 0.85))));
  assert.equal(r.status, 1, r.stdout);
  assert.match(r.stderr, /docs\/install\.md dist-lib: "`dist\/lib\/headlab\.js`.*" says [\d,]+, the build has [\d,]+/);
});

test('a size just past the tolerance is caught, one within it passes (rebuild drift)', { timeout: 60_000 }, () => {
  const { row, bytes, n } = stated('performance.md', '`headlab_train`');
  assert.ok(n * 0.02 > 1024, 'the row is large enough for the relative rule to apply');
  const past = checkEdited('performance.md', (t) => t.replace(row, row.replace(bytes, fmt(n * 1.03))));
  assert.equal(past.status, 1, past.stdout);
  assert.match(past.stderr, /docs\/performance\.md shipped: "`headlab_train`" says/);
  const within = checkEdited('performance.md', (t) => t.replace(row, row.replace(bytes, fmt(n * 1.01))));
  assert.equal(within.status, 0, within.stderr);
});

test('the package\'s file count must be exact', { timeout: 60_000 }, () => {
  const { row, bytes, n } = stated('install.md', 'files');
  const r = checkEdited('install.md', (t) => t.replace(row, row.replace(bytes, String(n + 1))));
  assert.equal(r.status, 1, r.stdout);
  assert.match(r.stderr, /"files" says/);
});

test('a benchmark number that no quoted result file holds is caught', { timeout: 60_000 }, () => {
  const r = checkEdited('performance.md', (t) => t.replace('| 6.72 ms (efficiency 0.91) |', '| 6.12 ms (efficiency 0.91) |'));
  assert.equal(r.status, 1, r.stdout);
  assert.match(r.stderr, /6\.12 in .* is not a number of bench\/results\/parallel\.md/);
});
