// The benchmark's standard background load (`--busy`): one process, one thread, doing what an
// ordinary busy machine does beside a learner's tab: CPU work (SHA-256 over 1 MiB) and I/O (that
// MiB written to a temporary file and fsync'ed), in a loop, with no pauses of its own. The fsyncs
// make it block now and then, so it takes a core at irregular times, as a real neighbour does.
//
//   const load = startBusyLoad();  ...  const stats = await load.stop();
//   node bench/lib/busy-load.mjs   (runs the load until killed; prints nothing)
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MiB = 2 ** 20;
const HASHES_PER_WRITE = 32;  // about 15 ms of hashing per 1 MiB write + fsync (a few ms to tens of ms)

/** The load itself: runs until the process is ended (SIGTERM), then removes its file. */
function runLoad() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'headlab-busy-'));
  const file = path.join(dir, 'load.bin');
  const fd = fs.openSync(file, 'w');
  const end = () => {
    fs.closeSync(fd);
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  };
  process.on('SIGTERM', end);
  process.on('SIGINT', end);
  const block = crypto.randomBytes(MiB);
  let rounds = 0;
  // setImmediate between rounds: the signal handlers get to run.
  const round = () => {
    for (let i = 0; i < HASHES_PER_WRITE; i++) crypto.createHash('sha256').update(block).digest().copy(block, i * 32);
    fs.writeSync(fd, block, 0, MiB, (rounds++ % 64) * MiB);  // a 64 MiB file, rewritten in place
    fs.fsyncSync(fd);
    setImmediate(round);
  };
  round();
}

/** CPU seconds (user + system) the process `pid` has used so far, from /proc (Linux); null elsewhere. */
function cpuSeconds(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;  // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return null;
  }
}

/**
 * Starts the load in a child process. stop() ends it and resolves to
 * { seconds, cpuSeconds, cores } (cores: the share of one core it used on average; null where /proc is missing).
 */
export function startBusyLoad() {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url)], { stdio: 'ignore' });
  const t0 = Date.now();
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const orphan = () => child.kill('SIGTERM');  // the benchmark failed or was interrupted: end the load too
  const interrupted = () => {
    orphan();
    process.exit(130);
  };
  process.on('exit', orphan);
  process.once('SIGINT', interrupted);
  return {
    pid: child.pid,
    async stop() {
      const cpu = cpuSeconds(child.pid);
      const seconds = (Date.now() - t0) / 1000;
      process.off('exit', orphan);
      process.off('SIGINT', interrupted);
      child.kill('SIGTERM');
      await exited;
      return { seconds, cpuSeconds: cpu, cores: cpu == null ? null : cpu / seconds };
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) runLoad();
