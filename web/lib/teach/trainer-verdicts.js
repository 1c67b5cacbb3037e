// What the per-head metrics of a training snapshot say, in words: the verdict
// on each head and whether the model has specialised. No DOM: the element, the
// browser test and bench/training use the same rules.

import { fmt } from './format.js';

/** A head "tracks" a relation when this share of its query-row weight is on that relation's position. */
export const TRACK_SHARE = 0.7;
/** A head "blends" relations when at least two get this share each. */
export const BLEND_SHARE = 0.2;
/** Specialised = every relation tracked by its own head and held-out accuracy at least this. */
export const SPECIALISED_ACCURACY = 0.99;

/**
 * The verdict on one head: tracks one relation, blends several, neither yet, switched off or untrained.
 * @param {{relationShare: number[]}} metric  one entry of trainer.headMetrics()
 * @param {string[]} relationNames            taskInfo().relationNames
 * @returns {{kind: 'tracks'|'blends'|'none'|'off'|'untrained', tag: string, text: string, relation?: number}}
 */
export function headVerdict(metric, relationNames, { enabled = true, step = 1 } = {}) {
  if (!enabled) return { kind: 'off', tag: 'Switched off', text: 'its output is zeroed before W^O' };
  if (step === 0) return { kind: 'untrained', tag: 'Untrained', text: 'random weights, nearly even attention' };
  const shares = metric.relationShare;
  let best = 0;
  shares.forEach((s, i) => { if (s > shares[best]) best = i; });
  if (shares[best] >= TRACK_SHARE) {
    return { kind: 'tracks', relation: best, tag: `Tracks relation ${best + 1}`, text: `${relationNames[best]}, ${fmt(shares[best], 2)} of its weight` };
  }
  const strong = shares.map((s, i) => [s, i]).filter(([s]) => s >= BLEND_SHARE);
  if (strong.length >= 2) {
    const list = strong.map(([, i]) => i + 1);
    return { kind: 'blends', tag: `Blends relations ${list.slice(0, -1).join(', ')} and ${list[list.length - 1]}`,
      text: `${strong.map(([s]) => fmt(s, 2)).join(' / ')} of its weight: one softmax split between them` };
  }
  return { kind: 'none', tag: 'No relation yet', text: `at most ${fmt(shares[best], 2)} of its weight on any relation position` };
}

/**
 * Which head tracks each relation, when every relation has its own switched-on
 * head and held-out accuracy is at least SPECIALISED_ACCURACY; else null.
 * @param {{eval: {accuracy: number}, metrics: {relationShare: number[]}[], enabled: boolean[]}} run  one run of a snapshot
 */
export function specialisation(run) {
  const R = run.metrics[0]?.relationShare.length ?? 0;
  if (!R || run.eval.accuracy < SPECIALISED_ACCURACY) return null;
  const tracks = [];
  for (let r = 0; r < R; r++) {
    const head = run.metrics.findIndex((m, h) => run.enabled[h] && m.relationShare[r] >= TRACK_SHARE);
    if (head < 0) return null;
    tracks.push({ relation: r, head });
  }
  return tracks;
}
