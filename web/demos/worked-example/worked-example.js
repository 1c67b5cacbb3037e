// Worked example: multi-head attention on "ball full it" with two heads,
// computed by the HeadLab WebAssembly module on every edit.
// All DOM is built with createElement/textContent; nothing derived from input
// ever goes through innerHTML.

import { createHeadlab } from '../../lib/headlab.js';

const TOKENS = ['ball', 'full', 'it'];
const FEATURES = ['entity-ness', 'adjective-ness', 'number/verb-ness', 'bias'];
const FEATURES_SHORT = ['entity', 'adjective', 'number/verb', 'bias'];
const D_MODEL = 4;
const NUM_HEADS = 2;
const D_K = 2;
const D_V = 2;
const T = TOKENS.length;
const QUERY_ROW = 2;  // "it"
const PROJECTIONS = [
  { key: 'q', letter: 'Q', what: 'query' },
  { key: 'k', letter: 'K', what: 'key' },
  { key: 'v', letter: 'V', what: 'value' },
];

const THIRD = 1 / 3;
/** The course's numbers. Matrices are arrays of rows. */
const COURSE_EXAMPLE = {
  x: [
    [3, 0, 0, 1],
    [0, 3, 0, 1],
    [1, 1, 0, 1],
  ],
  heads: [
    {
      q: [[1, 0], [0, 0], [0, 0], [0, 1]],
      k: [[1, 0], [0, 0], [0, 0], [0, 1]],
      v: [[THIRD, 0], [0, THIRD], [0, 0], [0, 0]],
    },
    {
      q: [[0, 0], [1, 0], [0, 0], [0, 1]],
      k: [[0, 0], [1, 0], [0, 0], [0, 1]],
      v: [[THIRD, 0], [0, THIRD], [0, 0], [0, 0]],
    },
  ],
  wO: [
    [1, 0, 0, 0],
    [0, 1, 0, 0],
    [0, 0, 1, 0],
    [0, 0, 0, 1],
  ],
};

// ---------------------------------------------------------------- DOM helpers

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') node.className = value;
    else if (name === 'dataset') Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

/** A matrix symbol such as W_1^Q, as <var>W</var><sub>1</sub><sup>Q</sup>. */
function symbol(name, sub, sup) {
  return el('span', { class: 'math' },
    el('var', {}, name),
    sub !== undefined ? el('sub', {}, String(sub)) : null,
    sup !== undefined ? el('sup', {}, String(sup)) : null);
}

function queryRowHeader(label, isQuery) {
  const th = el('th', { scope: 'row' }, label);
  if (isQuery) th.append(el('span', { class: 'query-tag' }, '(query)'));
  return th;
}

/** 4 decimals; tiny values print as 0.0000 rather than -0.0000. */
function format(value) {
  const v = Math.abs(value) < 5e-5 ? 0 : value;
  return v.toFixed(4);
}

// ------------------------------------------------------------------- inputs

/** Every editable cell, keyed by id, with a description for error messages. */
const cells = new Map();

/**
 * A table of number inputs.
 * @param {object} o
 * @param {Node|string} o.caption
 * @param {string} o.idPrefix    input ids are `${idPrefix}-${row}-${col}`
 * @param {string[]} o.rowLabels
 * @param {string[]} o.colLabels
 * @param {(r: number, c: number) => string} o.describe  accessible name of a cell
 * @param {number} [o.highlightRow]
 */
function inputTable({ caption, idPrefix, rowLabels, colLabels, describe, highlightRow = -1 }) {
  const table = el('table', { class: 'matrix', dataset: { testid: `${idPrefix}-table` } },
    el('caption', {}, caption),
    el('thead', {}, el('tr', {}, el('td', {}), colLabels.map((label) => el('th', { scope: 'col' }, label)))));
  const body = el('tbody');
  rowLabels.forEach((rowLabel, r) => {
    const tr = el('tr', { class: r === highlightRow ? 'is-query' : undefined }, queryRowHeader(rowLabel, r === highlightRow));
    colLabels.forEach((_, c) => {
      const id = `${idPrefix}-${r}-${c}`;
      const label = describe(r, c);
      const input = el('input', {
        type: 'number', step: 'any', inputmode: 'decimal', id, name: id, class: 'cell',
        'aria-label': label,
      });
      cells.set(id, { input, label });
      tr.append(el('td', { class: 'input-cell' }, input));
    });
    body.append(tr);
  });
  table.append(body);
  return el('div', { class: 'table-scroll' }, table);
}

