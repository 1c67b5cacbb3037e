// The real-model part of `npm run bench`: a random model of GPT-2 small's shapes (12 layers,
// 12 heads, d 768, vocabulary 50257), HeadLab (`lab.loadPretrained`, `model.run`) against
// ONNX Runtime Web running PyTorch's ONNX export of the same weights, in Node.
//   node bench/run.mjs --part pretrained [--rounds 2] [--reps 3] [--seqs 64,256] [--out bench/results/pretrained]
//   node bench/pretrained/run.mjs (the same options)
// Makes the model once (build/bench-gpt2/, by make_gpt2_small.py with Debian's python3-torch),
// checks HeadLab's logits against ORT's on the same ids, then times one forward pass per T, each
// engine in a process of its own, alternating (ORT's numThreads is process-wide). See bench/README.md.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const rel = (p) => path.relative(repo, p);
const PYTHON = '/usr/bin/python3';

function parseArgs(argv) {
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

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Makes the model if missing. Returns null when ready, else why it cannot be made. */
function ensureModel(folder) {
  const need = ['config.json', 'model.safetensors', 'tokenizer.json', 'model.onnx', 'check.json'];
  if (need.every((f) => fs.existsSync(path.join(folder, f)))) return null;
  const probe = spawnSync(PYTHON, ['-c', 'import torch, onnx'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    return `${PYTHON} cannot import torch and onnx (apt-get install -y python3-torch python3-onnx): ` +
      'the real-model part needs them once, to write the model and its ONNX export';
  }
  console.error(`bench pretrained: writing the model into ${rel(folder)} (about 1-2 minutes, 1 GB)`);
  const r = spawnSync(PYTHON, [path.join(here, 'make_gpt2_small.py'), folder], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`make_gpt2_small.py failed (exit ${r.status})`);
  return null;
}

function runEngine(args, timeoutMs) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--max-old-space-size=8192', path.join(here, 'engine.mjs'), ...args],
      { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err = (err + d).slice(-4000); });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (line) return resolve(JSON.parse(line.slice(7)));
      resolve({ status: 'fails', error: signal === 'SIGKILL' ? 'killed (timeout)' : `exited with ${signal ?? code}: ${err.trim().split('\n').slice(-3).join(' | ').slice(0, 300)}` });
    });
  });
}

const CONFIGS = [
  { key: 'headlab-1', engine: 'headlab', threads: 1, label: 'HeadLab, 1 thread' },
  { key: 'ort-1', engine: 'ort', threads: 1, label: 'ORT Web, 1 thread' },
  { key: 'ort-2', engine: 'ort', threads: 2, label: 'ORT Web, 2 threads' },
];
const MODES = {
  all: 'logits at every position (ORT\'s graph computes these)',
  last: 'last position\'s logits + top 10 (run\'s default)',
  attention: 'last position + all 144 heads\' attention',
};

const fmt = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);
const mib = (b) => (b ? `${(b / 2 ** 20).toFixed(0)} MiB` : '–');

