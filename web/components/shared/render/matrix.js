// Matrix tables: editable (number inputs) and read-only (results), with row and
// column headers. Labels are inserted as text.

import { el } from './dom.js';
import { fixed, translator } from '../../../lib/i18n/index.js';
import shared from '../../../lib/i18n/catalogues/shared.js';

const english = translator(shared, 'en');

/** A row header; the marked row (the query) says so, in the words of `t`. */
function rowHeader(label, isQuery, t) {
  const th = el('th', { scope: 'row' }, label);
  if (isQuery) th.append(el('span', { class: 'query-tag' }, t('matrix.queryTag')));
  return th;
}

/**
 * A table of number inputs; returns { element, inputs: HTMLInputElement[][], setLabels(rows) }.
 * Input ids are `${idPrefix}-${row}-${col}`.
 */
export function inputMatrix({ caption, idPrefix, rowLabels, colLabels, describe, highlightRow = -1, testid, t = english }) {
  const table = el('table', { class: 'matrix', dataset: { testid: testid ?? `${idPrefix}-table` } },
    el('caption', {}, caption),
    el('thead', {}, el('tr', {}, el('td', {}), colLabels.map((label) => el('th', { scope: 'col' }, label)))));
  const body = el('tbody');
  const headers = [];
  const inputs = rowLabels.map((rowLabel, r) => {
    const th = rowHeader(rowLabel, r === highlightRow, t);
    headers.push(th);
    const tr = el('tr', { class: r === highlightRow ? 'is-query' : undefined }, th);
    const row = colLabels.map((_, c) => {
      const input = el('input', {
        type: 'number', step: 'any', inputmode: 'decimal', id: `${idPrefix}-${r}-${c}`, name: `${idPrefix}-${r}-${c}`,
        class: 'cell', 'aria-label': describe(r, c), autocomplete: 'off',
      });
      tr.append(el('td', { class: 'input-cell' }, input));
      return input;
    });
    body.append(tr);
    return row;
  });
  table.append(body);
  return {
    element: el('div', { class: 'table-scroll' }, table),
    inputs,
    setRowLabels(labels) {
      headers.forEach((th, r) => {
        th.firstChild.textContent = labels[r];
      });
    },
  };
}

/**
 * A read-only results table; `update(flat, offset)` fills it, `update(null)` shows dashes.
 */
export function resultMatrix({ caption, rowLabels, colLabels, testid, markRow = -1, markRowTestid, digits = 4, t = english }) {
  const lang = t.lang;
  const table = el('table', { class: 'matrix', dataset: testid ? { testid } : {} },
    el('caption', {}, caption),
    el('thead', {}, el('tr', {}, el('td', {}), colLabels.map((label) => el('th', { scope: 'col' }, label)))));
  const body = el('tbody');
  const headers = [];
  const tds = rowLabels.map((rowLabel, r) => {
    const marked = r === markRow;
    const th = rowHeader(rowLabel, marked, t);
    headers.push(th);
    const tr = el('tr', { class: marked ? 'is-query' : undefined, dataset: marked && markRowTestid ? { testid: markRowTestid } : {} }, th);
    const row = colLabels.map(() => el('td', { class: 'num' }, '—'));
    tr.append(...row);
    body.append(tr);
    return row;
  });
  table.append(body);
  const cols = colLabels.length;
  return {
    element: el('div', { class: 'table-scroll' }, table),
    update(flat, offset = 0) {
      tds.forEach((row, r) => row.forEach((td, c) => {
        td.textContent = flat ? fixed(lang, flat[offset + r * cols + c], digits) : '—';
      }));
    },
    /** Marks cells whose value differs from `other` by more than tol. */
    markChanged(flat, other, offset = 0, tol = 5e-5) {
      tds.forEach((row, r) => row.forEach((td, c) => {
        const i = offset + r * cols + c;
        td.classList.toggle('is-changed', Boolean(flat && other && Math.abs(flat[i] - other[i]) > tol));
      }));
    },
    setRowLabels(labels) {
      headers.forEach((th, r) => { th.firstChild.textContent = labels[r]; });
    },
  };
}
