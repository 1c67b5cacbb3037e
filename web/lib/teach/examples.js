// Built-in examples, as models in the format <headlab-heads> reads from JSON:
// matrices are arrays of rows; wQ/wK are [d_model][h·d_k] with head i in
// columns i·d_k … (i+1)·d_k−1, wV is [d_model][h·d_v], wO is [h·d_v][d_model].

import { rng } from './random.js';

const THIRD = 1 / 3;

/** The course's worked example, per head (as the worked-example element edits it). */
export const COURSE_EXAMPLE = {
  x: [[3, 0, 0, 1], [0, 3, 0, 1], [1, 1, 0, 1]],
  heads: [
    { q: [[1, 0], [0, 0], [0, 0], [0, 1]], k: [[1, 0], [0, 0], [0, 0], [0, 1]], v: [[THIRD, 0], [0, THIRD], [0, 0], [0, 0]] },
    { q: [[0, 0], [1, 0], [0, 0], [0, 1]], k: [[0, 0], [1, 0], [0, 0], [0, 1]], v: [[THIRD, 0], [0, THIRD], [0, 0], [0, 0]] },
  ],
  wO: [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
};

/** Joins per-head [d][w] matrices side by side into [d][h·w]. */
export function joinHeads(perHead) {
  return perHead[0].map((_, r) => perHead.flatMap((m) => m[r]));
}

export function workedModel() {
  const heads = COURSE_EXAMPLE.heads;
  return {
    name: 'The course’s worked example',
    tokens: ['ball', 'full', 'it'],
    X: COURSE_EXAMPLE.x,
    numHeads: 2,
    wQ: joinHeads(heads.map((h) => h.q)),
    wK: joinHeads(heads.map((h) => h.k)),
    wV: joinHeads(heads.map((h) => h.v)),
    wO: COURSE_EXAMPLE.wO,
    headNames: ['coreference-leaning', 'modifier-leaning'],
  };
}

/**
 * Cross-attention toy: French decoder queries over English encoder keys.
 * Embedding = one-hot meaning (6) ++ one-hot position (6). Head 1 compares
 * meanings, head 2 positions.
 */
export function crossModel() {
  const enc = [['the', 0], ['cat', 1], ['sat', 2], ['on', 3], ['the', 0], ['mat', 4]];
  const dec = [['le', 0], ['chat', 1], ['s’est', 2], ['assis', 2], ['sur', 3], ['le', 0], ['tapis', 4]];
  const embed = ([, meaning], pos) => {
    const v = new Array(12).fill(0);
    v[meaning] = 1;
    v[6 + Math.min(pos, 5)] = 1;
    return v;
  };
  const scale = 2.5;
  const w = Array.from({ length: 12 }, (_, r) => Array.from({ length: 12 }, (_, c) => (r === c ? scale : 0)));
  const identity = Array.from({ length: 12 }, (_, r) => Array.from({ length: 12 }, (_, c) => (r === c ? 1 : 0)));
  return {
    name: 'Cross-attention: a French decoder reading an English encoder',
    tokens: enc.map(([t]) => t),
    X: enc.map(embed),
    queryTokens: dec.map(([t]) => t),
    queryX: dec.map(embed),
    numHeads: 2,
    wQ: w, wK: w, wV: identity, wO: identity,
    headNames: ['meaning', 'position'],
  };
}

/** FNV-1a hash of a string, for token-dependent embeddings. */
function hash(text) {
  let h = 0x811c9dc5;
  for (const ch of text) {
    h ^= ch.codePointAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * An untrained layer with random weights: same token, same embedding, plus a
 * small position signal. Weights N(0, 1/d), seeded.
 */
export function randomModel({ tokens, dModel = 16, numHeads = 4, seed = 1 }) {
  const X = tokens.map((t, pos) => {
    const g = rng(hash(t.toLowerCase()));
    return Array.from({ length: dModel }, (_, i) => {
      const angle = pos / 10000 ** ((2 * Math.floor(i / 2)) / dModel);
      return g.normal() + 0.5 * (i % 2 === 0 ? Math.sin(angle) : Math.cos(angle));
    });
  });
  const g = rng(seed * 7919 + 17);
  const s = 1 / Math.sqrt(dModel);
  const mat = (rows, cols) => Array.from({ length: rows }, () => Array.from({ length: cols }, () => s * g.normal()));
  return {
    name: `An untrained layer with random weights (seed ${seed})`,
    tokens: tokens.slice(),
    X,
    numHeads,
    wQ: mat(dModel, dModel), wK: mat(dModel, dModel), wV: mat(dModel, dModel),
    wO: Array.from({ length: dModel }, (_, r) => Array.from({ length: dModel }, (_, c) => (r === c ? 1 : 0))),
  };
}
