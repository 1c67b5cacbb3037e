// The package's README: `npm pack` ships docs/package-readme.md (written for someone who installed
// the package) as README.md, while the repository's README.md stays the contributors' one. npm
// always packs the README.md at the root, so scripts/prepack.mjs swaps the package's in and
// scripts/postpack.mjs swaps the repository's back (build/readme-swap/ holds it meanwhile). Packs
// run at once (the test files do) take turns through a lock; a swap that a killed `npm pack` left
// behind is undone by the next pack.
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const README = path.join(repo, 'README.md');
const SWAP = path.join(repo, 'build/readme-swap');
const LOCK = path.join(SWAP, 'lock');
const SAVED = path.join(SWAP, 'README.md');
const STALE_MS = 120_000;  // a pack takes seconds: a lock this old was left by a killed one

/** The repository's web address from package.json `repository` (or null when it names none). */
export function repositoryUrl(pkg) {
  let url = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
  if (!url) return null;
  url = url.replace(/^git\+/, '').replace(/\.git$/, '').replace(/^github:/, '');
  if (/^[\w.-]+\/[\w.-]+$/.test(url)) url = `https://github.com/${url}`;
  return url.replace(/^git:\/\//, 'https://').replace(/\/$/, '');
}

/**
 * docs/package-readme.md as the tarball's README.md: links to files the tarball does not hold
 * (docs/…) point to the repository (package.json `repository`), or, while it names none, are
 * written as the file's path in the repository; links to files it holds stay relative.
 */
export function packageReadme({ source = readFileSync(path.join(repo, 'docs/package-readme.md'), 'utf8'),
  pkg = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')) } = {}) {
  const base = repositoryUrl(pkg);
  return source.replace(/\[([^\]]+)\]\((?!https?:|#|mailto:)([^)\s]+)\)/g, (link, text, target) => {
    const file = target.replace(/#.*$/, '');
    if (file && !file.endsWith('/') && existsSync(path.join(repo, file)) && shipped(pkg, file)) return link;
    return base ? `[${text}](${base}/blob/HEAD/${target})` : `${text} (\`${target}\` in the repository)`;
  });
}

/** Whether the tarball holds `file` (a path package.json `files` names, or one npm always packs). */
function shipped(pkg, file) {
  return /^(README|LICEN[CS]E)(\.md)?$/i.test(file) || (pkg.files ?? []).includes(file);
}

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Puts back a README.md that a killed pack left swapped, once its lock is stale. */
function recover() {
  let age;
  try { age = Date.now() - statSync(LOCK).mtimeMs; } catch { age = Infinity; }
  if (age < STALE_MS) return false;
  swapOut();
  return true;
}

/** prepack: saves the repository's README.md and writes the package's in its place (waits for another pack's turn). */
export function swapIn(readme = packageReadme()) {
  mkdirSync(SWAP, { recursive: true });
  const deadline = Date.now() + STALE_MS + 10_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      if (recover()) continue;
      if (Date.now() > deadline) throw new Error(`prepack: another npm pack holds ${path.relative(repo, LOCK)}`, { cause: e });
      sleep(100);
    }
  }
  writeFileSync(SAVED, readFileSync(README));
  writeFileSync(README, readme);
}

/** postpack: puts the repository's README.md back and lets the next pack in. */
export function swapOut() {
  if (existsSync(SAVED)) {
    writeFileSync(README, readFileSync(SAVED));
    rmSync(SAVED);
  }
  rmSync(LOCK, { recursive: true, force: true });
}
