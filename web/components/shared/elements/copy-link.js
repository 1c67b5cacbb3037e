// The "Copy link" button of every element: the link to the demo's current state
// (built by web/lib/teach/url-state.js), copied or shown for copying by hand.

import { el } from '../render/dom.js';

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
