// Demo state in the URL fragment, TensorFlow Playground style: every setting
// that a component lists as `state: true` in its props table (plus any extra
// state it declares) is written as `#<key>.<name>=<value>&…`. Each element on a
// page owns the keys under its own prefix (its id, or a name per element type),
// so several elements share one URL without clashing.

import { el } from './dom.js';

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

/**
 * A "Copy link" button. `getUrl()` builds the link; it is also put in the
 * address bar (history.replaceState) and shown in a text field, so it can be
 * copied by hand where the Clipboard API is not allowed (some iframes).
 */
export function copyLinkControl(getUrl, onCopied) {
  const field = el('input', { type: 'text', readonly: true, class: 'mono', hidden: true, 'aria-label': 'Link to this state of the demo' });
  const status = el('span', { class: 'status', role: 'status' });
  const button = el('button', {
    type: 'button', class: 'btn', part: 'copy-link', dataset: { action: 'copy-link' },
    on: {
      click: async () => {
        const url = getUrl();
        try { history.replaceState(history.state, '', url); } catch { /* sandboxed frame: the link is still shown */ }
        field.value = url;
        field.hidden = false;
        let copied = false;
        try {
          if (navigator.clipboard && window.isSecureContext) {
            await navigator.clipboard.writeText(url);
            copied = true;
          }
        } catch { /* permission refused: fall back to selecting the text */ }
        status.textContent = copied ? 'Link copied.' : 'Copy the link from the field.';
        if (!copied) { field.focus(); field.select(); }
        onCopied?.(url, copied);
      },
    },
  }, 'Copy link');
  return el('span', { class: 'copy-link' }, button, field, status);
}
