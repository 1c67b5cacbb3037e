// Checks a model (from a JSON file, an attribute URL or the `model` property)
// and turns it into the flat Float32Arrays the API takes. Every problem is
// reported with the field it concerns, what was expected and what was found.
//
// Format (matrices are arrays of rows):
//   tokens      string[]                 T tokens (self-attention), or the keys/values (cross-attention)
//   X           number[T][d_model]       their embeddings
//   queryTokens string[]  (optional)     cross-attention queries, e.g. decoder tokens
//   queryX      number[Tq][d_model]      their embeddings (required with queryTokens)
//   numHeads    integer ≥ 1
//   dK, dV      integers (optional)      default d_model / numHeads
//   wQ, wK      number[d_model][numHeads·dK]   head i in columns i·dK … (i+1)·dK−1
//   wV          number[d_model][numHeads·dV]
//   wO          number[numHeads·dV][d_model]   optional when numHeads·dV = d_model (identity)
//   bQ, bK, bV, bO  number[] (optional)  lengths numHeads·dK, numHeads·dK, numHeads·dV, d_model
//   causal      boolean (optional)       self-attention only
//   name        string (optional), headNames string[numHeads] (optional)

import { translator } from '../i18n/index.js';
import messages from '../i18n/catalogues/model-file.js';

const english = translator(messages, 'en');

export const LIMITS = { tokens: 1024, dModel: 4096, numHeads: 256, tokenLength: 200, elements: 32e6, fileBytes: 64 * 2 ** 20 };

function kind(v, t) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return t('model.kind.array', { n: v.length });
  if (typeof v === 'string') return t('model.kind.string', { value: JSON.stringify(v.length > 30 ? `${v.slice(0, 30)}…` : v) });
  return typeof v === 'object' ? t('model.kind.object') : `${typeof v} ${String(v)}`;
}

/**
 * @param {object} input the model
 * @param {Function} [t] message function (web/lib/i18n) for the errors' language; English by default
 * @returns {{ model: object|null, errors: string[] }} model has flat Float32Arrays
 *   query, key, wQ, wK, wV, wO (and biases), plus tokens, queryTokens, dims and names.
 */
