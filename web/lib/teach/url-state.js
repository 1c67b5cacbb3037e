// Demo state in the URL fragment, TensorFlow Playground style: every setting
// that a component lists as `state: true` in its props table (plus any extra
// state it declares) is written as `#<key>.<name>=<value>&…`. Each element on a
// page owns the keys under its own prefix (its id, or a name per element type),
// so several elements share one URL without clashing. No DOM: only `location`
// is read (the copy-link button is components/shared/elements/copy-link.js).

function currentParams() {
  const hash = typeof location === 'undefined' ? '' : location.hash.replace(/^#/, '');
  return new URLSearchParams(hash);
}

/** The values stored for `prefix`, as a Map name → string. */
export function readState(prefix) {
  const out = new Map();
  for (const [key, value] of currentParams()) {
    if (key.startsWith(`${prefix}.`)) out.set(key.slice(prefix.length + 1), value);
  }
  return out;
}

/** Readable encoding: keeps , ; | and : as they are. */
function enc(value) {
  return encodeURIComponent(value).replace(/%2C/gi, ',').replace(/%3B/gi, ';').replace(/%7C/gi, '|').replace(/%3A/gi, ':');
}

/** This page's URL with `prefix`'s state replaced by `entries` (other prefixes kept). */
export function urlWithState(prefix, entries) {
  const kept = [];
  for (const [key, value] of currentParams()) {
    if (!key.startsWith(`${prefix}.`)) kept.push([key, value]);
  }
  const own = Object.entries(entries).filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => [`${prefix}.${k}`, String(v)]);
  const hash = [...kept, ...own].map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&');
  const base = location.href.replace(/#.*$/, '');
  return hash ? `${base}#${hash}` : base;
}
