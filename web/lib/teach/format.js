// Numbers and token lists as the HeadLab pages write them. No DOM: the elements,
// the Workers, the tests and the benchmarks format the same way.

/** Fixed decimals; values that round to zero print as 0.0000, never -0.0000. */
export function fmt(value, digits = 4) {
  if (!Number.isFinite(value)) return value > 0 ? '∞' : value < 0 ? '−∞' : '—';
  const v = Math.abs(value) < 0.5 * 10 ** -digits ? 0 : value;
  return v.toFixed(digits);
}

/** 1048576 → "1,048,576" whatever the page's locale. */
export function fmtInt(n) {
  return Math.round(n).toLocaleString('en-US');
}

/** Parses a token list: "|"-separated if it contains "|", else whitespace-separated. */
export function parseTokens(text) {
  if (typeof text !== 'string') return [];
  const parts = text.includes('|') ? text.split('|') : text.split(/\s+/);
  return parts.map((t) => t.trim()).filter((t) => t.length > 0);
}

/** Shortens a label for drawing; the full text stays in tables and titles. */
export function clip(text, max = 14) {
  const chars = Array.from(text);
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
}
