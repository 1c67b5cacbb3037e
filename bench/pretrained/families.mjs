// The families part of `npm run bench`: random models of SmolLM2-135M's shapes (LlamaForCausalLM) and
// bert-base's (BertForMaskedLM), written by make_families.py, in HeadLab (`lab.loadPretrained`), ONNX
// Runtime Web (PyTorch's ONNX export, the Llama one with past_key_values) and, for the Llama shape,
// wllama (llama.cpp in WebAssembly, the f16 GGUF file; Chromium only), at 1 and 2 threads.
//   node bench/run.mjs --part families [--models smollm2,bert-base] [--tiny] [--env node|browser|both]
//        [--rounds 2] [--reps 3] [--seqs 64,256] [--gen 64x32] [--where worker|page] [--out bench/results/NAME]
//   node bench/pretrained/families.mjs --render bench/results/NAME.json   (the Markdown again from the JSON)
// Each engine runs in a process (Node) or a fresh Chromium of its own, alternating, after checking its
// output against PyTorch's. The SIMD peak probe runs in each environment before each round; the best probe is quoted.
// In Chromium, HeadLab and ORT run in a dedicated Worker of the page (--where worker, the default), as
// docs/pretrained.md tells users to run a model: on the page's main thread (--where page) nothing may block,
// so a threaded engine's calling thread spins while it waits for its pool (wllama always runs in its own Worker).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, runChild } from '../lib/child.mjs';
import { median } from './measure.mjs';
import { runBrowser } from './run.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const rel = (p) => path.relative(repo, p);
const PYTHON = '/usr/bin/python3';

const MODELS = {
  smollm2: { label: 'SmolLM2-135M-shaped (LlamaForCausalLM)', decoder: true, files: ['model-f16.gguf'] },
  'bert-base': { label: 'bert-base-shaped (BertForMaskedLM)', decoder: false, files: [] },
};
const ENGINES = [
  { engine: 'headlab', label: 'HeadLab' },
  { engine: 'ort', label: 'ORT Web' },
  { engine: 'wllama', label: 'wllama', browserOnly: true, decoderOnly: true },
];
const ENV_LABEL = { node: 'Node', browser: 'Chromium' };

/**
 * FLOPs of one forward pass over T tokens with logits at every position (multiply + add = 2):
 *   per layer: 2·T·d·(H + 2·KV)·hd (q, k, v) + 2·T·H·hd·d (output projection)
 *              + 2·2·T²·H·hd (scores and the weighted sum over the full T × T, as ORT's graph computes them;
 *                a causal engine may skip half)
 *              + MLP: 3 · 2·T·d·ff (SwiGLU: gate, up, down) or 2 · 2·T·d·ff (GELU: in, out)
 *   head: 2·T·d·V (unembedding), BERT also 2·T·d² (its MLM transform).
 * Norms, activations, softmax and rotary are O(T·d) or O(T²·H) and left out.
 */
export function forwardFlops(c, T) {
  const d = c.hidden_size, H = c.num_attention_heads, KV = c.num_key_value_heads ?? H;
  const hd = c.head_dim ?? d / H, ff = c.intermediate_size, V = c.vocab_size, L = c.num_hidden_layers;
  const swiglu = c.model_type === 'llama';
  const layer = 2 * T * d * (H + 2 * KV) * hd + 2 * T * H * hd * d + 4 * T * T * H * hd + (swiglu ? 3 : 2) * 2 * T * d * ff;
  return L * layer + 2 * T * d * V + (swiglu ? 0 : 2 * T * d * d);
}

/** Number of parameters in a safetensors file, from its header (u64 length, then JSON). */
function safetensorsParameters(file) {
  const fd = fs.openSync(file, 'r');
  try {
    const len = Buffer.alloc(8);
    fs.readSync(fd, len, 0, 8, 0);
    const header = Buffer.alloc(Number(len.readBigUInt64LE(0)));
    fs.readSync(fd, header, 0, header.length, 8);
    return Object.entries(JSON.parse(header.toString('utf8')))
      .filter(([k]) => k !== '__metadata__').reduce((n, [, t]) => n + t.shape.reduce((a, b) => a * b, 1), 0);
  } finally {
    fs.closeSync(fd);
  }
}