function render(res) {
  const L = [];
  L.push('# Real-model benchmark: a GPT-2-small-shaped model, HeadLab vs ONNX Runtime Web (Node)', '');
  L.push(`Written by \`node bench/run.mjs --part pretrained\` on ${res.startedAt.slice(0, 16).replace('T', ' ')} UTC` +
    ` (${res.machine.cpuModel}, ${res.machine.cores} cores, Node ${res.machine.node}; ORT Web ${res.versions.ort ?? '?'}; git ${res.gitHead}).`);
  L.push(`Model: random weights, ${res.model.parameters?.toLocaleString('en-US') ?? '?'} parameters, float32 (12 layers, 12 heads, d 768, vocabulary 50257);` +
    ` HeadLab reads \`model.safetensors\`, ORT runs \`model.onnx\` exported by PyTorch from the same weights.`);
  L.push(`Load average (1 min) at the start ${res.machine.loadAvgStart.map((x) => x.toFixed(2)).join(', ')}; at the end ${res.machine.loadAvgEnd?.map((x) => x.toFixed(2)).join(', ') ?? '–'}` +
    ` (2 cores shared with other jobs: absolute times are inflated, compare within this run).`, '');
  L.push('## Correctness (before any timing)', '');
  L.push('| run | vs ORT Web 1 thread (all 64 × 50257 logits): max abs diff | relative to max abs logit | vs PyTorch (last position): max abs diff |');
  L.push('| --- | --- | --- | --- |');
  for (const r of res.runs) {
    L.push(`| ${r.label}, round ${r.round} | ${r.checkRef ? r.checkRef.maxAbsDiff.toExponential(2) : 'reference'} | ${r.checkRef ? r.checkRef.relDiff.toExponential(2) : '–'} | ${r.checkPytorch ? r.checkPytorch.maxAbsDiff.toExponential(2) : '–'} |`);
  }
  L.push('', '## One forward pass (median of every timed run over all rounds; best in brackets)', '');
  L.push('| T | what is computed | HeadLab, 1 thread | ORT Web, 1 thread | ORT Web, 2 threads | ORT 1 t / HeadLab 1 t | ORT 2 t / HeadLab 1 t |');
  L.push('| --- | --- | --- | --- | --- | --- | --- |');
  for (const T of res.options.seqs) {
    for (const mode of Object.keys(MODES)) {
      const h = res.summary[`headlab-1|${T}|${mode}`];
      if (!h) continue;
      const o1 = res.summary[`ort-1|${T}|all`], o2 = res.summary[`ort-2|${T}|all`];
      const cell = (s) => (s ? `${fmt(s.medianMs)} (${fmt(s.minMs)})` : '–');
      const ratio = (o) => (o ? `${(o.medianMs / h.medianMs).toFixed(2)}× (${(o.minMs / h.minMs).toFixed(2)}×)` : '–');
      L.push(`| ${T} | ${MODES[mode]} | ${cell(h)} | ${mode === 'all' ? cell(o1) : '–'} | ${mode === 'all' ? cell(o2) : '–'} | ${ratio(o1)} | ${ratio(o2)} |`);
    }
  }
  L.push('', 'Ratios above 1 mean HeadLab is faster (the ORT time divided by HeadLab\'s, medians; best times in brackets).' +
    ' ORT\'s graph always computes the logits at every position; the rows "last position" compare HeadLab\'s default call, which' +
    ' skips the unembedding of the other positions, with that same ORT run. HeadLab\'s pretrained models have no threads yet' +
    ' (`threads: 2` is refused): its 1-thread time stands beside ORT\'s 2 threads.', '');
  L.push('## Load and memory', '');
  L.push('| run | load (bytes in memory → ready) | peak RSS of the process | wasm memory | RSS before loading |');
  L.push('| --- | --- | --- | --- | --- |');
  for (const c of CONFIGS) {
    const rs = res.runs.filter((r) => r.key === c.key && r.status === 'ok');
    if (!rs.length) continue;
    L.push(`| ${c.label} | ${fmt(median(rs.map((r) => r.loadMs)))} | ${mib(Math.max(...rs.map((r) => r.memory.rssPeakBytes)))} | ${mib(Math.max(...rs.map((r) => r.memory.wasmBytes)))} | ${mib(rs[0].memory.rssBaselineBytes)} |`);
  }
  L.push('', 'The peak RSS includes the file read into memory by the benchmark (498 MB for each engine) besides the engine\'s copy.');
  const fails = res.runs.filter((r) => r.status !== 'ok');
  if (fails.length) {
    L.push('', '## Failures', '');
    for (const r of fails) L.push(`- ${r.label}, round ${r.round}: ${r.error}`);
  }
  return L.join('\n');
}

