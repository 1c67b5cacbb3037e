// What the benchmark's runners share (bench/run.mjs, bench/pretrained/run.mjs and the engine scripts they
// start): their command-line options, the Chromium they launch, and one measurement in a Node process of
// its own, which prints one line "RESULT {json}" on stdout.
import { spawn } from 'node:child_process';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

/** `--name value`, `--name=value` and bare `--flag` (true) options; anything else is an Error. */
export function parseArgs(argv) {
  const a = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new Error(`unexpected argument "${arg}" (see bench/README.md)`);
    const [key, inline] = arg.slice(2).split('=', 2);
    if (inline !== undefined) a[key] = inline;
    else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) a[key] = argv[++i];
    else a[key] = true;
  }
  return a;
}

/** What an engine script prints for its runner: one line, "RESULT " and the JSON. */
export function printResult(result) {
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
}

/**
 * Runs `script` in a Node process of its own and resolves to the JSON of its RESULT line, or to
 * { status: 'fails', error } when it prints none: killed at `timeoutMs`, or exited (its last lines of stderr).
 */
export function runChild(script, args, { timeoutMs, maxOldSpaceMb, cwd }) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [`--max-old-space-size=${maxOldSpaceMb}`, script, ...args],
      { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err = (err + d).slice(-4000); });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (line) return resolve(JSON.parse(line.slice(7)));
      const why = signal === 'SIGKILL' ? `killed after ${(timeoutMs / 1000).toFixed(0)} s (timeout)`
        : `exited with ${signal ?? code}: ${err.trim().split('\n').filter(Boolean).slice(-3).join(' | ').slice(0, 300)}`;
      resolve({ status: 'fails', error: why });
    });
  });
}