function buildInputs() {
  document.getElementById('embeddings').append(inputTable({
    caption: el('span', {}, 'Embeddings ', el('span', { class: 'muted' }, '(3 tokens × 4 features)')),
    idPrefix: 'x',
    rowLabels: TOKENS,
    colLabels: FEATURES.map((f) => f.replace('/', '/\u200b')),  // may break after the slash
    describe: (r, c) => `Embedding of "${TOKENS[r]}", ${FEATURES[c]}`,
    highlightRow: QUERY_ROW,
  }));

  const heads = document.getElementById('heads');
  for (let h = 0; h < NUM_HEADS; h++) {
    const card = el('div', { class: 'card', dataset: { testid: `head-${h + 1}-inputs` } },
      el('h4', {}, `Head ${h + 1}`));
    const row = el('div', { class: 'matrices' });
    for (const p of PROJECTIONS) {
      row.append(inputTable({
        caption: el('span', {}, symbol('W', h + 1, p.letter), el('span', { class: 'muted' }, ` ${p.what}`)),
        idPrefix: `w${p.key}-${h + 1}`,
        rowLabels: FEATURES_SHORT,
        colLabels: ['1', '2'],
        describe: (r, c) => `Head ${h + 1} W${p.letter} (${p.what} projection), row ${FEATURES_SHORT[r]}, column ${c + 1}`,
      }));
    }
    card.append(row);
    heads.append(card);
  }

  const concatLabels = [];
  const concatNames = [];
  for (let h = 0; h < NUM_HEADS; h++) {
    for (let c = 0; c < D_V; c++) {
      concatLabels.push(`h${h + 1} · ${c + 1}`);
      concatNames.push(`head ${h + 1} dimension ${c + 1}`);
    }
  }
  document.getElementById('output-projection').append(inputTable({
    caption: el('span', {}, symbol('W', undefined, 'O'), el('span', { class: 'muted' }, ' (4 × 4)')),
    idPrefix: 'wo',
    rowLabels: concatLabels,
    colLabels: ['out 1', 'out 2', 'out 3', 'out 4'],
    describe: (r, c) => `WO (output projection), row ${concatNames[r]}, column out ${c + 1}`,
  }));
}

function setInputs(example) {
  const set = (id, value) => {
    const { input } = cells.get(id);
    input.value = String(value);  // 1/3 goes in at full double precision
    input.removeAttribute('aria-invalid');
  };
  example.x.forEach((row, r) => row.forEach((v, c) => set(`x-${r}-${c}`, v)));
  example.heads.forEach((head, h) => {
    for (const p of PROJECTIONS) head[p.key].forEach((row, r) => row.forEach((v, c) => set(`w${p.key}-${h + 1}-${r}-${c}`, v)));
  });
  example.wO.forEach((row, r) => row.forEach((v, c) => set(`wo-${r}-${c}`, v)));
}

/** Reads one cell; an empty or non-numeric cell reads as NaN (valueAsNumber). */
function read(id) {
  const { input } = cells.get(id);
  const value = input.valueAsNumber;
  if (Number.isFinite(value)) input.removeAttribute('aria-invalid');
  else input.setAttribute('aria-invalid', 'true');
  return value;
}

/** Reads the form into the API's flat row-major layout. */
function readOptions() {
  const query = new Float32Array(T * D_MODEL);
  for (let r = 0; r < T; r++) for (let c = 0; c < D_MODEL; c++) query[r * D_MODEL + c] = read(`x-${r}-${c}`);
  // wQ, wK: [dModel, numHeads*dK], head h in columns h*dK .. (h+1)*dK-1; wV likewise with dV.
  const combined = (key, width) => {
    const m = new Float32Array(D_MODEL * NUM_HEADS * width);
    for (let h = 0; h < NUM_HEADS; h++) {
      for (let r = 0; r < D_MODEL; r++) {
        for (let c = 0; c < width; c++) m[r * NUM_HEADS * width + h * width + c] = read(`w${key}-${h + 1}-${r}-${c}`);
      }
    }
    return m;
  };
  const wO = new Float32Array(NUM_HEADS * D_V * D_MODEL);
  for (let r = 0; r < NUM_HEADS * D_V; r++) for (let c = 0; c < D_MODEL; c++) wO[r * D_MODEL + c] = read(`wo-${r}-${c}`);
  return {
    query, dModel: D_MODEL, numHeads: NUM_HEADS, dK: D_K, dV: D_V,
    wQ: combined('q', D_K), wK: combined('k', D_K), wV: combined('v', D_V), wO,
    returnWeights: true, returnIntermediates: true,
  };
}