export function validateModel(input, t = english) {
  const errors = [];
  const fail = (msg) => { errors.push(msg); };
  const kindOf = (v) => kind(v, t);
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return { model: null, errors: [t('model.notObject', { kind: kindOf(input) })] };
  }
  const allowed = new Set(['tokens', 'X', 'queryTokens', 'queryX', 'numHeads', 'dK', 'dV', 'wQ', 'wK', 'wV', 'wO',
    'bQ', 'bK', 'bV', 'bO', 'causal', 'name', 'headNames', 'dModel', 'description']);
  const unknown = Object.keys(input).filter((k) => !allowed.has(k));
  if (unknown.length) fail(t.plural('model.unknown', unknown.length, { list: unknown.map((k) => JSON.stringify(k)).join(', '), fields: [...allowed].join(', ') }));

  const tokenList = (name, required) => {
    const list = input[name];
    if (list === undefined) { if (required) fail(t('model.tokens.missing', { name })); return null; }
    if (!Array.isArray(list)) { fail(t('model.tokens.notArray', { name, kind: kindOf(list) })); return null; }
    if (list.length === 0) { fail(t('model.tokens.empty', { name })); return null; }
    if (list.length > LIMITS.tokens) { fail(t('model.tokens.tooMany', { name, n: list.length, limit: LIMITS.tokens })); return null; }
    let ok = true;
    list.forEach((s, i) => {
      if (typeof s !== 'string') { if (ok) fail(t('model.tokens.notString', { name, i, kind: kindOf(s) })); ok = false; } else if (s.length > LIMITS.tokenLength) { if (ok) fail(t('model.tokens.tooLong', { name, i, n: s.length, limit: LIMITS.tokenLength })); ok = false; }
    });
    return ok ? list.slice() : null;
  };
  const intField = (name, required) => {
    const v = input[name];
    if (v === undefined) { if (required) fail(t('model.int.missing', { name })); return undefined; }
    if (!Number.isInteger(v) || v < 1) { fail(t('model.int.bad', { name, kind: kindOf(v) })); return null; }
    return v;
  };
  /** A rows×cols matrix of finite numbers; cols null = take from the first row. */
  const matrix = (name, rows, cols, meaning) => {
    const m = input[name];
    if (m === undefined) return undefined;
    if (!Array.isArray(m)) { fail(t('model.matrix.notArray', { name, meaning, kind: kindOf(m) })); return null; }
    if (rows !== null && m.length !== rows) { fail(t('model.matrix.rows', { name, rows, meaning, n: m.length })); return null; }
    if (m.length === 0) { fail(t('model.matrix.noRows', { name })); return null; }
    const width = cols ?? (Array.isArray(m[0]) ? m[0].length : -1);
    if (width < 1) { fail(t('model.matrix.firstRow', { name, kind: kindOf(m[0]) })); return null; }
    const flat = new Float32Array(m.length * width);
    for (let r = 0; r < m.length; r++) {
      const row = m[r];
      if (!Array.isArray(row)) { fail(t('model.matrix.rowNotArray', { name, r, width, kind: kindOf(row) })); return null; }
      if (row.length !== width) { fail(t('model.matrix.rowLength', { name, r, n: row.length, width, meaning })); return null; }
      for (let c = 0; c < width; c++) {
        const v = row[c];
        if (typeof v !== 'number' || !Number.isFinite(v)) { fail(t('model.number', { name, r, c, kind: kindOf(v) })); return null; }
        flat[r * width + c] = v;
      }
    }
    return { flat, rows: m.length, cols: width };
  };
  const vector = (name, length, meaning) => {
    const v = input[name];
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.length !== length) { fail(t('model.vector.bad', { name, length, meaning, kind: kindOf(v) })); return null; }
    const bad = v.findIndex((x) => typeof x !== 'number' || !Number.isFinite(x));
    if (bad >= 0) { fail(t('model.vector.number', { name, i: bad, kind: kindOf(v[bad]) })); return null; }
    return Float32Array.from(v);
  };

  const tokens = tokenList('tokens', true);
  const queryTokens = tokenList('queryTokens', false);
  const numHeads = intField('numHeads', true);
  if (numHeads > LIMITS.numHeads) fail(t('model.numHeads.limit', { n: numHeads, limit: LIMITS.numHeads }));
  if (input.X === undefined) fail(t('model.X.missing'));
  const X = matrix('X', tokens ? tokens.length : null, null, t('model.X.meaning'));
  if (X && tokens && X.rows !== tokens.length) fail(t('model.X.rows', { rows: X.rows, n: tokens.length }));
  const dModel = X ? X.cols : null;
  if (dModel && dModel > LIMITS.dModel) fail(t('model.dModel.limit', { n: dModel, limit: LIMITS.dModel }));
  if (input.dModel !== undefined && dModel && input.dModel !== dModel) fail(t('model.dModel.mismatch', { kind: kindOf(input.dModel), n: dModel }));
  let queryX = null;
  if (queryTokens) {
    if (input.queryX === undefined) fail(t('model.queryX.missing'));
    else queryX = matrix('queryX', queryTokens.length, dModel, t('model.queryX.meaning', { dModel }));
  } else if (input.queryX !== undefined) {
    fail(t('model.queryX.alone'));
  }
  const causal = input.causal;
  if (causal !== undefined && typeof causal !== 'boolean') fail(t('model.causal.bad', { kind: kindOf(causal) }));
  if (causal && queryTokens) fail(t('model.causal.cross'));

  let dK = intField('dK', false);
  let dV = intField('dV', false);
  if (errors.length === 0 && dModel && numHeads) {
    if (dK === undefined || dV === undefined) {
      if (dModel % numHeads !== 0) {
        fail(t('model.divide', { numHeads, dModel }));
      } else {
        dK = dK ?? dModel / numHeads;
        dV = dV ?? dModel / numHeads;
      }
    }
  }
  if (errors.length) return { model: null, errors };

  const hk = numHeads * dK, hv = numHeads * dV;
  const need = (name) => { if (input[name] === undefined) fail(t('model.missing', { name })); };
  ['wQ', 'wK', 'wV'].forEach(need);
  const wQ = matrix('wQ', dModel, hk, t('model.wQ.meaning', { dModel, numHeads, dK, hk }));
  const wK = matrix('wK', dModel, hk, t('model.wK.meaning', { dModel, hk }));
  const wV = matrix('wV', dModel, hv, t('model.wV.meaning', { dModel, numHeads, dV, hv }));
  let wO = matrix('wO', hv, dModel, t('model.wO.meaning', { hv, dModel }));
  if (wO === undefined) {
    if (hv !== dModel) fail(t('model.wO.missing', { hv, dModel }));
    else {
      const flat = new Float32Array(dModel * dModel);
      for (let i = 0; i < dModel; i++) flat[i * dModel + i] = 1;
      wO = { flat, rows: dModel, cols: dModel };
    }
  }
  const bQ = vector('bQ', hk, 'numHeads·dK'), bK = vector('bK', hk, 'numHeads·dK');
  const bV = vector('bV', hv, 'numHeads·dV'), bO = vector('bO', dModel, 'd_model');
  let headNames = null;
  if (input.headNames !== undefined) {
    if (!Array.isArray(input.headNames) || input.headNames.length !== numHeads || input.headNames.some((n) => typeof n !== 'string')) {
      fail(t('model.headNames', { n: numHeads, kind: kindOf(input.headNames) }));
    } else headNames = input.headNames.map((n) => n.slice(0, 60));
  }
  if (input.name !== undefined && typeof input.name !== 'string') fail(t('model.name', { kind: kindOf(input.name) }));
  const tQ = queryTokens ? queryTokens.length : tokens.length;
  if (numHeads * tQ * tokens.length + (tQ + tokens.length) * dModel > LIMITS.elements) {
    fail(t('model.tooLarge', { heads: numHeads, tQ, tK: tokens.length, millions: LIMITS.elements / 1e6 }));
  }
  if (errors.length) return { model: null, errors };
  return {
    errors,
    model: {
      name: typeof input.name === 'string' ? input.name.slice(0, 120) : t('model.yours'),
      tokens, queryTokens: queryTokens ?? tokens, cross: Boolean(queryTokens),
      dModel, numHeads, dK, dV, causal: Boolean(causal), headNames,
      query: queryX ? queryX.flat : X.flat, key: X.flat,
      wQ: wQ.flat, wK: wK.flat, wV: wV.flat, wO: wO.flat, bQ, bK, bV, bO,
    },
  };
}

/** Parses JSON text and validates it; syntax errors are reported like the rest (in the words of `t`, English by default). */
export function parseModel(text, t = english) {
  if (text.length > LIMITS.fileBytes) return { model: null, errors: [t('model.file.tooLarge', { size: (text.length / 2 ** 20).toFixed(1), limit: LIMITS.fileBytes / 2 ** 20 })] };
  let json;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { model: null, errors: [t('model.file.json', { message: e.message })] };
  }
  return validateModel(json, t);
}