function ensureModel(name, folder, tiny) {
  const need = ['config.json', 'model.safetensors', 'tokenizer.json', 'model.onnx', 'check.json', ...MODELS[name].files];
  if (need.every((f) => fs.existsSync(path.join(folder, f)))) return null;
  const probe = spawnSync(PYTHON, ['-c', 'import torch, onnx'], { encoding: 'utf8' });
  if (probe.status !== 0) return `${PYTHON} cannot import torch and onnx (apt-get install -y python3-torch python3-onnx)`;
  console.error(`bench families: writing ${name} into ${rel(folder)}${tiny ? '' : ' (a few minutes)'}`);
  const args = [path.join(here, 'make_families.py'), name, folder, ...(tiny ? ['--tiny'] : [])];
  const r = spawnSync(PYTHON, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`make_families.py ${name} failed (exit ${r.status})`);
  return null;
}

const fmt = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 10 ? 1 : 0)} ms`);
const mib = (b) => (b ? `${(b / 2 ** 20).toFixed(0)} MiB` : '–');

function summarise(runs) {
  const groups = {};
  for (const r of runs.filter((x) => x.status === 'ok')) {
    for (const t of r.runs) (groups[`${r.env}|${r.model}|${r.engine}|${r.threads}|${t.mode}|${t.T}`] ??= []).push(...t.times);
  }
  return Object.fromEntries(Object.entries(groups).map(([k, ts]) => [k, { medianMs: median(ts), minMs: Math.min(...ts), n: ts.length }]));
}

function render(res) {
  const L = [];
  const m = res.machine, o = res.options;
  L.push(`# Families benchmark: ${o.models.map((x) => MODELS[x].label).join(' and ')}${o.tiny ? ' — TINY shapes (harness check, not a measurement)' : ''}`, '');
  L.push(`Written by \`node bench/run.mjs --part families${o.tiny ? ' --tiny' : ''}\`, ${res.startedAt.slice(0, 16).replace('T', ' ')} UTC to ${res.finishedAt?.slice(11, 16) ?? '–'}` +
    ` (${m.cpuModel}, ${m.cores} cores, Node ${m.node}${m.chromium ? `, Chromium ${m.chromium}` : ''}; ORT Web ${res.versions.ort ?? '?'}` +
    `${res.versions.wllama ? `, wllama's llama.cpp ${res.versions.wllama}` : ''}; git ${res.gitHead}; ${o.rounds} round(s) × ${o.reps} timed runs per engine, after one warm-up).`);
  L.push(`Load average (1, 5, 15 min) at the start ${m.loadAvgStart.map((x) => x.toFixed(1)).join(', ')}; at the end ${m.loadAvgEnd?.map((x) => x.toFixed(1)).join(', ') ?? '–'}.`, '');
  const S = (env, model, engine, threads, mode, T) => res.summary[`${env}|${model}|${engine}|${threads}|${mode}|${T}`];
  const cell = (x) => (x ? `${fmt(x.medianMs)} (${fmt(x.minMs)})` : null);
  const why = (env, model, engine, threads) => {
    const r = res.runs.find((x) => x.env === env && x.model === model && x.engine === engine && x.threads === threads && x.status !== 'ok') ??
      res.runs.find((x) => x.env === env && x.model === model && x.engine === engine && x.status === 'unavailable');
    if (!r) return '–';
    return r.status === 'unavailable' ? `unavailable (${note(r.error)})` : `fails (${note(r.error)})`;
  };
  const notes = [];
  const note = (text) => {
    if (!notes.includes(text)) notes.push(text);
    return `note ${notes.indexOf(text) + 1}`;
  };
  for (const model of o.models) {
    const c = res.configs[model];
    L.push(`## ${MODELS[model].label}`, '');
    if (c) {
      L.push(`${c.num_hidden_layers} layers, d ${c.hidden_size}, ${c.num_attention_heads} heads${c.num_key_value_heads && c.num_key_value_heads !== c.num_attention_heads ? ` (${c.num_key_value_heads} key-value heads)` : ''},` +
        ` MLP ${c.intermediate_size}, vocabulary ${c.vocab_size}; random weights, float32 (${res.params[model]?.toLocaleString('en-US') ?? '?'} parameters).`, '');
    }
    L.push('### Correctness (before any timing)', '');
    L.push('| where | run | last-position logits vs PyTorch: max abs diff ÷ max abs logit | greedy continuations vs PyTorch |');
    L.push('| --- | --- | --- | --- |');
    for (const r of res.runs.filter((x) => x.model === model)) {
      const g = r.checkGreedy ? r.checkGreedy.map((x) => `${x.promptLength} ids + ${x.tokens}: ${x.same ? 'same' : 'DIFFERENT'} (margin ≥ ${x.minMargin.toFixed(2)})`).join('; ') : '–';
      const logits = r.checkPytorch ? r.checkPytorch.relDiff.toExponential(2) : r.status === 'ok' ? '– (no logits)' : `${r.status} (${note(r.error)})`;
      L.push(`| ${ENV_LABEL[r.env]} | ${r.label}, ${r.threads} thread(s), round ${r.round} | ${logits} | ${g} |`);
    }
    for (const env of o.envs) {
      const peak = res.peak[env];
      const probes = peak?.probes?.length > 1 ? `; the best of ${peak.probes.length} probes, one before each round: ${peak.probes.map((g) => (g ? g.toFixed(1) : '–')).join(', ')}` : '';
      const peakText = peak?.gflops
        ? `${peak.gflops.toFixed(1)} GFLOP/s per thread (${peak.chains} chains; ${Object.entries(peak.byChains ?? {}).map(([k, v]) => `${k}: ${v.toFixed(1)}`).join(', ')}${probes})`
        : `not measured (${peak?.error ?? '–'})`;
      L.push('', `### ${ENV_LABEL[env]}: one forward pass, logits at every position (median; best in brackets)`, '');
      L.push(`SIMD128 peak probe in ${ENV_LABEL[env]}: ${peakText}. Share of peak = GFLOP of the pass (formula in families.mjs) ÷ median time ÷ (peak × threads).`, '');
      L.push('| T | GFLOP | threads | HeadLab | ORT Web | HeadLab speed-up | HeadLab share of peak | ORT Web share of peak |');
      L.push('| --- | --- | --- | --- | --- | --- | --- | --- |');
      for (const T of o.seqs) {
        const gflop = c ? forwardFlops(c, T) / 1e9 : null;
        for (const threads of o.threads) {
          const h = S(env, model, 'headlab', threads, 'forward', T), r = S(env, model, 'ort', threads, 'forward', T);
          const share = (x) => (x && gflop && peak?.gflops ? `${(100 * gflop / (x.medianMs / 1e3) / (peak.gflops * threads)).toFixed(0)} %` : '–');
          L.push(`| ${T} | ${gflop?.toFixed(2) ?? '?'} | ${threads} | ${cell(h) ?? why(env, model, 'headlab', threads)} | ${cell(r) ?? why(env, model, 'ort', threads)} |` +
            ` ${h && r ? `${(r.medianMs / h.medianMs).toFixed(2)}× (${(r.minMs / h.minMs).toFixed(2)}×)` : '–'} | ${share(h)} | ${share(r)} |`);
        }
      }
      if (MODELS[model].decoder && o.gen) {
        L.push('', `### ${ENV_LABEL[env]}: generation with a KV cache, ${o.gen.tokens} new tokens after ${o.gen.prompt} (greedy)`, '');
        L.push(`SIMD128 peak probe in ${ENV_LABEL[env]}: ${peakText}.` +
          ' tokens/s = new tokens ÷ median time of the whole call (the prompt\'s pass included); wllama\'s own split (llama.cpp\'s timings) beside it.', '');
        L.push('| threads | HeadLab | ORT Web (past_key_values) | wllama (f16 GGUF) | HeadLab ÷ ORT Web | HeadLab ÷ wllama | wllama: prompt ms, decode tokens/s |');
        L.push('| --- | --- | --- | --- | --- | --- | --- |');
        for (const threads of o.threads) {
          const tps = (x) => (x ? o.gen.tokens / (x.medianMs / 1e3) : null);
          const [h, r, w] = ['headlab', 'ort', 'wllama'].map((e) => S(env, model, e, threads, 'generate', o.gen.prompt));
          const show = (x, e) => (x ? `${tps(x).toFixed(1)} tokens/s (${fmt(x.medianMs)})` : env === 'node' && e === 'wllama' ? 'Chromium only' : why(env, model, e, threads));
          const wt = res.runs.filter((x) => x.env === env && x.model === model && x.engine === 'wllama' && x.threads === threads && x.status === 'ok')
            .flatMap((x) => x.runs.flatMap((t) => t.engineTimings ?? []));
          const split = wt.length ? `${median(wt.map((t) => t.prompt_ms)).toFixed(0)} ms, ${median(wt.map((t) => t.predicted_per_second)).toFixed(1)} tokens/s` : '–';
          L.push(`| ${threads} | ${show(h, 'headlab')} | ${show(r, 'ort')} | ${show(w, 'wllama')} | ${h && r ? `${(tps(h) / tps(r)).toFixed(2)}×` : '–'} | ${h && w ? `${(tps(h) / tps(w)).toFixed(2)}×` : '–'} | ${split} |`);
        }
      }
    }
    L.push('', '### Load and peak memory', '');
    L.push('| where | engine | threads | load (bytes in memory → ready) | wasm memory (peak) | peak RSS (Node process / Chromium renderer) |');
    L.push('| --- | --- | --- | --- | --- | --- |');
    for (const env of o.envs) {
      for (const e of ENGINES) {
        for (const threads of o.threads) {
          const rs = res.runs.filter((r) => r.env === env && r.model === model && r.engine === e.engine && r.threads === threads && r.status === 'ok');
          if (!rs.length) continue;
          const wasm = Math.max(...rs.map((r) => r.memory?.wasmBytes ?? 0));
          L.push(`| ${ENV_LABEL[env]} | ${e.label} | ${threads} | ${fmt(median(rs.map((r) => r.loadMs)))} | ${e.engine === 'wllama' ? 'in its Worker: see RSS' : mib(wasm)} | ${mib(Math.max(...rs.map((r) => r.memory?.rssPeakBytes ?? 0)))} |`);
        }
      }
    }
    L.push('');
  }
  L.push('Speed-up and ratios: the other engine\'s time ÷ HeadLab\'s at the same number of threads (medians; best in brackets). In Chromium the 2-thread runs are on a' +
    ' cross-origin-isolated page; HeadLab and ORT run ' + ((o.where ?? 'page') === 'page' ? 'on the page\'s main thread' : 'in a dedicated Worker of the page') + '; wllama chooses its threads (`n_threads`) only where SharedArrayBuffer exists, else it runs one. The wasm memory of ORT and HeadLab is every' +
    ' WebAssembly.Memory they made (they only grow); wllama\'s lives in its Worker, so its peak shows in the renderer\'s RSS only.');
  if (notes.length) {
    L.push('', '## Notes', '');
    notes.forEach((n, i) => L.push(`${i + 1}. ${n}`));
  }
  const fails = res.runs.filter((r) => r.status === 'fails');
  if (fails.length) {
    L.push('', '## Failures', '');
    for (const r of fails) L.push(`- ${ENV_LABEL[r.env]}, ${r.model}, ${r.label}, ${r.threads} thread(s), round ${r.round}: ${r.error}`);
  }
  return L.join('\n');
}

