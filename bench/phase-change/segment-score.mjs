// Would scoring "previous token" only where the induction head reads it change the labels? The
// default induction model (seed from argv, default 1) trains; every 100 steps, on 40 fixed sequences
// of the task's form (a start token, 23 tokens from 32, a segment of 4-10 distinct tokens repeated
// right after itself, as cpp/src/lm_tasks.cpp draws them), each layer-1 head's mean weight on t-1:
// "all" over queries t = 1..23 (as headScores does), "seg" over the first copy's queries
// t = start+1..start+len (the keys the induction head lands on), "both" over both copies; and
// headScores' layer-2 induction scores. Prints one line per 100 steps.
//   node bench/phase-change/segment-score.mjs [seed]
import { createHeadlab } from '../../web/lib/headlab.js';
const lab = await createHeadlab();
const seed = Number(process.argv[2] ?? 1);
const m = await lab.createLanguageModel({ task: 'induction', seed });
const names = 'abcdefghijklmnopqrstuvwxyz012345'.split('');
let r = 12345;  // a small LCG: the same sequences every run
const rnd = (n) => { r = (r * 1103515245 + 12345) % 2147483648; return Math.floor((r / 2147483648) * n); };
const seqs = [];
for (let k = 0; k < 40; k++) {
  const T = 24, len = 4 + rnd(7), start = 1 + rnd(T - 2 * len);
  const pool = names.map((_, i) => i); for (let i = 0; i < len; i++) { const j = i + rnd(32 - i); [pool[i], pool[j]] = [pool[j], pool[i]]; }
  const tok = [];
  for (let t = 1; t < T; t++) {
    tok.push(t >= start && t < start + len ? pool[t - start]
      : t >= start + len && t < start + 2 * len ? pool[t - start - len] : rnd(32));
  }
  seqs.push({ text: tok.map((i) => names[i]).join(' '), start, len });
}
while (m.steps <= 2600) {
  const H = 4, T = 24;
  const all = Array(H).fill(0), seg = Array(H).fill(0), seg2 = Array(H).fill(0); let na = 0, ns = 0, ns2 = 0;
  for (const { text, start, len } of seqs) {
    const w = m.attention(text).weights;
    for (let t = 1; t < T; t++) { na++; for (let h = 0; h < H; h++) all[h] += w[(h * T + t) * T + t - 1]; }
    for (let t = start + 1; t <= start + len; t++) { ns++; for (let h = 0; h < H; h++) seg[h] += w[(h * T + t) * T + t - 1]; }
    for (let t = start + 1; t < start + 2 * len; t++) { ns2++; for (let h = 0; h < H; h++) seg2[h] += w[(h * T + t) * T + t - 1]; }
  }
  const sc = m.headScores(64);
  console.log(m.steps, 'acc', m.evaluate(256).accuracy.toFixed(2), 'all', all.map((x) => (x / na).toFixed(2)).join(' '), '| seg', seg.map((x) => (x / ns).toFixed(2)).join(' '), '| both', seg2.map((x) => (x / ns2).toFixed(2)).join(' '), '| ind', sc.slice(4).map((s) => s.induction.toFixed(2)).join(' '));
  m.step(100);
}
