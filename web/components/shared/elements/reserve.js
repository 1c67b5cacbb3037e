// Room reserved for an element until its first draw, so the course text below it does not move
// when it fills in (no layout shift): the height it will have, from a table measured from the
// built elements at several widths (reserved-heights.js, written by scripts/element-heights.mjs),
// interpolated for the element's width. Set as the element's inline height (its content, hidden
// while it loads, may be taller or shorter until the first draw: clipped), and taken back once it
// has drawn (data-drawn), when its own content holds that height. A page that sets the element's
// height or min-height inline keeps its own.

import { RESERVED_HEIGHTS } from './reserved-heights.js';

/** The height (px) an element `tag` drawn `width` px wide will have, or 0 when unknown. */
export function reservedHeight(tag, width, { compact = false } = {}) {
  const table = RESERVED_HEIGHTS[tag]?.[compact ? 'compact' : 'default'];
  if (!table || table.length === 0 || !(width > 0)) return 0;
  if (width <= table[0][0]) return table[0][1];
  for (let i = 1; i < table.length; i++) {
    const [w1, h1] = table[i];
    if (width <= w1) {
      const [w0, h0] = table[i - 1];
      return Math.round(h0 + ((h1 - h0) * (width - w0)) / (w1 - w0));
    }
  }
  return table[table.length - 1][1];
}

/** Reserves the element's drawn height (once, until releaseRoom), unless the page set a height or min-height. */
export function reserveRoom(element) {
  if (element.hasAttribute('data-drawn') || element.hasAttribute('data-headlab-reserved') || element.style.minHeight || element.style.height) return;
  const width = element.getBoundingClientRect().width;
  const height = reservedHeight(element.localName, width, { compact: element.hasAttribute('compact') });
  if (height <= 0) return;
  element.style.height = `${height}px`;
  if (!element.style.overflow) element.style.overflow = 'clip';
  element.setAttribute('data-headlab-reserved', String(height));
}

/** Gives the reserved room back (the element has drawn and holds its own height). */
export function releaseRoom(element) {
  if (!element.hasAttribute('data-headlab-reserved')) return;
  if (element.style.height === `${element.getAttribute('data-headlab-reserved')}px`) {
    element.style.removeProperty('height');
    if (element.style.overflow === 'clip') element.style.removeProperty('overflow');
  }
  element.removeAttribute('data-headlab-reserved');
}
