// Renders bench/results/latest.json as Markdown. Also a CLI:
//   node bench/lib/report.mjs bench/results/latest.json
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ENGINE_NAMES = {
  headlab: 'HeadLab',
  'headlab-scalar': 'HeadLab scalar',
  ort: 'ORT Web',
  'ort-plain': 'ORT Web plain ops',
  tfjs: 'TF.js wasm',
  plain: 'plain JS',
  'headlab-parallel': 'HeadLab 2 threads',
  'headlab-workers': 'HeadLab 2 Workers',
  'ort-2t': 'ORT Web 2 threads',
};
const ENV_NAMES = { node: 'Node', browser: 'Chromium', isolated: 'Chromium, isolated page' };
const MULTI_CORE = ['headlab-parallel', 'headlab-workers', 'ort-2t'];
const MODE_TITLES = {
  mha: 'self-attention with Q/K/V and output projections (FLOPs 8·T·d² + 4·T²·d)',
  attn: 'attention only, no projections (FLOPs 4·T²·d)',
};

const MiB = (b) => (b == null ? '?' : `${(b / 2 ** 20).toFixed(b < 10 * 2 ** 20 ? 1 : 0)}`);
const fmtMs = (ms) => (ms >= 10000 ? `${(ms / 1000).toFixed(1)} s` : ms >= 100 ? `${ms.toFixed(0)} ms` : ms >= 10 ? `${ms.toFixed(1)} ms` : `${ms.toFixed(2)} ms`);
const fmtExp = (x) => (x == null || Number.isNaN(x) ? '?' : x === 0 ? '0' : x.toExponential(1));

// ⚠ on a run that other load may have slowed (busy mode sets no limit: the load is the point).
const flagged = (r) => r.busyLimit !== null && r.busyCoresBefore > (r.busyLimit ?? 0.9);