function renderFile(jsonPath) {
  const res = JSON.parse(fs.readFileSync(jsonPath, 'utf8'));
  res.summary = summarise(res.runs);
  const md = render(res);
  fs.writeFileSync(jsonPath.replace(/\.json$/, '.md'), md + '\n');
  process.stdout.write(md + '\n');
}

export async function runFamilies(argv) {
  const a = parseArgs(argv);
  const known = ['part', 'models', 'tiny', 'env', 'rounds', 'reps', 'seqs', 'gen', 'threads', 'where', 'out', 'render', 'help'];
  for (const k of Object.keys(a)) if (!known.includes(k)) throw new Error(`unknown option --${k} for the families part; known: ${known.map((x) => '--' + x).join(' ')}`);
  if (a.help) {
    console.log(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(0, 9).join('\n'));
    return null;
  }
  if (a.render) return renderFile(path.resolve(repo, a.render));
  const ENVS = { node: ['node'], browser: ['browser'], both: ['node', 'browser'], all: ['node', 'browser'] };
  if (!ENVS[a.env ?? 'both']) throw new Error(`--env must be node, browser or both, got "${a.env}"`);
  const models = String(a.models ?? 'smollm2,bert-base').split(',');
  for (const m of models) if (!MODELS[m]) throw new Error(`--models: unknown model "${m}"; known: ${Object.keys(MODELS).join(', ')}`);
  const [gp, gt] = String(a.gen ?? '64x32').split('x').map(Number);
  if (!(gp > 0 && gt > 0)) throw new Error(`--gen must be PROMPTxNEW, e.g. 64x32, got "${a.gen}"`);
  const tiny = a.tiny === true;
  const where = a.where ?? 'worker';
  if (!['worker', 'page'].includes(where)) throw new Error(`--where must be worker or page, got "${a.where}"`);
  const day = new Date().toISOString().slice(0, 10);
  const o = {
    models, tiny, envs: ENVS[a.env ?? 'both'], rounds: Number(a.rounds ?? (tiny ? 1 : 2)), reps: Number(a.reps ?? (tiny ? 2 : 3)),
    seqs: String(a.seqs ?? '64,256').split(',').map(Number), threads: String(a.threads ?? '1,2').split(',').map(Number),
    gen: { prompt: gp, tokens: gt }, where,
    out: path.resolve(repo, a.out ?? `bench/results/families-${tiny ? 'tiny-' : ''}${day}`),
  };
  const folders = Object.fromEntries(models.map((m) => [m, path.join(repo, 'build', `bench-${m}${tiny ? '-tiny' : ''}`)]));
  for (const m of models) {
    const why = ensureModel(m, folders[m], tiny);
    if (why) {
      console.error(`bench families: skipped: ${why}`);
      return null;
    }
  }
  const gitHead = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repo, encoding: 'utf8' }).stdout.trim();
  const cpuModel = /model name\s*:\s*(.*)/.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim();
  const res = {
    startedAt: new Date().toISOString(), complete: false, gitHead,
    machine: { cpuModel, cores: os.cpus().length, node: process.version, loadAvgStart: os.loadavg() },
    options: { ...o, out: rel(o.out) }, versions: {}, peak: {}, runs: [], summary: {},
    configs: Object.fromEntries(models.map((m) => [m, JSON.parse(fs.readFileSync(path.join(folders[m], 'config.json'), 'utf8'))])),
    params: Object.fromEntries(models.map((m) => [m, safetensorsParameters(path.join(folders[m], 'model.safetensors'))])),
  };
  fs.mkdirSync(path.dirname(o.out), { recursive: true });
  const save = () => fs.writeFileSync(o.out + '.json', JSON.stringify(res, null, 1) + '\n');
  const servers = {};
  if (o.envs.includes('browser')) {
    const { serve } = await import('../../tools/serve.mjs');
    servers.plain = await serve({ port: 0, root: repo, isolate: false });
    servers.isolated = await serve({ port: 0, root: repo, isolate: true });
  }
  const timeoutMs = (tiny ? 5 : 30) * 60 * 1000;
  const unavailable = new Set();  // env|model|engine that said "not supported": not asked again
  const runOne = async (env, model, e, threads, round) => {
    const loadAvgBefore = os.loadavg()[0];
    const gen = MODELS[model].decoder ? o.gen : null;
    let r;
    if (env === 'node') {
      const args = ['--family', '--engine', e.engine, '--threads', String(threads), '--folder', folders[model], '--seqs', o.seqs.join(','), '--reps', String(o.reps)];
      if (gen) args.push('--gen', `${gen.prompt}x${gen.tokens}`);
      r = await runChild(path.join(here, 'engine.mjs'), args, { timeoutMs, maxOldSpaceMb: 8192, cwd: repo });
    } else {
      const url = (threads > 1 ? servers.isolated : servers.plain).url;
      const at = e.engine === 'wllama' ? 'page' : o.where;  // wllama starts a Worker of its own
      r = await runBrowser(url, { where: at, engine: e.engine, threads, folder: rel(folders[model]), seqs: e.engine === 'wllama' ? [] : o.seqs, reps: o.reps, gen }, timeoutMs, 'benchFamily');
      if (threads > 1 && r.isolated === false) r = { ...r, status: 'fails', error: 'the page was not cross-origin isolated' };
    }
    if (r.status === 'ok' && r.threadsUsed !== threads) r = { ...r, status: 'fails', error: `ran on ${r.threadsUsed} thread(s), not ${threads}` };
    return { ...r, engine: e.engine, label: e.label, threads, env, model, round, loadAvgBefore };
  };
  const record = (r) => {
    res.runs.push(r);
    if (r.engine === 'ort' && r.version) res.versions.ort = r.version;
    if (r.engine === 'wllama' && r.version) res.versions.wllama = r.version;
    if (r.chromium) res.machine.chromium = r.chromium;
    if (r.status === 'unavailable') unavailable.add(`${r.env}|${r.model}|${r.engine}`);
    const times = (r.runs ?? []).map((x) => `${x.mode} T=${x.T} ${fmt(x.medianMs)}`).join(', ');
    console.error(`bench families: ${r.env} ${r.model} round ${r.round} ${r.label} ${r.threads}t: ${r.status}${r.error ? ': ' + r.error : ''}; ${times}`);
    res.summary = summarise(res.runs);
    save();
  };
  try {
    // The roof is probed in each environment before each of its rounds, and the best probe is the one
    // quoted: on a shared machine (a VM here) one probe can read a third low, which would put an
    // engine above 100 % of "peak".
    const probe = async (env) => {
      const p = env === 'node'
        ? await runChild(path.join(repo, 'bench/run-engine.mjs'), ['--peak'], { timeoutMs: 120000, maxOldSpaceMb: 512, cwd: repo })
        : await runBrowser(servers.plain.url, {}, 120000, 'benchPeak');
      console.error(`bench families: SIMD128 peak (${env}): ${p.gflops ? `${p.gflops.toFixed(1)} GFLOP/s with ${p.chains} chains` : p.error}`);
      const was = res.peak[env];
      const probes = [...(was?.probes ?? []), p.gflops ?? null];
      if (!was?.gflops || (p.gflops ?? 0) > was.gflops) res.peak[env] = { ...p, probes };
      else was.probes = probes;
    };
    for (let round = 1; round <= o.rounds; round++) {
      for (const env of o.envs) {
        await probe(env);
        for (const model of models) {
          const cells = [];
          for (const threads of o.threads) {
            for (const e of ENGINES) {
              if ((e.browserOnly && env !== 'browser') || (e.decoderOnly && !MODELS[model].decoder)) continue;
              cells.push([e, threads]);
            }
          }
          const k = (round - 1) % cells.length;  // rotate, so drift hits every engine alike
          for (const [e, threads] of cells.slice(k).concat(cells.slice(0, k))) {
            if (unavailable.has(`${env}|${model}|${e.engine}`)) continue;
            record(await runOne(env, model, e, threads, round));
          }
        }
      }
    }
  } finally {
    for (const srv of Object.values(servers)) await srv.close();
  }
  res.complete = true;
  res.machine.loadAvgEnd = os.loadavg();
  res.finishedAt = new Date().toISOString();
  save();
  const md = render(res);
  fs.writeFileSync(o.out + '.md', md + '\n');
  process.stdout.write(md + '\n');
  console.error(`bench families: wrote ${rel(o.out)}.json and ${rel(o.out)}.md`);
  return res;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runFamilies(process.argv.slice(2)).catch((e) => {
    console.error(`bench families: ${e.message}`);
    process.exit(1);
  });
}
