// The loss and accuracy charts of <headlab-language-model>: every run's held-out curve
// (and training-batch loss), the phase change marked, the plateau and the drop shaded
// (lm-controller.js's phaseSpans), the loss drawn from the uniform guess (ln V) down so
// the drop fills the chart; and the note that says where the phase change is. The
// figures are trainer-curves.js's; every number comes from the controller's runs. Words come
// from the element's message function `t`.

import { el } from '../shared/render/dom.js';
import { fixed } from '../../lib/i18n/index.js';
import { SERIES } from '../shared/render/charts.js';
import { curvesFigure } from '../shared/render/trainer-curves.js';
import { PHASE_ACCURACY, PLATEAU_ACCURACY, DROP_ACCURACY, phaseSpans } from '../../lib/teach/lm-controller.js';

/**
 * The two figures and what they say for screen readers.
 * @param {object[]} runs  the controller's runs ({ name, history, phase, below })
 * @param {{step: number, until: number, width: number, vocabularySize: number}} o  the step now, where the round ends,
 *   the chart width and the task's vocabulary size (for the uniform-guess loss)
 * @param {Function} t  the element's message function
 * @returns {{loss: {fig: object, label: string}, accuracy: {fig: object, label: string}}}
 */
export function lmCurves(runs, { step, until, width, vocabularySize }, t) {
  const fmt = (v, d) => fixed(t.lang, v, d);
  const compare = runs.length > 1;
  const named = (r, label) => (compare ? t('lm.curve.named', { name: t.plural('lm.layers', r.layers), label }) : label);
  const series = (field, trainField) => runs.flatMap((r, k) => {
    const { color, dash } = SERIES[k % SERIES.length];
    const out = [];
    if (trainField) {
      out.push({ label: named(r, t('lm.curve.batch')), color, dash, width: 1.4, opacity: 0.45,
        points: r.history.filter((p) => p[trainField] !== null).map((p) => [p.step, p[trainField]]) });
    }
    out.push({ label: named(r, t('lm.curve.heldOut')), color, dash, width: 2.6, points: r.history.map((p) => [p.step, p[field]]) });
    return out;
  });
  const xMax = Math.min(Math.max(until, step), Math.max(200, step * 1.25));
  const marks = runs.filter((r) => r.phase).map((r) => ({ x: r.phase.step, label: named(r, t('lm.curve.phase')) }));
  const now = (field, digits) => runs.map((r) => {
    const p = r.history[r.history.length - 1];
    return p ? named(r, t('lm.curve.now', { value: fmt(p[field], digits), step: p.step })) : '';
  }).join('; ');
  // The loss from the uniform guess (ln V) down to a little below the lowest loss yet, so the drop fills the chart.
  const uniform = Math.log(vocabularySize);
  const losses = runs.flatMap((r) => r.history.flatMap((p) => [p.evalLoss, p.trainLoss])).filter(Number.isFinite);
  const yMax = Math.ceil(uniform * 10) / 10 + 0.1;
  const yMin = Math.max(0, Math.min(yMax - 0.5, Math.floor((Math.min(...losses, yMax) - 0.1) * 5) / 5));
  const first = runs[0];
  const spanPair = first.below ? phaseSpans(first.history) : { plateau: null, drop: null };
  const spans = [spanPair.plateau && { x1: spanPair.plateau[0], x2: spanPair.plateau[1], label: t('lm.curve.plateau') },
    spanPair.drop && { x1: spanPair.drop[0], x2: spanPair.drop[1], label: t('lm.curve.drop') }].filter(Boolean);
  const spanText = spans.map((sp) => t('lm.curve.span', { label: sp.label, from: sp.x1, to: sp.x2 })).join(', ');
  const xLabel = t('training.step');
  const tick = (v) => String(v).replace('.', fmt(0.5, 1).charAt(1));
  return {
    loss: {
      fig: curvesFigure({ series: series('evalLoss', 'trainLoss'), yMin, yMax, xMax, marks, spans, width, xLabel, yLabel: t('lm.curve.loss'), tick,
        yRef: { y: uniform, label: t('lm.curve.uniform', { v: vocabularySize, loss: fmt(uniform, 2) }) } }),
      label: t('lm.curve.lossLabel', { uniform: fmt(uniform, 2), min: fmt(yMin, 1), now: now('evalLoss', 3) }) + (spanText ? t('lm.curve.shaded', { spans: spanText }) : ''),
    },
    accuracy: {
      fig: curvesFigure({ series: series('accuracy'), yMin: 0, yMax: 1, xMax, marks, spans, width, xLabel, yLabel: t('lm.curve.accuracy'), tick,
        yRef: { y: PHASE_ACCURACY, label: tick(PHASE_ACCURACY) } }),
      label: t('lm.curve.accuracyLabel', { now: now('accuracy', 3) }),
    },
  };
}

/** What the note under the charts says about the first run's phase change (nodes for replaceChildren). */
export function phaseNote(r, t) {
  const num = (v) => String(v).replace('.', fixed(t.lang, 0.5, 1).charAt(1));
  const defined = t('lm.phase.defined', { phase: num(PHASE_ACCURACY), plateau: num(PLATEAU_ACCURACY), drop: num(DROP_ACCURACY) });
  if (r.phase) return [el('strong', {}, t('lm.phase.at', { step: r.phase.step })), t('lm.phase.after', { seconds: fixed(t.lang, r.phase.seconds, 1), defined })];
  if (!r.below && r.history.length) return [t('lm.phase.ahead', { steps: r.history[0].step, defined })];
  return [t('lm.phase.notYet', { defined })];
}

/**
 * Every run's curve points as CSV (CRLF lines, a header row; empty cells for values not measured).
 * @param {object[]} runs  the controller's runs ({ layers, history })
 * @returns {string|null}  null before any run exists
 */
export function curvesCSV(runs) {
  if (!runs.length) return null;
  const lines = ['layers,step,training_loss,heldout_loss,task_accuracy,next_token_accuracy,heads_on,seconds'];
  const v = (x) => (x === null || x === undefined ? '' : String(x));
  for (const r of runs) {
    for (const p of r.history) lines.push([r.layers, p.step, v(p.trainLoss), v(p.evalLoss), v(p.accuracy), v(p.nextToken), p.headsOn, p.seconds].join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}
