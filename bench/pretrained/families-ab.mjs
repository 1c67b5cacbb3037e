// A/B of module builds: alternates sets (dirs of headlab_pretrained* files) in the worktree, runs
// HeadLab (and optionally ORT) in Chromium or Node, prints medians side by side.
// (each set a folder holding headlab_pretrained* files, copied into web/lib/gen before its run: the
// last set run stays there). Used for bench/results/families-short-cells-2026-12-07.md.
//   node bench/pretrained/families-ab.mjs --env browser --model smollm2 --threads 2 --seqs 64,256 --reps 3
//     --rounds 2 --sets old=/tmp/gen-old,new=/tmp/gen-new [--ort]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
const WT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { parseArgs, runChild } = await import(WT + '/bench/lib/child.mjs');
const { runBrowser } = await import(WT + '/bench/pretrained/run.mjs');
const a = parseArgs(process.argv.slice(2));
const env = a.env ?? 'browser', model = a.model ?? 'smollm2', threads = Number(a.threads ?? 2);
const seqs = String(a.seqs ?? '64').split(',').map(Number), reps = Number(a.reps ?? 3), rounds = Number(a.rounds ?? 2);
const sets = String(a.sets).split(',').map((s) => s.split('='));
if (a.ort) sets.push(['ort', null]);
const folder = `build/bench-${model}`;
let servers = null;
if (env === 'browser') {
  const { serve } = await import(WT + '/tools/serve.mjs');
  servers = { plain: await serve({ port: 0, root: WT, isolate: false }), isolated: await serve({ port: 0, root: WT, isolate: true }) };
}
const times = {};
for (let round = 0; round < rounds; round++) {
  for (const [name, dir] of sets) {
    if (dir) for (const f of fs.readdirSync(dir)) fs.copyFileSync(path.join(dir, f), path.join(WT, 'web/lib/gen', f));
    const engine = dir ? 'headlab' : 'ort';
    let r;
    if (env === 'browser') {
      const url = (threads > 1 ? servers.isolated : servers.plain).url;
      r = await runBrowser(url, { where: 'worker', engine, threads, folder, seqs, reps, gen: null }, 20 * 60000, 'benchFamily');
    } else {
      const args = ['--family', '--engine', engine, '--threads', String(threads), '--folder', WT + '/' + folder,
        '--seqs', seqs.join(','), '--reps', String(reps)];
      r = await runChild(WT + '/bench/pretrained/engine.mjs', args, { timeoutMs: 20 * 60000, maxOldSpaceMb: 8192, cwd: WT });
    }
    if (r.status !== 'ok') { console.log(name, 'FAILS', r.error); continue; }
    for (const t of r.runs) (times[`${name} T=${t.T}`] ??= []).push(...t.times);
    console.log(`round ${round} ${name}: ` + r.runs.map((t) => `T=${t.T} ${t.times.map((x) => x.toFixed(0)).join('/')} (pytorch ${r.checkPytorch?.relDiff?.toExponential(1)})`).join('; '));
  }
}
const med = (xs) => {
  const s = [...xs].sort((p, q) => p - q), n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};
for (const [k, v] of Object.entries(times)) console.log(`${env} ${model} ${threads}t ${k}: median ${med(v).toFixed(0)} ms, min ${Math.min(...v).toFixed(0)} ms (n ${v.length})`);
console.log(JSON.stringify(times));
process.exit(0);
