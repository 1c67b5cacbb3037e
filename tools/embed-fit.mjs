// What scripts/embed-heights.mjs (measures, writes docs/embedding.md's table) and
// tests/browser/embed-fit.test.mjs (checks it) share: the demo pages, the course page that frames
// one, how the framed page's content height is read, and the table's format.
// The course page forces its own vertical scrollbar, so its iframe has the same width whether
// the frame is short (measuring) or as tall as its content (checking).

/** Every demo page and the element that marks it drawn. */
export const DEMOS = [
  ['worked-example', 'headlab-worked-example'], ['heads', 'headlab-heads'], ['params', 'headlab-params'],
  ['scaling', 'headlab-scaling'], ['misconceptions', 'headlab-misconceptions'], ['choosing-h', 'headlab-choosing-h'],
  ['trainer', 'headlab-trainer'], ['language-model', 'headlab-language-model'], ['real-models', 'headlab-model-explorer'],
];

/** The viewport widths the documented heights are for. */
export const WIDTHS = [1280, 360];

/** Room added to the taller measurement, then rounded up to 10 px: fonts and wrapping vary a little. */
export const MARGIN = 1.05;

/**
 * A course page framing `src` as docs/embedding.md's snippet does, `height` tall; with
 * `helper` (a URL), headlab-embed.js loaded and the iframe marked data-headlab.
 */
export function coursePage(src, { height = 200, helper = null } = {}) {
  return '<!doctype html><html lang="en" style="overflow-y: scroll"><head><meta charset="utf-8"><title>Lesson</title>' +
    (helper ? `<script src="${helper}" data-headlab-resize defer></script>` : '') +
    '</head><body style="margin: 0"><h1 style="margin: 8px; font: 20px sans-serif">Lesson</h1>' +
    `<iframe${helper ? ' data-headlab' : ''} src="${src}" title="HeadLab demo" style="width: 100%; height: ${height}px; border: 0; display: block"></iframe>` +
    '<p style="margin: 8px">After the demo.</p></body></html>';
}

/**
 * Resolves once every HeadLab element of the framed page (a playwright Frame) has drawn itself,
 * its fonts are in and its height has held for `settle` ms.
 */
export async function waitForDrawn(frame, { timeout = 60_000, settle = 400 } = {}) {
  await frame.waitForFunction(() => {
    const els = [...document.querySelectorAll('*')].filter((e) => e.localName.startsWith('headlab-') && e.localName !== 'headlab-theme-toggle');
    return els.length > 0 && els.every((e) => customElements.get(e.localName) && e.dataset.state === 'ready' && e.hasAttribute('data-drawn') && !e.hasAttribute('data-busy'));
  }, null, { timeout, polling: 100 });
  await frame.evaluate(() => document.fonts.ready);
  await frame.waitForFunction(async (ms) => {
    const h = () => document.documentElement.getBoundingClientRect().height;
    const before = h();
    await new Promise((r) => setTimeout(r, ms));
    return h() === before;
  }, settle, { timeout, polling: 'raf' });
}

/**
 * Measured inside the framed page: its content's height (what page.js posts) and whether it
 * scrolls within the frame.
 */
export function frameMetrics(frame) {
  return frame.evaluate(() => {
    const root = document.documentElement;
    return {
      content: Math.ceil(root.getBoundingClientRect().height), scrollHeight: root.scrollHeight, clientHeight: root.clientHeight,
      width: root.clientWidth,
    };
  });
}

const START = '<!-- embed-heights:start (written by `node scripts/embed-heights.mjs`; tests/browser/embed-fit.test.mjs checks the last column) -->';
const END = '<!-- embed-heights:end -->';
const px = (n) => `${n.toLocaleString('en-US')} px`;

/** The documented iframe height for measured content heights (one per width). */
export const documentedHeight = (heights) => Math.ceil((Math.max(...heights) * MARGIN) / 10) * 10;

/** docs/embedding.md's table of rows { name, heights: [at 1280, at 360] }, between its markers. */
export function heightsTable(rows) {
  return [START,
    `| demo page (\`?embed\`) | content at ${WIDTHS[0]} px wide | content at ${WIDTHS[1]} px wide | iframe \`height\` that fits both |`,
    '| --- | ---: | ---: | ---: |',
    ...rows.map(({ name, heights }) => `| \`demos/${name}/\` | ${heights.map(px).join(' | ')} | ${px(documentedHeight(heights))} |`),
    END].join('\n');
}

/** `markdown` with its table replaced by `table` (appended where there is none yet is the caller's business). */
export function replaceTable(markdown, table) {
  const a = markdown.indexOf(START.slice(0, 24));
  const b = markdown.indexOf(END);
  if (a < 0 || b < 0) throw new Error('docs/embedding.md has no embed-heights markers');
  return markdown.slice(0, a) + table + markdown.slice(b + END.length);
}

/** The documented heights in docs/embedding.md: Map name → px. */
export function documentedHeights(markdown) {
  const map = new Map();
  for (const m of markdown.matchAll(/^\| `demos\/([\w-]+)\/` \|.*\| ([\d,]+) px \|$/gm)) map.set(m[1], Number(m[2].replace(/,/g, '')));
  return map;
}

// An iframe snippet of the docs: its src names demos/<name>/…?embed and its style a height.
const SNIPPET = /(<iframe\b[^>]*?src="[^"]*\/demos\/([\w-]+)\/[^"]*\?embed[^"]*"[^>]*?height:\s*)(\d+)(px)/g;

/** The iframe snippets of `markdown`: [{ name, height }]. */
export function snippetHeights(markdown) {
  return [...markdown.matchAll(SNIPPET)].map((m) => ({ name: m[2], height: Number(m[3]) }));
}

/** `markdown` with each iframe snippet's height set to `heights.get(name)`. */
export function setSnippetHeights(markdown, heights) {
  return markdown.replace(SNIPPET, (all, head, name, _h, unit) => (heights.has(name) ? `${head}${heights.get(name)}${unit}` : all));
}
