// Downloads: PNG and SVG of a figure, JSON and CSV of the numbers behind it.
// Files are handed to the browser through an <a download> with a blob: URL,
// which the strict CSP allows (it restricts images, not downloads).

import { el } from './dom.js';
import { figureToPNG, figureToSVGText } from './figure.js';
import { translator } from '../../../lib/i18n/index.js';
import shared from '../../../lib/i18n/catalogues/shared.js';

/** Starts a download of `blob` named `filename`. */
export function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.rel = 'noopener';
  a.style.display = 'none';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 4000);
}

/** A safe file name from a title: "Head 1 weights" → "head-1-weights". */
export function slug(text) {
  const s = String(text).toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  return s.slice(0, 60) || 'headlab';
}

/** One CSV field. Labels that a spreadsheet would run as a formula get a leading quote. */
function csvField(value, isLabel) {
  let s = String(value);
  if (isLabel && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** CSV of a labelled matrix; `values` is an array of rows. */
export function matrixCSV({ corner = '', rowLabels, colLabels, values }) {
  const lines = [[csvField(corner, true), ...colLabels.map((c) => csvField(c, true))].join(',')];
  values.forEach((row, r) => lines.push([csvField(rowLabels[r], true), ...row.map((v) => csvField(v, false))].join(',')));
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * A "Download" disclosure with PNG / SVG / JSON / CSV buttons.
 * @param {object} o
 * @param {string} o.what       accessible description, e.g. "head 1 attention weights"
 * @param {() => string} o.name file name stem
 * @param {() => object|null} [o.figure] current figure (PNG, SVG)
 * @param {() => object|null} [o.json]   current numbers as a JSON-able object
 * @param {() => string|null} [o.csv]    current numbers as CSV text
 * @param {(format: string, filename: string) => void} [o.onExport]
 * @param {Function} [o.t] the element's message function (English when omitted)
 */
export function exportMenu({ what, name, figure, json, csv, onExport, t = translator(shared, 'en') }) {
  const buttons = [];
  const add = (format, label, make) => {
    const button = el('button', {
      type: 'button', class: 'btn btn--small', 'aria-label': t('export.as', { what, format: label }),
      dataset: { export: format },
      on: {
        click: async () => {
          const blob = await make();
          if (!blob) return;
          const filename = `${name()}.${format}`;
          download(blob, filename);
          onExport?.(format, filename);
        },
      },
    }, label);
    buttons.push(button);
  };
  if (figure) {
    add('png', 'PNG', () => { const f = figure(); return f ? figureToPNG(f) : null; });
    add('svg', 'SVG', () => {
      const f = figure();
      return f ? new Blob([figureToSVGText(f, what)], { type: 'image/svg+xml' }) : null;
    });
  }
  if (json) {
    add('json', 'JSON', () => {
      const j = json();
      return j ? new Blob([`${JSON.stringify(j, null, 2)}\n`], { type: 'application/json' }) : null;
    });
  }
  if (csv) {
    add('csv', 'CSV', () => { const c = csv(); return c ? new Blob([c], { type: 'text/csv' }) : null; });
  }
  return el('details', { class: 'export', part: 'export' },
    el('summary', {}, t('export.summary')),
    el('div', { class: 'export__buttons', role: 'group', 'aria-label': t('export.group', { what }) }, buttons));
}
