// What tests/browser/bundlers.test.mjs and recipes.test.mjs share: the package packed as a user
// would get it (`npm pack`, prepack included) and installed offline into a new app.
import { execFile } from 'node:child_process';
import { copyFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { REPO } from './helpers.mjs';

const ENV = { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false', npm_config_update_notifier: 'false' };

/** Runs `npm …args` in `cwd`; resolves with what it printed (stdout, then stderr), rejects with it on failure. */
export function npm(args, cwd, env = {}) {
  return new Promise((resolve, reject) => {
    execFile('npm', args, { cwd, encoding: 'utf8', env: { ...ENV, ...env }, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`npm ${args.join(' ')} (in ${cwd}) failed:\n${stdout}${stderr}`, { cause: err }));
      else resolve(stdout + stderr);
    });
  });
}

/**
 * `npm pack` of the repository into `dir`; resolves with the tarball's path. Under scripts/test.mjs,
 * which packs once before the browser files run two at a time, the tarball named by
 * HEADLAB_TEST_TARBALL is copied instead: the same bytes, and no pack swapping README.md while
 * another file reads it.
 */
export async function pack(dir) {
  const packed = process.env.HEADLAB_TEST_TARBALL;
  if (packed) {
    const copy = path.join(dir, path.basename(packed));
    copyFileSync(packed, copy);
    return copy;
  }
  await npm(['pack', '--pack-destination', dir], REPO);
  return path.join(dir, readdirSync(dir).find((f) => f.endsWith('.tgz')));
}

/** Installs the tarball `tgz` (and the app's other dependencies, from npm's cache) into `app`, offline. */
export function installTarball(app, tgz) {
  return npm(['install', '--offline', '--no-package-lock', tgz], app);
}

/**
 * Runs at most `n` of the functions given to it at once (the machine has few cores; builds
 * started together only slow each other down).
 * @returns {(job: () => Promise<any>) => Promise<any>}
 */
export function limit(n) {
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

/**
 * Builds the Vite app in `app` (index.html at its root) into `app/out` with the vite.config.js of
 * docs/install.md (Workers as ES modules: the library loads its glue with import()); resolves to the
 * warnings and errors Vite printed.
 */
export async function viteBuild(app) {
  const { build } = await import('vite');
  const warnings = [];
  await build({
    root: app, logLevel: 'warn', configFile: false,
    worker: { format: 'es' },
    optimizeDeps: { exclude: ['headlab'] },
    build: { outDir: path.join(app, 'out'), emptyOutDir: true },
    customLogger: {
      info() {}, warn: (m) => warnings.push(m), warnOnce: (m) => warnings.push(m), error: (m) => warnings.push(m),
      clearScreen() {}, hasErrorLogged: () => false, hasWarned: false,
    },
  });
  return warnings;
}
