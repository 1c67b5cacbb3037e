// Head importance by ablation, without the DOM: for one text, how much the model's loss grows when
// each head is switched off, and when every head sharing a label (its strongest detector, as the
// explorer's grid names it) is switched off together. A group that matters while none of its heads
// does alone is redundancy: the heads share the job. A head that matters while no detector labels it
// does a job the attention-pattern scores do not see (it may copy by position, not by content): the
// loss names it where the grid cannot. Every number comes from the model's own runs.

import { DETECTORS, STRONG } from './explorer-controller.js';

/** A head or a group matters when switching it off costs at least this much (nats per token). */
export const GROUP_MATTERS = 0.1;
/** ...and is redundant when no single head of it costs more than this share of the group's cost. */
export const SHARE_ALONE = 0.25;

/**
 * Mean next-token cross-entropy (nats) over positions 0…T−2 from logits [T, V] row-major (raw logits
 * or log-probabilities: both go through a log-softmax here).
 */
export function meanLoss(logits, ids, V) {
  const T = ids.length;
  if (T < 2) return NaN;
  let total = 0;
  for (let t = 0; t < T - 1; t++) {
    const row = logits.subarray(t * V, (t + 1) * V);
    let max = -Infinity;
    for (let i = 0; i < V; i++) if (row[i] > max) max = row[i];
    let sum = 0;
    for (let i = 0; i < V; i++) sum += Math.exp(row[i] - max);
    total += max + Math.log(sum) - row[ids[t + 1]];
  }
  return total / (T - 1);
}

/** The label of a head as the grid gives it: its strongest detector when that reaches STRONG, else null. */
export function labelOf(score) {
  let best = null;
  for (const d of DETECTORS) {
    const v = score?.[d.key];
    if (Number.isFinite(v) && v >= STRONG && (!best || v > score[best])) best = d.key;
  }
  return best;
}

/**
 * @param {{ info: { numLayers: number, numHeads: number, vocabSize: number }, run: Function }} model
 *   a PretrainedModel or a LanguageModel: run(ids, { allLogits, ablate })
 * @param {string | Int32Array | number[]} textOrIds  at least 2 tokens
 * @param {{ scores?: Array<object> }} [o]  headScores()'s scores (layer-major), for the labels
 * @returns {Promise<{ ids: number[], loss: number,
 *   heads: Array<{layer, head, label, lossChange, matters, induction}>,
 *   groups: Array<{label, heads: Array<{layer, head}>, lossChange, largestAlone, redundant}>,
 *   unlabelled: Array<{layer, head, label, lossChange, matters, induction}> }>}
 *   heads ranked by lossChange, largest first (`induction`: the head's induction score from `scores`,
 *   NaN without one); groups for every label two or more heads share; `unlabelled`: the heads that
 *   matter (lossChange ≥ GROUP_MATTERS) while their scores, given, reach no detector's label, largest first
 */
export async function headImportance(model, textOrIds, { scores = [] } = {}) {
  const { numLayers: L, numHeads: H, vocabSize: V, kind } = model.info;
  if (kind === 'encoder') {
    throw new TypeError('headImportance: an encoder guesses masked words and has no next-token loss to measure; switch heads off and watch its fill instead');
  }
  const base = await model.run(textOrIds, { allLogits: true });
  const ids = Array.from(base.ids);
  if (ids.length < 2) throw new RangeError('headImportance: the text must have at least 2 tokens (a loss needs a next token)');
  const lossOf = async (ablate) => meanLoss((await model.run(ids, { allLogits: true, ablate })).logits, ids, V);
  const loss = meanLoss(base.logits, ids, V);
  const heads = [];
  for (let layer = 0; layer < L; layer++) {
    for (let head = 0; head < H; head++) {
      const score = scores.find((s) => s.layer === layer && s.head === head);
      const lossChange = (await lossOf([{ layer, head }])) - loss;
      heads.push({ layer, head, label: labelOf(score), lossChange, matters: lossChange >= GROUP_MATTERS,
        induction: Number.isFinite(score?.induction) ? score.induction : NaN });
    }
  }
  const groups = [];
  for (const d of DETECTORS) {
    const members = heads.filter((h) => h.label === d.key);
    if (members.length < 2) continue;
    const lossChange = (await lossOf(members.map(({ layer, head }) => ({ layer, head })))) - loss;
    const largestAlone = Math.max(...members.map((h) => h.lossChange));
    groups.push({
      label: d.key, heads: members.map(({ layer, head }) => ({ layer, head })), lossChange, largestAlone,
      redundant: lossChange >= GROUP_MATTERS && largestAlone <= SHARE_ALONE * lossChange,
    });
  }
  heads.sort((a, b) => b.lossChange - a.lossChange);
  const scored = (h) => scores.some((s) => s.layer === h.layer && s.head === h.head);
  return { ids, loss, heads, groups, unlabelled: heads.filter((h) => h.matters && !h.label && scored(h)) };
}
