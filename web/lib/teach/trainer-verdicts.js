// What the per-head metrics of a training snapshot say, in words: the verdict
// on each head, whether the model has specialised, and the sentences the
// trainer element shows about a run. No DOM: the element, the browser test and
// bench/training use the same rules. Words come from `t` (catalogues/trainer.js; English
// when not given), numbers in its language.

import { METRIC_EXAMPLES } from './trainer-session.js';
import { translator, fixed } from '../i18n/index.js';
import catalogue from '../i18n/catalogues/trainer.js';

const ENGLISH = translator(catalogue, 'en');

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
export function headVerdict(metric, relationNames, { enabled = true, step = 1 } = {}, t = ENGLISH) {
  const fmt = (v, d) => fixed(t.lang, v, d);
  if (!enabled) return { kind: 'off', tag: t('trainer.verdict.off'), text: t('trainer.verdict.offText') };
  if (step === 0) return { kind: 'untrained', tag: t('trainer.verdict.untrained'), text: t('trainer.verdict.untrainedText') };
  const shares = metric.relationShare;
  let best = 0;
  shares.forEach((s, i) => { if (s > shares[best]) best = i; });
  if (shares[best] >= TRACK_SHARE) {
    return { kind: 'tracks', relation: best, tag: t('trainer.verdict.tracks', { r: best + 1 }), text: t('trainer.verdict.tracksText', { name: relationNames[best], share: fmt(shares[best], 2) }) };
  }
  const strong = shares.map((s, i) => [s, i]).filter(([s]) => s >= BLEND_SHARE);
  if (strong.length >= 2) {
    const list = strong.map(([, i]) => i + 1);
    return { kind: 'blends', tag: t('trainer.verdict.blends', { list: list.slice(0, -1).join(', '), last: list[list.length - 1] }),
      text: t('trainer.verdict.blendsText', { shares: strong.map(([s]) => fmt(s, 2)).join(' / ') }) };
  }
  return { kind: 'none', tag: t('trainer.verdict.none'), text: t('trainer.verdict.noneText', { share: fmt(shares[best], 2) }) };
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
export function runLineText(s, specialisedAt, t = ENGLISH) {
  const fmt = (v, d) => fixed(t.lang, v, d);
  const relations = s.eval.relationAccuracy.map((a, r) => t('trainer.line.relation', { r: r + 1, accuracy: fmt(a, 3) })).join(', ');
  return t('trainer.line', { step: s.step, accuracy: fmt(s.eval.accuracy, 3), relations }) + (specialisedAt ? t('trainer.line.specialised', { step: specialisedAt.step }) : '');
}

/** What switching heads off did to one run ('' while every head is on). */
export function ablationText(s, running, t = ENGLISH) {
  const fmt = (v, d) => fixed(t.lang, v, d);
  const off = offHeads(s.enabled);
  if (!off.length || !s.allOn) return '';
  return t.plural('trainer.ablation', off.length, { heads: off.map((h) => h + 1).join(', '), accuracy: fmt(s.eval.accuracy, 3), allAccuracy: fmt(s.allOn.accuracy, 3),
    loss: fmt(s.eval.loss, 3), allLoss: fmt(s.allOn.loss, 3) }) + (running ? t('trainer.ablation.running') : '');
}

/**
 * The summary sentence over every run: with two runs the held-out losses first, then per run
 * whether each relation has its own head, which heads are off, which blends or tracks.
 * '' before the first step.
 * @param {{numHeads: number, taskInfo: {relationNames: string[]}, specialisedAt: object|null}[]} runs
 * @param {{runs: object[]}} snapshot
 */
export function summaryText(runs, snapshot, t = ENGLISH) {
  const fmt = (v, d) => fixed(t.lang, v, d);
  const s = snapshot;
  if (!s || !runs.length || s.runs[0].step === 0) return '';
  const parts = [];
  // Side by side, the held-out loss leads: it shows the cost of one blending head even when its
  // blend is still decodable and the accuracies look close.
  if (runs.length > 1) {
    parts.push(t('trainer.summary.losses', { losses: runs.map((run, k) => t('trainer.summary.loss', { h: run.numHeads, loss: fmt(s.runs[k].eval.loss, 3) })).join(', '),
      accuracies: runs.map((run, k) => fmt(s.runs[k].eval.accuracy, 3)).join(t('trainer.summary.vs')) }));
  }
  runs.forEach((run, k) => {
    const r = s.runs[k];
    const names = run.taskInfo.relationNames;
    const verdicts = r.metrics.map((m, h) => headVerdict(m, names, { enabled: r.enabled[h], step: r.step }, t));
    const who = t('trainer.summary.who', { h: run.numHeads });
    const tracks = specialisation(r);
    const off = offHeads(r.enabled);
    const blend = verdicts.findIndex((v) => v.kind === 'blends');
    const tracking = verdicts.map((v, h) => (v.kind === 'tracks' ? t('trainer.tracksWho', { head: h + 1, relation: v.relation + 1 }) : null)).filter(Boolean);
    if (tracks) {
      const first = run.specialisedAt;
      const list = tracks.map((x) => t('trainer.summary.arrow', { head: x.head + 1, relation: x.relation + 1 })).join(', ');
      parts.push(first ? t('trainer.summary.ownSince', { who, tracks: list, step: first.step, seconds: fmt(first.seconds, 1) }) : t('trainer.summary.own', { who, tracks: list }));
    } else if (off.length) {
      const heads = off.map((h) => h + 1).join(', ');
      parts.push(r.allOn ? t.plural('trainer.summary.offAll', off.length, { who, heads, accuracy: fmt(r.eval.accuracy, 3), allAccuracy: fmt(r.allOn.accuracy, 3) })
        : t.plural('trainer.summary.off', off.length, { who, heads, accuracy: fmt(r.eval.accuracy, 3) }));
    } else if (blend >= 0) {
      const shares = r.metrics[blend].relationShare.map((x) => fmt(x, 2)).join(' / ');
      parts.push(t('trainer.summary.blends', { who, head: blend + 1, n: METRIC_EXAMPLES, shares }));
    } else if (tracking.length) {
      const own = new Set(verdicts.filter((v) => v.kind === 'tracks').map((v) => v.relation)).size < names.length;
      parts.push(own ? t('trainer.summary.tracking', { who, tracking: tracking.join(', ') })
        : t('trainer.summary.trackingAcc', { who, tracking: tracking.join(', '), accuracy: fmt(r.eval.accuracy, 3), target: fmt(SPECIALISED_ACCURACY, 2) }));
    } else {
      parts.push(t('trainer.summary.none', { who }));
    }
  });
  return parts.join(' ');
}
