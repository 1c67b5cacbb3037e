// Styles shared by every component's shadow root. Course pages cannot reach in
// (and the components cannot leak out); authors theme through the --headlab-*
// custom properties on the element, or the `theme` attribute.

const light = `
  --hl-bg: var(--headlab-background, #ffffff);
  --hl-surface: var(--headlab-surface, #f5f7fa);
  --hl-text: var(--headlab-text, #1d2330);
  --hl-muted: var(--headlab-muted, #535d70);
  --hl-border: var(--headlab-border, #d3d8e2);
  --hl-accent: var(--headlab-accent, #2454c5);
  --hl-accent-soft: rgb(36 84 197 / 0.1);
  --hl-focus: var(--headlab-focus, #c25e00);
  --hl-error: #a3161b;
  --hl-error-bg: #fdecec;
  --hl-ok: #17663a;
  --hl-query: #9a4a06;
  --hl-query-bg: #fff4dc;
  --hl-input-bg: #ffffff;
  --hl-head-1: #2454c5;
  --hl-head-2: #c2410c;
  --hl-fig-text: var(--hl-text);
  --hl-fig-muted: var(--hl-muted);
  --hl-fig-border: var(--hl-border);
  --hl-fig-background: var(--hl-bg);
  --hl-fig-accent: var(--hl-accent);
  --hl-fig-highlight: #d9480f;
  color-scheme: light;
`;
const dark = `
  --hl-bg: var(--headlab-background, #161a22);
  --hl-surface: var(--headlab-surface, #1e2430);
  --hl-text: var(--headlab-text, #e6e9ef);
  --hl-muted: var(--headlab-muted, #a5aec0);
  --hl-border: var(--headlab-border, #3a4252);
  --hl-accent: var(--headlab-accent, #8fb0ff);
  --hl-accent-soft: rgb(143 176 255 / 0.14);
  --hl-focus: var(--headlab-focus, #ffb547);
  --hl-error: #ff9b9b;
  --hl-error-bg: #3b1d20;
  --hl-ok: #7fd8a0;
  --hl-query: #f6b65c;
  --hl-query-bg: #3a2b14;
  --hl-input-bg: #10131a;
  --hl-head-1: #8fb0ff;
  --hl-head-2: #ffa36b;
  --hl-fig-highlight: #ff7a45;
  color-scheme: dark;
`;

