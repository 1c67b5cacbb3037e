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

export const LIMITS = { tokens: 1024, dModel: 4096, numHeads: 256, tokenLength: 200, elements: 32e6, fileBytes: 64 * 2 ** 20 };

function kind(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `an array of length ${v.length}`;
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 30 ? `${v.slice(0, 30)}…` : v)}`;
  return `${typeof v === 'object' ? 'an object' : `${typeof v} ${String(v)}`}`;
}

/**
 * @returns {{ model: object|null, errors: string[] }} model has flat Float32Arrays
 *   query, key, wQ, wK, wV, wO (and biases), plus tokens, queryTokens, dims and names.
 */
export function validateModel(input) {
  const errors = [];
  const fail = (msg) => { errors.push(msg); };
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return { model: null, errors: [`The model must be a JSON object with tokens, X, numHeads, wQ, wK, wV; got ${kind(input)}.`] };
  }
  const allowed = new Set(['tokens', 'X', 'queryTokens', 'queryX', 'numHeads', 'dK', 'dV', 'wQ', 'wK', 'wV', 'wO',
    'bQ', 'bK', 'bV', 'bO', 'causal', 'name', 'headNames', 'dModel', 'description']);
  const unknown = Object.keys(input).filter((k) => !allowed.has(k));
  if (unknown.length) fail(`Unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => JSON.stringify(k)).join(', ')}; the fields are ${[...allowed].join(', ')}.`);

  const tokenList = (name, required) => {
    const t = input[name];
    if (t === undefined) { if (required) fail(`${name} is missing: a list of token strings.`); return null; }
    if (!Array.isArray(t)) { fail(`${name} must be an array of strings, got ${kind(t)}.`); return null; }
    if (t.length === 0) { fail(`${name} is empty: give at least one token.`); return null; }
    if (t.length > LIMITS.tokens) { fail(`${name} has ${t.length} tokens; the limit is ${LIMITS.tokens}.`); return null; }
    let ok = true;
    t.forEach((s, i) => {
      if (typeof s !== 'string') { if (ok) fail(`${name}[${i}] must be a string, got ${kind(s)}.`); ok = false; } else if (s.length > LIMITS.tokenLength) { if (ok) fail(`${name}[${i}] is ${s.length} characters long; the limit is ${LIMITS.tokenLength}.`); ok = false; }
    });
    return ok ? t.slice() : null;
  };
  const intField = (name, required) => {
    const v = input[name];
    if (v === undefined) { if (required) fail(`${name} is missing: a positive integer.`); return undefined; }
    if (!Number.isInteger(v) || v < 1) { fail(`${name} must be a positive integer, got ${kind(v)}.`); return null; }
    return v;
  };
  /** A rows×cols matrix of finite numbers; cols null = take from the first row. */
  const matrix = (name, rows, cols, meaning) => {
    const m = input[name];
    if (m === undefined) return undefined;
    if (!Array.isArray(m)) { fail(`${name} must be an array of rows (${meaning}), got ${kind(m)}.`); return null; }
    if (rows !== null && m.length !== rows) { fail(`${name} must have ${rows} rows (${meaning}), got ${m.length}.`); return null; }
    if (m.length === 0) { fail(`${name} has no rows.`); return null; }
    const width = cols ?? (Array.isArray(m[0]) ? m[0].length : -1);
    if (width < 1) { fail(`${name}[0] must be a non-empty array of numbers, got ${kind(m[0])}.`); return null; }
    const flat = new Float32Array(m.length * width);
    for (let r = 0; r < m.length; r++) {
      const row = m[r];
      if (!Array.isArray(row)) { fail(`${name}[${r}] must be an array of ${width} numbers, got ${kind(row)}.`); return null; }
      if (row.length !== width) { fail(`${name}[${r}] has ${row.length} numbers; every row of ${name} needs ${width} (${meaning}).`); return null; }
      for (let c = 0; c < width; c++) {
        const v = row[c];
        if (typeof v !== 'number' || !Number.isFinite(v)) { fail(`${name}[${r}][${c}] must be a finite number, got ${kind(v)}.`); return null; }
        flat[r * width + c] = v;
      }
    }
    return { flat, rows: m.length, cols: width };
  };
  const vector = (name, length, meaning) => {
    const v = input[name];
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.length !== length) { fail(`${name} must be an array of ${length} numbers (${meaning}), got ${kind(v)}.`); return null; }
    const bad = v.findIndex((x) => typeof x !== 'number' || !Number.isFinite(x));
    if (bad >= 0) { fail(`${name}[${bad}] must be a finite number, got ${kind(v[bad])}.`); return null; }
    return Float32Array.from(v);
  };

  const tokens = tokenList('tokens', true);
  const queryTokens = tokenList('queryTokens', false);
  const numHeads = intField('numHeads', true);
  if (numHeads > LIMITS.numHeads) fail(`numHeads is ${numHeads}; the limit is ${LIMITS.numHeads}.`);
  if (input.X === undefined) fail('X is missing: one row of numbers (the embedding) per token.');
  const X = matrix('X', tokens ? tokens.length : null, null, 'one row per token, d_model numbers each');
  if (X && tokens && X.rows !== tokens.length) fail(`X has ${X.rows} rows but tokens has ${tokens.length}: one embedding per token.`);
  const dModel = X ? X.cols : null;
  if (dModel && dModel > LIMITS.dModel) fail(`d_model (the width of X) is ${dModel}; the limit is ${LIMITS.dModel}.`);
  if (input.dModel !== undefined && dModel && input.dModel !== dModel) fail(`dModel is ${kind(input.dModel)} but the rows of X have ${dModel} numbers.`);
  let queryX = null;
  if (queryTokens) {
    if (input.queryX === undefined) fail('queryX is missing: with queryTokens, give one embedding row per query token.');
    else queryX = matrix('queryX', queryTokens.length, dModel, `one row per query token, d_model = ${dModel} numbers each`);
  } else if (input.queryX !== undefined) {
    fail('queryX is given without queryTokens: add the query tokens, one per row of queryX.');
  }
  const causal = input.causal;
  if (causal !== undefined && typeof causal !== 'boolean') fail(`causal must be true or false, got ${kind(causal)}.`);
  if (causal && queryTokens) fail('causal masking needs self-attention: remove causal or remove queryTokens/queryX.');

  let dK = intField('dK', false);
  let dV = intField('dV', false);
  if (errors.length === 0 && dModel && numHeads) {
    if (dK === undefined || dV === undefined) {
      if (dModel % numHeads !== 0) {
        fail(`numHeads = ${numHeads} does not divide d_model = ${dModel} (the width of X): give dK and dV, or pick a numHeads that divides ${dModel}.`);
      } else {
        dK = dK ?? dModel / numHeads;
        dV = dV ?? dModel / numHeads;
      }
    }
  }
  if (errors.length) return { model: null, errors };

  const hk = numHeads * dK, hv = numHeads * dV;
  const need = (name) => { if (input[name] === undefined) fail(`${name} is missing.`); };
  ['wQ', 'wK', 'wV'].forEach(need);
  const wQ = matrix('wQ', dModel, hk, `d_model = ${dModel} rows, numHeads·dK = ${numHeads}·${dK} = ${hk} columns`);
  const wK = matrix('wK', dModel, hk, `d_model = ${dModel} rows, numHeads·dK = ${hk} columns`);
  const wV = matrix('wV', dModel, hv, `d_model = ${dModel} rows, numHeads·dV = ${numHeads}·${dV} = ${hv} columns`);
  let wO = matrix('wO', hv, dModel, `numHeads·dV = ${hv} rows, d_model = ${dModel} columns`);
  if (wO === undefined) {
    if (hv !== dModel) fail(`wO is missing, and it can only default to the identity when numHeads·dV = d_model (here ${hv} ≠ ${dModel}).`);
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
      fail(`headNames must be an array of ${numHeads} strings (one per head), got ${kind(input.headNames)}.`);
    } else headNames = input.headNames.map((n) => n.slice(0, 60));
  }
  if (input.name !== undefined && typeof input.name !== 'string') fail(`name must be a string, got ${kind(input.name)}.`);
  const tQ = queryTokens ? queryTokens.length : tokens.length;
  if (numHeads * tQ * tokens.length + (tQ + tokens.length) * dModel > LIMITS.elements) {
    fail(`The model is too large to show: ${numHeads} heads × ${tQ} × ${tokens.length} weights; keep it under ${LIMITS.elements / 1e6} million numbers.`);
  }
  if (errors.length) return { model: null, errors };
  return {
    errors,
    model: {
      name: typeof input.name === 'string' ? input.name.slice(0, 120) : 'Your model',
      tokens, queryTokens: queryTokens ?? tokens, cross: Boolean(queryTokens),
      dModel, numHeads, dK, dV, causal: Boolean(causal), headNames,
      query: queryX ? queryX.flat : X.flat, key: X.flat,
      wQ: wQ.flat, wK: wK.flat, wV: wV.flat, wO: wO.flat, bQ, bK, bV, bO,
    },
  };
}

/** Parses JSON text and validates it; syntax errors are reported like the rest. */
export function parseModel(text) {
  if (text.length > LIMITS.fileBytes) return { model: null, errors: [`The file is ${(text.length / 2 ** 20).toFixed(1)} MB; the limit is ${LIMITS.fileBytes / 2 ** 20} MB.`] };
  let json;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { model: null, errors: [`The file is not valid JSON: ${e.message}`] };
  }
  return validateModel(json);
}
