// What tests/browser/bundlers.test.mjs and recipes.test.mjs share: the package packed as a user
// would get it (`npm pack`, prepack included) and installed offline into a new app.
import path from 'node:path';
import { npm, pack } from '../fixtures/pack.mjs';

export { npm, pack };

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