export const sharedCss = `
:host {
  ${light}
  display: block;
  box-sizing: border-box;
  max-width: 100%;
  container-type: inline-size;
  color: var(--hl-text);
  background: var(--hl-bg);
  border: 1px solid var(--hl-border);
  border-radius: 10px;
  padding: 1rem;
  margin: 1rem 0;
  font: 15px/1.5 var(--headlab-font, system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif);
  text-align: left;
}
/* Light unless asked: theme="dark"; theme="auto" (the reader's system); or, with no theme
   attribute, a host page that declares a dark color-scheme (data-host-scheme, set by base.js). */
:host([theme="dark"]),
:host(:not([theme="light"]):not([theme="auto"])[data-host-scheme="dark"]) { ${dark} }
@media (prefers-color-scheme: dark) {
  :host([theme="auto"]),
  :host(:not([theme="light"]):not([theme="dark"])[data-host-scheme="auto"]) { ${dark} }
}
:host([hidden]) { display: none; }
/* While the module loads: room for the demo, so the course text below does not jump twice. */
:host([data-state="loading"]), :host([data-state="ready"]:not([data-drawn])) { min-height: 24rem; }
/* Until the first draw only the title and the status line show: what is below them would move as
   the first results fill in above it (layout shift), so it appears once, where it will stay. */
:host([data-state="loading"]) > :not(style, h2, .status, .top, [role="alert"], [data-testid="attribute-problems"]),
:host([data-state="ready"]:not([data-drawn])) > :not(style, h2, .status, .top, [role="alert"], [data-testid="attribute-problems"]) { visibility: hidden; }
/* Touch targets of at least 24 × 24 px (WCAG 2.5.8), file pickers included. */
input[type="file"] { min-height: 24px; }
/* compact: the explanations are left to the course text around the element. */
:host([compact]) .explain, :host([compact]) .status { display: none; }
*, *::before, *::after { box-sizing: border-box; }
h2, h3, h4 { line-height: 1.25; margin: 1.1em 0 0.45em; }
h2 { font-size: 1.2rem; }
h3 { font-size: 1.05rem; }
h4 { font-size: 0.95rem; }
.top > h2:first-child, .top h2 { margin-top: 0; }
p { margin: 0.5em 0; }
.muted { color: var(--hl-muted); }
.small { font-size: 0.875rem; }
.mono { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace; }
.nowrap { white-space: nowrap; }
strong.big { font-size: 1.35rem; }
:focus-visible { outline: 3px solid var(--hl-focus); outline-offset: 2px; }
.sr-only {
  /* !important: a hidden table's box also has .table-scroll, whose overflow-x: auto would make
     a 1-px scroll region that takes a Tab stop. */
  position: absolute !important; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden !important;
  clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; border: 0;
}
a { color: var(--hl-accent); }

/* Buttons and controls */
.btn {
  font: inherit; font-size: 0.92rem; line-height: 1.2;
  padding: 0.45rem 0.8rem; min-height: 2.25rem;
  border: 1px solid var(--hl-accent); border-radius: 6px;
  background: var(--hl-bg); color: var(--hl-accent); cursor: pointer;
}
.btn:hover { background: var(--hl-accent-soft); }
.btn[aria-pressed="true"], .btn[aria-current="step"], .btn--primary {
  background: var(--hl-accent); color: var(--hl-bg);
}
.btn[aria-pressed="true"]:hover, .btn[aria-current="step"]:hover, .btn--primary:hover {
  background: var(--hl-accent); filter: brightness(1.12);
}
.btn:disabled { opacity: 0.45; cursor: default; }
.btn--small { font-size: 0.82rem; padding: 0.25rem 0.55rem; min-height: 1.9rem; }
.toolbar { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 0.75rem; margin: 0.6rem 0; }
.toolbar[hidden], [hidden] { display: none !important; }
.field { display: flex; flex-wrap: wrap; align-items: center; gap: 0.35rem 0.6rem; margin: 0.4rem 0; }
.field > label { font-weight: 600; min-width: 7.5rem; }
.field output, .field .value { font-variant-numeric: tabular-nums; font-weight: 600; min-width: 3ch; }
input[type="range"] { width: min(100%, 18rem); accent-color: var(--hl-accent); min-height: 1.9rem; }
input[type="number"], input[type="text"], select {
  max-width: 100%;
  font: inherit; font-size: 0.92rem; color: var(--hl-text); background: var(--hl-input-bg);
  border: 1px solid var(--hl-border); border-radius: 5px; padding: 0.25rem 0.4rem; min-height: 2rem;
}
input[type="number"].num-input { width: 6.5rem; }
input[type="checkbox"], input[type="radio"] { accent-color: var(--hl-accent); width: 1.1rem; height: 1.1rem; }
.check { display: inline-flex; align-items: center; gap: 0.4rem; cursor: pointer; }
fieldset { border: 1px solid var(--hl-border); border-radius: 8px; padding: 0.5rem 0.8rem 0.7rem; margin: 0.6rem 0; min-width: 0; }
legend { font-weight: 600; padding: 0 0.3rem; }
.choices { display: flex; flex-wrap: wrap; gap: 0.3rem 1rem; }

/* Status, alerts */
.status { font-size: 0.85rem; color: var(--hl-muted); margin: 0; min-height: 1.5em; }  /* kept while empty: no shift when it fills */
.alert {
  color: var(--hl-error); background: var(--hl-error-bg); border: 1px solid currentColor; border-left-width: 4px;
  border-radius: 6px; padding: 0.55rem 0.8rem; margin: 0.6rem 0; overflow-wrap: anywhere; white-space: pre-line;
}
.alert:empty { padding: 0; border: 0; margin: 0; }
.note {
  border-left: 4px solid var(--hl-accent); background: var(--hl-surface); padding: 0.5rem 0.8rem; border-radius: 0 6px 6px 0;
  margin: 0.6rem 0;
}
.note--warn { border-left-color: var(--hl-query); }
.attr-note { white-space: pre-line; overflow-wrap: anywhere; }
.note--ok { border-left-color: var(--hl-ok); }
.stale-note { color: var(--hl-error); font-weight: 600; }
.stale-note:empty { display: none; }
.stale td.num { color: var(--hl-muted); }

/* Layout */
.card { background: var(--hl-surface); border: 1px solid var(--hl-border); border-radius: 8px; padding: 0.7rem 0.8rem; min-width: 0; }
.card > h3:first-child, .card > h4:first-child { margin-top: 0; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 17rem), 1fr)); gap: 0.9rem; align-items: start; }
.grid--2 { grid-template-columns: repeat(auto-fit, minmax(min(100%, 20rem), 1fr)); }
.row { display: flex; flex-wrap: wrap; gap: 0.75rem 1.25rem; align-items: flex-start; }
.row > * { min-width: 0; }
/* position: relative keeps visually hidden text (.sr-only, absolutely placed) inside the scroll box: without it,
   a cell's hidden words past the box's edge widen the whole page (seen with longer languages at 360 px). */
.table-scroll { max-width: 100%; overflow-x: auto; margin: 0.3rem 0; position: relative; }
/* A table wider than its box (phones) says so, and shades the edge it continues past. */
.table-scroll[data-overflow] {
  background:
    linear-gradient(to right, var(--hl-bg) 30%, transparent) left / 2rem 100% no-repeat local,
    linear-gradient(to left, var(--hl-bg) 30%, transparent) right / 2rem 100% no-repeat local,
    radial-gradient(farthest-side at 0 50%, rgb(0 0 0 / 0.22), transparent) left / 0.8rem 100% no-repeat scroll,
    radial-gradient(farthest-side at 100% 50%, rgb(0 0 0 / 0.22), transparent) right / 0.8rem 100% no-repeat scroll;
}
.table-scroll[data-overflow]::before {
  content: "Scroll sideways for more →"; display: block; position: sticky; left: 0; width: max-content;
  font-size: 0.78rem; color: var(--hl-muted);
}
.table-scroll[data-overflow][data-scroll-hint]::before { content: attr(data-scroll-hint); }

/* Matrices */
table.matrix { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 0.88rem; }
table.matrix caption { text-align: left; font-weight: 600; padding: 0 0 0.3rem; }
table.matrix caption .muted { font-weight: 400; }
table.matrix th, table.matrix td { border: 1px solid var(--hl-border); padding: 0.2rem 0.4rem; }
table.matrix th { background: var(--hl-surface); font-weight: 600; font-size: 0.8rem; color: var(--hl-muted); }
table.matrix thead th { text-align: center; vertical-align: bottom; }
table.matrix tbody th { text-align: left; white-space: nowrap; max-width: 12rem; overflow: hidden; text-overflow: ellipsis; }
table.matrix td.num { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace; text-align: right; white-space: nowrap; min-width: 4.6em; }
table.matrix td.input-cell { padding: 0.12rem; }
table.matrix tr.is-query th { background: var(--hl-query-bg); color: var(--hl-query); }
table.matrix tr.is-query td { font-weight: 700; }
table.matrix tr.is-query th, table.matrix tr.is-query td { border-top: 2px solid var(--hl-query); border-bottom: 2px solid var(--hl-query); }
table.matrix tr.is-hot th { outline: 2px solid var(--hl-fig-highlight); outline-offset: -2px; }
table.matrix td.is-changed { box-shadow: inset 0 0 0 2px var(--hl-fig-highlight); }
.query-tag { display: inline-block; margin-left: 0.3em; font-size: 0.75rem; font-weight: 400; }
input.cell {
  width: 4.9rem; font: inherit; font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace;
  font-size: 0.86rem; padding: 0.2rem 0.3rem; border: 1px solid var(--hl-border); border-radius: 4px;
  background: var(--hl-input-bg); color: var(--hl-text); text-align: right; min-height: 1.9rem;
}
input.cell:hover { border-color: var(--hl-accent); }
input.cell:focus-visible { outline-offset: 0; border-color: var(--hl-accent); }
input.cell[aria-invalid="true"] { border-color: var(--hl-error); background: var(--hl-error-bg); box-shadow: inset 0 0 0 1px var(--hl-error); }
.shape { font-size: 0.8rem; color: var(--hl-muted); font-weight: 400; }

/* Heatmaps and figures */
figure.heatmap { margin: 0; min-width: 0; }
.heatmap__title { margin: 0 0 0.3rem; font-size: 0.95rem; }
.heatmap__figure { max-width: 100%; overflow-x: auto; }
.heatmap__plot { position: relative; }
.heatmap__plot > svg { position: relative; }
.heatmap__cells { position: absolute; display: block; image-rendering: pixelated; }
svg.fig { display: block; width: 100%; height: auto; color: var(--hl-text); }
.heatmap__readout { min-height: 1.4em; margin: 0.2rem 0; }
.heatmap__tools { display: flex; flex-wrap: wrap; gap: 0.4rem; align-items: flex-start; }
table.matrix--heat td.num { min-width: 4.2em; }
details.export { display: inline-block; }
details.export > summary {
  cursor: pointer; font-size: 0.82rem; color: var(--hl-accent); border: 1px solid var(--hl-accent); border-radius: 6px;
  padding: 0.25rem 0.55rem; min-height: 1.9rem; list-style: none; display: inline-flex; align-items: center;
}
details.export > summary::-webkit-details-marker { display: none; }
details.export > summary::after { content: " ▾"; white-space: pre; }
details.export[open] > summary::after { content: " ▴"; }
.export__buttons { display: flex; flex-wrap: wrap; gap: 0.3rem; margin-top: 0.3rem; }
.legend-row { display: flex; flex-wrap: wrap; gap: 0.3rem 1rem; align-items: center; font-size: 0.85rem; color: var(--hl-muted); }
.swatch { display: inline-block; width: 0.9rem; height: 0.9rem; border-radius: 2px; vertical-align: -0.1rem; margin-right: 0.3rem; border: 1px solid var(--hl-border); }

/* KaTeX (its own rules: formula-css.js, in the elements with formulas) */
.tex { font-size: 1.05em; }
/* Until KaTeX's fonts have loaded (base.js), formulas keep their room unseen; still read by screen readers. */
:host([data-formulas="loading"]) .tex { opacity: 0; }
/* A strut as far above and below the baseline as a line of any of KaTeX's fonts (or a fallback serif)
   reaches at KaTeX's line height: a formula's line is then as tall in the fallback fonts as in
   KaTeX's, and nothing moves when they arrive. Zero width: the formula itself is untouched. */
.tex .katex-html::before { content: ""; display: inline-block; width: 0; height: 1.34em; vertical-align: -0.37em; }
.tex--display { display: block; overflow-x: auto; overflow-y: hidden; padding: 0.2rem 0; }
.tex--display .katex-display { margin: 0.3rem 0; text-align: left; }
.tex--display .katex-display > .katex { text-align: left; }
.formula { background: var(--hl-surface); border: 1px solid var(--hl-border); border-radius: 8px; padding: 0.3rem 0.8rem; margin: 0.5rem 0; }
.formula--wrap { display: flex; flex-wrap: wrap; align-items: center; column-gap: 1.2rem; }
.formula--wrap > * { flex: 0 1 auto; }

/* Copy link */
.copy-link { display: inline-flex; flex-wrap: wrap; gap: 0.4rem; align-items: center; }
.copy-link input { width: min(100%, 22rem); font-size: 0.8rem; }

@container (max-width: 30rem) {
  .field > label { min-width: 0; width: 100%; }
  table.matrix { font-size: 0.8rem; }
  table.matrix th, table.matrix td { padding: 0.15rem 0.22rem; }
  table.matrix td.num { min-width: 0; }
  input.cell { width: 3.7rem; font-size: 0.8rem; }
  .query-tag { display: block; margin-left: 0; line-height: 1.1; }
}
@media (max-width: 30rem) {
  :host { padding: 0.7rem; }
}
@media (prefers-reduced-motion: no-preference) {
  .btn, input.cell { transition: background-color 120ms linear, border-color 120ms linear; }
}
@media (forced-colors: active) {
  .btn[aria-pressed="true"], .btn[aria-current="step"] { outline: 2px solid CanvasText; }
}
`;
