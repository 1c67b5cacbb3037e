// The loss and accuracy charts of <headlab-language-model>: every run's held-out curve
// (and training-batch loss), the phase change marked, the plateau and the drop shaded
// (lm-controller.js's phaseSpans), the loss drawn from the uniform guess (ln V) down so
// the drop fills the chart; and the note that says where the phase change is. The
// figures are trainer-curves.js's; every number comes from the controller's runs.

import { el } from '../shared/render/dom.js';
import { fmt } from '../../lib/teach/format.js';
import { SERIES } from '../shared/render/charts.js';
import { curvesFigure } from '../shared/render/trainer-curves.js';
import { PHASE_ACCURACY, PLATEAU_ACCURACY, DROP_ACCURACY, phaseSpans } from '../../lib/teach/lm-controller.js';

/**
 * The two figures and what they say for screen readers.
 * @param {object[]} runs  the controller's runs ({ name, history, phase, below })
 * @param {{step: number, until: number, width: number, vocabularySize: number}} o  the step now, where the round ends,
 *   the chart width and the task's vocabulary size (for the uniform-guess loss)
 * @returns {{loss: {fig: object, label: string}, accuracy: {fig: object, label: string}}}
 */
export function lmCurves(runs, { step, until, width, vocabularySize }) {
  const compare = runs.length > 1;
  const prefix = (r) => (compare ? `${r.name}: ` : '');
  const series = (field, trainField) => runs.flatMap((r, k) => {
    const { color, dash } = SERIES[k % SERIES.length];
    const out = [];
    if (trainField) {
      out.push({ label: `${prefix(r)}training batch`, color, dash, width: 1.4, opacity: 0.45,
        points: r.history.filter((p) => p[trainField] !== null).map((p) => [p.step, p[trainField]]) });
    }
    out.push({ label: `${prefix(r)}held-out`, color, dash, width: 2.6, points: r.history.map((p) => [p.step, p[field]]) });
    return out;
  });
  const xMax = Math.min(Math.max(until, step), Math.max(200, step * 1.25));
  const marks = runs.filter((r) => r.phase).map((r) => ({ x: r.phase.step, label: `${prefix(r)}phase change` }));
  const now = (field, digits) => runs.map((r) => {
    const p = r.history[r.history.length - 1];
    return p ? `${prefix(r)}${fmt(p[field], digits)} at step ${p.step}` : '';
  }).join('; ');
  // The loss from the uniform guess (ln V) down to a little below the lowest loss yet, so the drop fills the chart.
  const uniform = Math.log(vocabularySize);
  const losses = runs.flatMap((r) => r.history.flatMap((p) => [p.evalLoss, p.trainLoss])).filter(Number.isFinite);
  const yMax = Math.ceil(uniform * 10) / 10 + 0.1;
  const yMin = Math.max(0, Math.min(yMax - 0.5, Math.floor((Math.min(...losses, yMax) - 0.1) * 5) / 5));
  const first = runs[0];
  const spanPair = first.below ? phaseSpans(first.history) : { plateau: null, drop: null };
  const spans = [spanPair.plateau && { x1: spanPair.plateau[0], x2: spanPair.plateau[1], label: 'plateau' },
    spanPair.drop && { x1: spanPair.drop[0], x2: spanPair.drop[1], label: 'drop' }].filter(Boolean);
  const spanText = spans.map((sp) => `${sp.label} from step ${sp.x1} to ${sp.x2}`).join(', ');
  return {
    loss: {
      fig: curvesFigure({ series: series('evalLoss', 'trainLoss'), yMin, yMax, xMax, marks, spans, width, yLabel: 'loss',
        yRef: { y: uniform, label: `uniform guess, ln ${vocabularySize} = ${fmt(uniform, 2)}` } }),
      label: `Loss curves from the uniform-guess loss ${fmt(uniform, 2)} down to ${fmt(yMin, 1)}. Held-out loss now ${now('evalLoss', 3)}.${spanText ? ` Shaded: ${spanText}.` : ''}`,
    },
    accuracy: {
      fig: curvesFigure({ series: series('accuracy'), yMin: 0, yMax: 1, xMax, marks, spans, width, yLabel: 'accuracy',
        yRef: { y: PHASE_ACCURACY, label: String(PHASE_ACCURACY) } }),
      label: `Task accuracy curves. Held-out accuracy now ${now('accuracy', 3)}.`,
    },
  };
}

/** What the note under the charts says about the first run's phase change (nodes for replaceChildren). */
export function phaseNote(r) {
  const defined = `The phase change is marked at the first evaluation where the held-out task accuracy reaches ${PHASE_ACCURACY}; ` +
    `shaded: the plateau (accuracy under ${PLATEAU_ACCURACY}) and the drop (until it reaches ${DROP_ACCURACY}). The loss chart starts at the loss of a uniform guess.`;
  if (r.phase) return [el('strong', {}, `Phase change at step ${r.phase.step}`), ` (after ${fmt(r.phase.seconds, 1)} s of training). ${defined}`];
  if (!r.below && r.history.length) {
    return [`This model was trained ahead of time, for ${r.history[0].step} steps: its phase change happened then, so it is not on these charts. Reset trains a new model from step 0, to watch it happen. ${defined}`];
  }
  return [`No phase change yet. ${defined}`];
}