export async function runPretrained(argv) {
  const a = parseArgs(argv);
  const known = ['part', 'rounds', 'reps', 'seqs', 'out', 'folder', 'help'];
  for (const k of Object.keys(a)) if (!known.includes(k)) throw new Error(`unknown option --${k} for the real-model part; known: ${known.map((x) => '--' + x).join(' ')}`);
  const o = {
    rounds: Number(a.rounds ?? 2), reps: Number(a.reps ?? 3),
    seqs: String(a.seqs ?? '64,256').split(',').map(Number),
    folder: path.resolve(repo, a.folder ?? 'build/bench-gpt2'),
    out: path.resolve(repo, a.out ?? 'bench/results/pretrained'),
  };
  const why = ensureModel(o.folder);
  if (why) {
    console.error(`bench pretrained: skipped: ${why}`);
    return null;
  }
  const gitHead = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repo, encoding: 'utf8' }).stdout.trim();
  const cpuModel = /model name\s*:\s*(.*)/.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim();
  const res = {
    startedAt: new Date().toISOString(), complete: false, gitHead,
    machine: { cpuModel, cores: os.cpus().length, node: process.version, loadAvgStart: os.loadavg() },
    options: { ...o, folder: rel(o.folder), out: rel(o.out) }, versions: {}, model: {}, runs: [], summary: {},
  };
  const save = () => fs.writeFileSync(o.out + '.json', JSON.stringify(res, null, 1) + '\n');
  fs.mkdirSync(path.dirname(o.out), { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'headlab-bench-pretrained-'));
  const refFile = path.join(tmp, 'ort-logits.f32');
  try {
    for (let round = 1; round <= o.rounds; round++) {
      // Alternate: ORT 1 thread first in round 1 (its logits are the reference), then rotate.
      const order = round === 1 ? [CONFIGS[1], CONFIGS[0], CONFIGS[2]]
        : CONFIGS.slice((round - 1) % CONFIGS.length).concat(CONFIGS.slice(0, (round - 1) % CONFIGS.length));
      for (const c of order) {
        const args = ['--engine', c.engine, '--threads', String(c.threads), '--folder', o.folder,
          '--seqs', o.seqs.join(','), '--reps', String(o.reps)];
        if (c.key === 'ort-1' && !fs.existsSync(refFile)) args.push('--save-logits', refFile);
        else if (fs.existsSync(refFile)) args.push('--ref', refFile);
        const loadAvg = os.loadavg()[0];
        const r = { ...c, round, loadAvgBefore: loadAvg, ...(await runEngine(args, 30 * 60 * 1000)) };
        r.key = c.key;
        res.runs.push(r);
        if (r.version) res.versions.ort = r.version;
        if (r.info?.parameters) res.model.parameters = r.info.parameters;
        const check = r.checkRef ? `max |diff| vs ORT ${r.checkRef.maxAbsDiff.toExponential(2)}` : r.checkPytorch ? `vs PyTorch ${r.checkPytorch.maxAbsDiff.toExponential(2)}` : '';
        const times = (r.runs ?? []).map((x) => `T=${x.T} ${x.mode} ${fmt(x.medianMs)}`).join(', ');
        console.error(`bench pretrained: round ${round} ${c.label}: ${r.status}${r.error ? ': ' + r.error : ''}; load ${r.loadMs ? fmt(r.loadMs) : '–'}; ${check}; ${times}; load avg ${loadAvg.toFixed(2)}`);
        if (r.status !== 'ok' && r.checkRef && !r.checkRef.pass) throw new Error(`stopped: ${c.label}: ${r.error}`);
        // The summary: every timed run of every round.
        const groups = {};
        for (const run of res.runs.filter((x) => x.status === 'ok')) {
          for (const t of run.runs) (groups[`${run.key}|${t.T}|${t.mode}`] ??= []).push(...t.times);
        }
        res.summary = Object.fromEntries(Object.entries(groups).map(([k, ts]) => [k, { medianMs: median(ts), minMs: Math.min(...ts), n: ts.length }]));
        save();
      }
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  res.complete = true;
  res.machine.loadAvgEnd = os.loadavg();
  res.finishedAt = new Date().toISOString();
  save();
  const md = render(res);
  fs.writeFileSync(o.out + '.md', md + '\n');
  process.stdout.write(md + '\n');
  console.error(`bench pretrained: wrote ${rel(o.out)}.json and ${rel(o.out)}.md`);
  return res;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runPretrained(process.argv.slice(2)).catch((e) => {
    console.error(`bench pretrained: ${e.message}`);
    process.exit(1);
  });
}
