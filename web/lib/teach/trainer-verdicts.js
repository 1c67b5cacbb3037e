// What the per-head metrics of a training snapshot say, in words: the verdict
// on each head, whether the model has specialised, and the sentences the
// trainer element shows about a run. No DOM: the element, the browser test and
// bench/training use the same rules.

import { fmt } from './format.js';
import { METRIC_EXAMPLES } from './trainer-session.js';

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

const offHeads = (enabled) => enabled.map((on, h) => (on ? -1 : h)).filter((h) => h >= 0);

/**
 * One run's line under its title: held-out accuracy, per relation, and when it specialised.
 * @param {object} s                one run of a snapshot
 * @param {{step: number}|null} specialisedAt
 */
export function runLineText(s, specialisedAt) {
  const rel = s.eval.relationAccuracy.map((a, r) => `relation ${r + 1} ${fmt(a, 3)}`).join(', ');
  return `Step ${s.step}: held-out accuracy ${fmt(s.eval.accuracy, 3)} (${rel}).` + (specialisedAt ? ` Specialised at step ${specialisedAt.step}.` : '');
}

/** What switching heads off did to one run ('' while every head is on). */
export function ablationText(s, running) {
  const off = offHeads(s.enabled);
  if (!off.length || !s.allOn) return '';
  return `Head${off.length > 1 ? 's' : ''} ${off.map((h) => h + 1).join(', ')} switched off: held-out accuracy ${fmt(s.eval.accuracy, 3)} ` +
    `(${fmt(s.allOn.accuracy, 3)} with every head on), loss ${fmt(s.eval.loss, 3)} (${fmt(s.allOn.loss, 3)}).` +
    (running ? ' Training goes on without it: the remaining heads can adapt.' : '');
}

/**
 * The summary sentence over every run: with two runs the held-out losses first, then per run
 * whether each relation has its own head, which heads are off, which blends or tracks.
 * '' before the first step.
 * @param {{numHeads: number, taskInfo: {relationNames: string[]}, specialisedAt: object|null}[]} runs
 * @param {{runs: object[]}} snapshot
 */
export function summaryText(runs, snapshot) {
  const s = snapshot;
  if (!s || !runs.length || s.runs[0].step === 0) return '';
  const parts = [];
  // Side by side, the held-out loss leads: it shows the cost of one blending head even when its
  // blend is still decodable and the accuracies look close.
  if (runs.length > 1) {
    parts.push(`Held-out loss ${runs.map((run, k) => `h = ${run.numHeads}: ${fmt(s.runs[k].eval.loss, 3)}`).join(', ')} (lower is better); ` +
      `held-out accuracy ${runs.map((run, k) => `${fmt(s.runs[k].eval.accuracy, 3)}`).join(' vs ')}.`);
  }
  runs.forEach((run, k) => {
    const r = s.runs[k];
    const names = run.taskInfo.relationNames;
    const verdicts = r.metrics.map((m, h) => headVerdict(m, names, { enabled: r.enabled[h], step: r.step }));
    const who = `With h = ${run.numHeads}`;
    const tracks = specialisation(r);
    const off = offHeads(r.enabled);
    const blend = verdicts.findIndex((v) => v.kind === 'blends');
    const tracking = verdicts.map((v, h) => (v.kind === 'tracks' ? `head ${h + 1} tracks relation ${v.relation + 1}` : null)).filter(Boolean);
    if (tracks) {
      const first = run.specialisedAt;
      parts.push(`${who}, each relation has its own head: ${tracks.map((t) => `head ${t.head + 1} → relation ${t.relation + 1}`).join(', ')}` +
        (first ? ` (first seen at step ${first.step}, after ${fmt(first.seconds, 1)} s of training).` : '.'));
    } else if (off.length) {
      parts.push(`${who}, head${off.length > 1 ? 's' : ''} ${off.map((h) => h + 1).join(', ')} switched off: held-out accuracy ${fmt(r.eval.accuracy, 3)}` +
        (r.allOn ? ` (${fmt(r.allOn.accuracy, 3)} with every head on).` : '.'));
    } else if (blend >= 0) {
      const shares = r.metrics[blend].relationShare.map((x) => fmt(x, 2)).join(' / ');
      parts.push(`${who}, head ${blend + 1} blends: averaged over ${METRIC_EXAMPLES} held-out examples, its one softmax puts ${shares} of its weight on the relation positions.`);
    } else if (tracking.length) {
      parts.push(`${who}, ${tracking.join(', ')}; ${new Set(verdicts.filter((v) => v.kind === 'tracks').map((v) => v.relation)).size < names.length ? 'not every relation has a head of its own yet' : `held-out accuracy is ${fmt(r.eval.accuracy, 3)}, not yet ${SPECIALISED_ACCURACY}`}.`);
    } else {
      parts.push(`${who}, no head has settled on a relation yet.`);
    }
  });
  return parts.join(' ');
}