export function render(res) {
  const lines = [];
  const m = res.machine;
  const engines = res.options.engines;
  const peers = engines.filter((e) => e !== 'headlab');
  lines.push(`# HeadLab benchmark: multi-head attention forward, single thread${engines.includes('headlab-parallel') ? ' (and 2 threads)' : ''}${res.options.busy ? ', on a busy machine' : ''}`);
  lines.push('');
  if (res.options.busy) {
    const busy = res.runs.filter((r) => r.busyCoresBefore != null).map((r) => r.busyCoresBefore).sort((a, b) => a - b);
    const median = busy.length ? busy[busy.length >> 1].toFixed(2) : '?';
    lines.push(`- Busy mode: a background load (bench/lib/busy-load.mjs: one process hashing and writing + fsync'ing a file, one thread) ran from the first engine run to the last${res.busyLoad?.cores != null ? `, using ${res.busyLoad.cores.toFixed(2)} of a core on average` : ''}; other processes (the load included) kept ${median} cores busy just before a run (median; ${busy[0]?.toFixed(2) ?? '?'}–${busy.at(-1)?.toFixed(2) ?? '?'}). The runs did not wait for a quiet machine.`);
  }
  lines.push(`- Date: ${res.startedAt}${res.complete ? '' : ' (INCOMPLETE: run still going or interrupted)'}; took ${res.elapsedS != null ? (res.elapsedS / 60).toFixed(1) + ' min' : '?'}`);
  lines.push(`- Machine: ${m.cpuModel}, ${m.cores} cores, ${m.memGiB} GiB; Node ${m.node}; Chromium ${m.chromium ?? 'not run'}; load average at start ${m.loadAvgStart?.map((x) => x.toFixed(2)).join(' ')}, at end ${m.loadAvgEnd?.map((x) => x.toFixed(2)).join(' ') ?? '?'}`);
  const peak = res.peak ?? {};
  lines.push(`- WASM SIMD128 peak probe (independent f32x4 mul+add chains; the best chain count): ${Object.entries(peak).map(([env, p]) => `${ENV_NAMES[env]} ${p.gflops ? `${p.gflops.toFixed(1)} GFLOP/s${p.chains ? ` (${p.chains} chains)` : ''}` : 'failed: ' + p.error}`).join(', ')}`);
  const s = res.sizes;
  lines.push(`- Shipped size: web/lib/gen/headlab_core.mjs ${s['headlab_core.mjs']?.bytes} B (gzip ${s['headlab_core.mjs']?.gzipBytes}), headlab_core.wasm ${s['headlab_core.wasm']?.bytes} B (gzip ${s['headlab_core.wasm']?.gzipBytes}); for scale: ORT Web ${s.ortWasm?.file} ${s.ortWasm?.bytes} B, TF.js ${s.tfWasm?.file} ${s.tfWasm?.bytes} B`);
  lines.push(`- Versions: ${Object.entries(res.versions ?? {}).map(([e, v]) => `${ENGINE_NAMES[e] ?? e} ${v}`).join('; ')}; HeadLab build ${res.build?.wasmSha256?.slice(0, 12)} (${res.build?.wasmMtime}), git ${res.build?.gitHead}${res.build?.dirty ? ' + uncommitted changes in cpp/' : ''}`);
  lines.push(`- Method: one process (Node) or fresh browser (Chromium) per engine run; output checked against a float64 JS reference (T ≤ ${res.options.f64MaxT}) or HeadLab's output before timing (pass: max |diff| ≤ 1e-3·max |ref|); warm-up, then the median of ≥ ${res.options.reps} runs; engine runs interleaved; a run whose first repetition exceeds ${res.options.budgetS} s (or is predicted to from smaller T) is "skipped (too slow)". Speed-up = peer time ÷ HeadLab time (> 1: HeadLab is faster), from the medians and, in brackets, from the best times (less sensitive to other load on the machine).`);
  const notes = new Set();
  for (const r of res.runs) {
    if (r.status !== 'ok') continue;
    for (const n of r.notes ?? []) notes.add(`${ENGINE_NAMES[r.engine] ?? r.engine}: ${n}`);
  }
  for (const n of notes) lines.push(`- ${n}`);
  lines.push('');

  const footnotes = [];
  const foot = (text) => {
    let i = footnotes.indexOf(text);
    if (i < 0) { footnotes.push(text); i = footnotes.length - 1; }
    return `[${i + 1}]`;
  };
  const cellText = (r) => {
    if (!r) return '—';
    switch (r.status) {
      case 'ok': return `${fmtMs(r.medianMs)} (best ${fmtMs(r.minMs)}) · ${r.gflops.toFixed(2)}${flagged(r) ? ' ⚠' : ''}${variantNote(r)}`;
      case 'too-slow': return `skipped (${r.predicted ? 'predicted ' : ''}too slow)${r.error ? ' ' + foot(r.error) : ''}`;
      case 'skipped': return `skipped ${foot(r.error)}`;
      case 'mismatch': return `wrong output ${foot(r.error)}`;
      default: return `fails ${foot(r.error ?? 'unknown error')}`;
    }
  };

  const variantNote = (r) => (r.engine === 'ort' && r.variant === 'plain'
    ? ` plain ops ${foot(`ORT Web ran the plain-ops graph${r.fusedError ? `: com.microsoft.MultiHeadAttention failed with "${r.fusedError.slice(0, 240)}"` : ''}`)}` : '');
  const envs = res.options.envs;
  // The isolated page runs only the multi-core cells: its rows are in the multi-core tables.
  const fullEnvs = envs.filter((e) => e !== 'isolated');
  const byKey = new Map(res.runs.map((r) => [`${r.env}|${r.engine}|${r.cell.mode}|${r.cell.d}|${r.cell.h}|${r.cell.T}`, r]));
  const get = (env, engine, c) => byKey.get(`${env}|${engine}|${c.mode}|${c.d}|${c.h}|${c.T}`);

  for (const env of fullEnvs) {
    for (const mode of ['mha', 'attn']) {
      const cells = res.cells.filter((c) => c.mode === mode);
      if (!cells.length) continue;
      lines.push(`## ${ENV_NAMES[env]}: ${MODE_TITLES[mode]}`);
      lines.push('');
      lines.push('Each engine: median time (best time) · GFLOP/s at the median. ⚠: other processes kept more than 0.9 of a core busy just before the run (0.25 for the 2-thread engines, which need both cores).');
      lines.push('');
      lines.push(`| d×h | T | GFLOP | ${engines.map((e) => ENGINE_NAMES[e]).join(' | ')} | ${peers.map((e) => `speed-up vs ${ENGINE_NAMES[e]}`).join(' | ')} |`);
      lines.push(`|${' --- |'.repeat(3 + engines.length + peers.length)}`);
      for (const c of cells) {
        const hl = get(env, 'headlab', c);
        const row = [`${c.d}×${c.h}`, c.T, (res.flops[cellKeyOf(c)] / 1e9).toFixed(2)];
        for (const e of engines) row.push(cellText(get(env, e, c)));
        for (const e of peers) {
          const p = get(env, e, c);
          row.push(hl?.status === 'ok' && p?.status === 'ok'
            ? `${(p.medianMs / hl.medianMs).toFixed(2)}× (best ${(p.minMs / hl.minMs).toFixed(2)}×)` : '—');
        }
        lines.push(`| ${row.join(' | ')} |`);
      }
      lines.push('');
    }
  }

  // Multi-core: HeadLab's multi-core layer (its default mechanism, and the Workers where the
  // default is pthreads) against ORT Web's own threads, with each one's parallel efficiency (its
  // 1-thread median ÷ its 2-thread median ÷ 2).
  if (engines.some((e) => MULTI_CORE.includes(e))) {
    const ok = (r) => (r?.status === 'ok' ? r : null);
    const ms = (r) => (r ? `${fmtMs(r.medianMs)}${r.mechanism ? ` (${r.mechanism})` : ''}${flagged(r) ? ' ⚠' : ''}` : '—');
    const ratio = (a, b) => (a && b ? `${(b.medianMs / a.medianMs).toFixed(2)}× (best ${(b.minMs / a.minMs).toFixed(2)}×)` : '—');
    const eff = (one, two) => (one && two ? (one.medianMs / two.medianMs / 2).toFixed(2) : '—');
    for (const env of envs) {
      const cells = res.cells.filter((c) => c.mode === 'mha' && MULTI_CORE.some((e) => ok(get(env, e, c))));
      if (!cells.length) continue;
      lines.push(`## ${ENV_NAMES[env]}: 2 threads, with projections`);
      lines.push('');
      const why = {
        node: ' Node has SharedArrayBuffer: ORT Web runs 2 threads, HeadLab 2 threads is pthreads.',
        browser: ' The page is not cross-origin isolated: ORT Web has no SharedArrayBuffer there and runs on 1 thread; HeadLab 2 threads is Workers.',
        isolated: ' The page is cross-origin isolated (COOP/COEP): ORT Web runs 2 threads, HeadLab 2 threads is pthreads.',
      }[env] ?? '';
      lines.push(`Medians. Speed-up = ORT Web 2 threads ÷ HeadLab's (> 1: HeadLab is faster). Efficiency = 1-thread time ÷ 2-thread time ÷ 2.${why}`);
      lines.push('');
      lines.push('| d×h | T | HeadLab | HeadLab 2 threads | HeadLab 2 Workers | ORT Web | ORT Web 2 threads | HeadLab 2 threads vs ORT Web 2 threads | HeadLab 2 Workers vs ORT Web 2 threads | efficiency: HeadLab 2 threads | HeadLab 2 Workers | ORT Web |');
      lines.push(`|${' --- |'.repeat(12)}`);
      for (const c of cells) {
        const [h1, h2, hw, o1, o2] = ['headlab', 'headlab-parallel', 'headlab-workers', 'ort', 'ort-2t'].map((e) => ok(get(env, e, c)));
        lines.push(`| ${c.d}×${c.h} | ${c.T} | ${ms(h1)} | ${ms(h2)} | ${ms(hw)} | ${ms(o1)} | ${ms(o2)} | ${ratio(h2, o2)} | ${ratio(hw, o2)} | ${eff(h1, h2)} | ${eff(h1, hw)} | ${eff(o1, o2)} |`);
      }
      lines.push('');
    }
  }

  lines.push(`## Peak memory (MiB)`);
  lines.push('');
  lines.push('wasm = the engine\'s WebAssembly memory (HeadLab: `lab.info().memoryBytes`; others: every WebAssembly.Memory they create, which only grows); RSS = peak resident set of the Node process or of the Chromium renderer (each includes its runtime\'s own baseline, about ' +
    `${MiB(res.baselines?.nodeRss)} MiB for Node).`);
  lines.push('');
  // Rows with at least one run (the isolated page runs the multi-core cells only).
  const cellsRun = (env) => res.cells.filter((c) => engines.some((e) => { const r = get(env, e, c); return r && r.status !== 'skipped'; }));
  for (const env of envs) {
    lines.push(`| ${ENV_NAMES[env]}: wasm / RSS | T | ${engines.map((e) => ENGINE_NAMES[e]).join(' | ')} |`);
    lines.push(`|${' --- |'.repeat(2 + engines.length)}`);
    for (const c of cellsRun(env)) {
      const row = [`${c.mode === 'attn' ? 'attn ' : ''}${c.d}×${c.h}`, c.T];
      for (const e of engines) {
        const r = get(env, e, c);
        if (!r || !r.memory || r.status === 'skipped' || r.predicted) { row.push('—'); continue; }
        const rss = r.memory.rssPeakBytes;
        row.push(`${e === 'plain' ? '—' : MiB(r.memory.wasmBytes)} / ${MiB(rss)}`);
      }
      lines.push(`| ${row.join(' | ')} |`);
    }
    lines.push('');
  }

  lines.push(`## Output check (max |diff| ÷ max |ref|; tolerance 1e-3)`);
  lines.push('');
  for (const env of envs) {
    lines.push(`| ${ENV_NAMES[env]} | T | reference | ${engines.map((e) => ENGINE_NAMES[e]).join(' | ')} |`);
    lines.push(`|${' --- |'.repeat(3 + engines.length)}`);
    for (const c of cellsRun(env)) {
      const refs = new Set();
      const row = [`${c.mode === 'attn' ? 'attn ' : ''}${c.d}×${c.h}`, c.T, ''];
      for (const e of engines) {
        const r = get(env, e, c);
        const ck = r?.check;
        if (ck?.reference) refs.add(ck.reference);
        if (!ck) row.push('—');
        else if (!ck.reference) row.push(r.savedOutput ? 'is the reference' : 'unchecked');
        else row.push(`${fmtExp(ck.relDiff)}${ck.ok ? '' : ' ✗'}`);
      }
      row[2] = [...refs].join(', ') || '—';
      lines.push(`| ${row.join(' | ')} |`);
    }
    lines.push('');
  }

  if (footnotes.length) {
    lines.push('## Notes');
    lines.push('');
    footnotes.forEach((f, i) => lines.push(`${i + 1}. ${f}`));
    lines.push('');
  }
  return lines.join('\n');
}

export function cellKeyOf(c) {
  return `${c.mode}-d${c.d}-h${c.h}-T${c.T}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2] ?? new URL('../results/latest.json', import.meta.url);
  process.stdout.write(render(JSON.parse(fs.readFileSync(file, 'utf8'))) + '\n');
}