// ------------------------------------------------------------------ results

/**
 * A results table whose cells are filled by `update(flat)`; `update(null)` shows dashes.
 * `flat` holds rows*cols numbers starting at `offset`.
 */
function resultTable({ caption, rowLabels, colLabels, testid, rowTestid, weights = false }) {
  const table = el('table', { class: 'matrix', dataset: { testid } },
    el('caption', {}, caption),
    el('thead', {}, el('tr', {}, el('td', {}), colLabels.map((label) => el('th', { scope: 'col' }, label)))));
  const body = el('tbody');
  const tds = [];
  rowLabels.forEach((rowLabel, r) => {
    const isQuery = r === QUERY_ROW;
    const tr = el('tr', {
      class: isQuery ? 'is-query' : undefined,
      dataset: isQuery && rowTestid ? { testid: rowTestid } : undefined,
    }, queryRowHeader(rowLabel, isQuery));
    const rowTds = colLabels.map(() => el('td', { class: weights ? 'num weight' : 'num' }, '—'));
    tr.append(...rowTds);
    tds.push(rowTds);
    body.append(tr);
  });
  table.append(body);
  const wrapper = el('div', { class: 'table-scroll' }, table);
  wrapper.update = (flat, offset = 0) => {
    tds.forEach((rowTds, r) => rowTds.forEach((td, c) => {
      if (!flat) {
        td.textContent = '—';
        td.style.removeProperty('--w');
        return;
      }
      const v = flat[offset + r * colLabels.length + c];
      td.textContent = format(v);
      if (weights) td.style.setProperty('--w', String(Math.min(1, Math.max(0, v))));
    }));
  };
  return wrapper;
}

const views = [];  // { table, pick(result) => [flat, offset] }

function addView(parent, table, pick) {
  parent.append(table);
  views.push({ table, pick });
}

function buildResults() {
  const weightsGrid = document.getElementById('weights');
  const headOutputsGrid = document.getElementById('head-outputs');
  const finalGrid = document.getElementById('final');
  const tq = T * T;

  for (let h = 0; h < NUM_HEADS; h++) {
    const card = el('div', { class: 'card' }, el('h4', {}, `Head ${h + 1}`));
    addView(card, resultTable({
      caption: el('span', {}, 'Attention weights ', el('span', { class: 'muted' }, `(head ${h + 1})`)),
      rowLabels: TOKENS, colLabels: TOKENS, weights: true,
      testid: `weights-table-head-${h + 1}`, rowTestid: `weights-head-${h + 1}`,
    }), (r) => [r.weights, h * tq]);

    const steps = el('details', { class: 'steps' }, el('summary', {}, `Intermediate steps of head ${h + 1}`));
    const stepGrid = el('div', { class: 'matrices' });
    const perToken = (name, sub, width, pickName, what) => addView(stepGrid, resultTable({
      caption: el('span', {}, symbol(name, sub), el('span', { class: 'muted' }, ` ${what}`)),
      rowLabels: TOKENS, colLabels: Array.from({ length: width }, (_, c) => String(c + 1)),
      testid: `${pickName}-head-${h + 1}`,
    }), (r) => [r.intermediates[pickName], h * T * width]);
    perToken('Q', h + 1, D_K, 'q', 'queries');
    perToken('K', h + 1, D_K, 'k', 'keys');
    perToken('V', h + 1, D_V, 'v', 'values');
    addView(stepGrid, resultTable({
      caption: el('span', {}, 'Scores ÷ √', el('var', {}, 'd'), el('sub', {}, 'k')),
      rowLabels: TOKENS, colLabels: TOKENS, testid: `scaled-scores-head-${h + 1}`,
    }), (r) => [r.intermediates.scaledScores, h * tq]);
    steps.append(stepGrid);
    card.append(steps);
    weightsGrid.append(card);

    const outCard = el('div', { class: 'card' });
    addView(outCard, resultTable({
      caption: el('span', {}, `head`, el('sub', {}, String(h + 1)), el('span', { class: 'muted' }, ' output (3 × 2)')),
      rowLabels: TOKENS, colLabels: ['1', '2'],
      testid: `head-output-table-${h + 1}`, rowTestid: `head-output-${h + 1}`,
    }), (r) => [r.intermediates.headOutputs, h * T * D_V]);
    headOutputsGrid.append(outCard);
  }

  const concatLabels = [];
  for (let h = 0; h < NUM_HEADS; h++) for (let c = 0; c < D_V; c++) concatLabels.push(`h${h + 1} · ${c + 1}`);
  const concatCard = el('div', { class: 'card' });
  addView(concatCard, resultTable({
    caption: el('span', {}, 'Concat(head', el('sub', {}, '1'), ', head', el('sub', {}, '2'), ')'),
    rowLabels: TOKENS, colLabels: concatLabels, testid: 'concat-table', rowTestid: 'concat',
  }), (r) => [r.intermediates.concat, 0]);
  finalGrid.append(concatCard);

  const outputCard = el('div', { class: 'card' });
  addView(outputCard, resultTable({
    caption: el('span', {}, 'Output = Concat(…) ', symbol('W', undefined, 'O')),
    rowLabels: TOKENS, colLabels: ['out 1', 'out 2', 'out 3', 'out 4'], testid: 'output-table', rowTestid: 'output',
  }), (r) => [r.output, 0]);
  finalGrid.append(outputCard);
}

