// Small helpers for values crossing the API: flat matrices back to rows, and
// what a bad argument was, for "…, got X" in an error message.

/** A flat row-major r×c array (typed or not) as r arrays of c numbers (the JSON model format). */
export function rows(flat, r, c) {
  return Array.from({ length: r }, (_, i) => Array.from(flat.slice(i * c, (i + 1) * c)));
}

/**
 * A bad argument in an element's method, as its error names it: a number as
 * written, a typed array by its type, anything else by typeof ("string", "null").
 */
export function describe(value) {
  if (value === null) return 'null';
  if (typeof value === 'number') return String(value);
  if (ArrayBuffer.isView(value)) return value.constructor.name;
  return typeof value;
}
