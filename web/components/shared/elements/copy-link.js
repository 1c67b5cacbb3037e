// The "Copy link" button of every element: the link to the demo's current state
// (built by web/lib/teach/url-state.js), copied or shown for copying by hand.

import { el } from '../render/dom.js';
import { translator } from '../../../lib/i18n/index.js';
import shared from '../../../lib/i18n/catalogues/shared.js';

/**
 * A "Copy link" button. `getUrl()` builds the link; it is also put in the
 * address bar (history.replaceState) and shown in a text field, so it can be
 * copied by hand where the Clipboard API is not allowed (some iframes).
 * `t` is the element's message function (English when omitted).
 */
export function copyLinkControl(getUrl, onCopied, t = translator(shared, 'en')) {
  const field = el('input', { type: 'text', readonly: true, class: 'mono', hidden: true, 'aria-label': t('copyLink.field') });
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
        status.textContent = copied ? t('copyLink.copied') : t('copyLink.byHand');
        if (!copied) { field.focus(); field.select(); }
        onCopied?.(url, copied);
      },
    },
  }, t('copyLink.button'));
  return el('span', { class: 'copy-link' }, button, field, status);
}