// -------------------------------------------------------------------- wiring

const main = document.getElementById('main');
const errorBox = document.getElementById('error');
const statusLine = document.getElementById('status');
const results = document.getElementById('results');
const resultsNote = document.getElementById('results-note');

function showError(message, note) {
  errorBox.textContent = message;
  resultsNote.textContent = note;
  results.classList.add('stale');
  for (const view of views) view.table.update(null);
}

function clearError() {
  if (errorBox.textContent !== '') errorBox.textContent = '';
  if (resultsNote.textContent !== '') resultsNote.textContent = '';
  results.classList.remove('stale');
}

let lab = null;

function recompute() {
  if (!lab) return;
  let result;
  try {
    result = lab.multiHeadAttention(readOptions());
  } catch (e) {
    const bad = [...cells.values()].filter(({ input }) => !Number.isFinite(input.valueAsNumber));
    const hint = bad.length === 0 ? ''
      : ` Check ${bad.length === 1 ? 'this cell' : 'these cells'}: ${bad.slice(0, 3).map((b) => b.label).join('; ')}${bad.length > 3 ? `; and ${bad.length - 3} more` : ''}.`;
    showError(`Cannot compute: ${e instanceof Error ? e.message : String(e)}.${hint}`,
      bad.length > 0 ? 'No results until every input cell holds a number (cells marked in red).'
        : 'No results: see the error message above.');
    return;
  }
  clearError();
  for (const view of views) {
    const [flat, offset] = view.pick(result);
    view.table.update(flat, offset);
  }
}

function init() {
  buildInputs();
  buildResults();
  setInputs(COURSE_EXAMPLE);

  const form = document.getElementById('editor');
  form.addEventListener('input', recompute);
  form.addEventListener('submit', (event) => event.preventDefault());
  document.getElementById('reset').addEventListener('click', () => {
    setInputs(COURSE_EXAMPLE);
    recompute();
  });

  createHeadlab().then((loaded) => {
    lab = loaded;
    const info = lab.info();
    statusLine.textContent = `Ready: HeadLab ${info.version}, ${info.simd ? 'WebAssembly SIMD' : 'WebAssembly (no SIMD)'}.`;
    main.dataset.state = 'ready';
    recompute();
  }, (e) => {
    main.dataset.state = 'failed';
    statusLine.textContent = 'The WebAssembly module did not load.';
    showError(`Could not load the WebAssembly module: ${e instanceof Error ? e.message : String(e)}`,
      'No results: the WebAssembly module is needed to compute them.');
  });
}

init();
