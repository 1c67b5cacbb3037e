// DOM helpers shared by the HeadLab components. Text always goes in as text
// nodes (textContent); nothing built here ever passes through innerHTML.
// Formatting without the DOM (fmt, clip, parseTokens) is in web/lib/teach/format.js.

const SVG_NS = 'http://www.w3.org/2000/svg';

function applyAttrs(node, attrs) {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') node.setAttribute('class', value);
    else if (name === 'dataset') Object.assign(node.dataset, value);
    else if (name === 'style' && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) node.style.setProperty(k, v);
    } else if (name === 'on') {
      for (const [type, fn] of Object.entries(value)) node.addEventListener(type, fn);
    } else if (name === 'props') Object.assign(node, value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
}

function appendChildren(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** `el('p', { class: 'x', on: { click } }, 'text', child)`; strings become text nodes. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  applyAttrs(node, attrs);
  appendChildren(node, children);
  return node;
}

/** The same for SVG elements. */
export function svgEl(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  applyAttrs(node, attrs);
  appendChildren(node, children);
  return node;
}

let counter = 0;
/** A unique id for label/aria wiring inside one shadow root. */
export function uid(prefix = 'hl') {
  counter += 1;
  return `${prefix}-${counter}`;
}

/** A labelled control row: <label for=id>text</label> control [output]. */
export function field(labelText, control, ...extra) {
  if (!control.id) control.id = uid('f');
  return el('div', { class: 'field' }, el('label', { for: control.id }, labelText), control, ...extra);
}

/** Sets a node's text only when it changes (an unchanged write still costs a layout). */
export function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/** Announces a message to screen readers through a polite live region. */
export function announce(region, message) {
  region.textContent = '';
  // A separate task so repeated identical messages are announced again.
  setTimeout(() => { region.textContent = message; }, 30);
}

/** The border-box width of a ResizeObserver entry (what getBoundingClientRect().width says, without a layout). */
export const borderWidth = (entry) => entry.borderBoxSize?.[0]?.inlineSize ?? entry.contentRect.width;

/**
 * Calls `redraw(width)` after `target`'s width has moved more than `step` px from
 * what `drawnWidth()` says it was drawn for. The width is the observer's own
 * (`measure(entry)`: the border box by default, `(e) => e.contentRect.width` for
 * the content box), so nothing reads layout. The redraw runs in the next
 * animation frame, not inside the observer's callback: a redraw there changes
 * the size of what is observed within the same frame, and Firefox and WebKit
 * then report "ResizeObserver loop completed with undelivered notifications"
 * as a window error. Returns the observer (keep it: one nothing refers to may
 * be garbage-collected), or null where ResizeObserver does not exist.
 */
export function onWidthChange(target, drawnWidth, redraw, step = 24, measure = borderWidth) {
  if (typeof ResizeObserver === 'undefined') return null;
  let pending = 0;
  let width = 0;
  const observer = new ResizeObserver((entries) => {
    width = measure(entries[entries.length - 1]);
    if (pending) return;
    pending = requestAnimationFrame(() => {
      pending = 0;
      const drawn = drawnWidth();
      if (drawn !== undefined && Math.abs(width - drawn) > step) redraw(width);
    });
  });
  observer.observe(target);
  return observer;
}

const hinted = new WeakSet();
/**
 * Marks a horizontal scroll box (`.table-scroll`) while its content is wider
 * than it is: `data-overflow` (the CSS shows "scroll sideways" and edge shadows),
 * and a Tab stop with a name, so keyboard users can scroll it too. Once per box.
 * `t` (the element's message function) words the name and the hint; English when omitted.
 */
export function hintScroll(box, t = null) {
  if (t) box._scrollWords = t;
  if (hinted.has(box) || typeof ResizeObserver === 'undefined') return;
  hinted.add(box);
  // Measured in the observer's callback, where layout is fresh (a read in the next frame, after the
  // element's writes, would force one); written in the next frame, as onWidthChange does.
  let pending = 0, over = false;
  const apply = () => {
    pending = 0;
    if (over === box.hasAttribute('data-overflow')) return;
    box.toggleAttribute('data-overflow', over);
    if (over) {
      box.tabIndex = 0;
      box.setAttribute('role', 'region');
      const caption = box.querySelector('caption')?.textContent?.trim();
      const words = box._scrollWords;
      box.setAttribute('aria-label', words ? words('scroll.label', { caption: caption || words('scroll.table') }) : `${caption || 'Table'} (scrolls sideways)`);
      if (words) box.setAttribute('data-scroll-hint', words('scroll.hint'));
    } else {
      box.removeAttribute('tabindex');
      box.removeAttribute('role');
      box.removeAttribute('aria-label');
    }
  };
  const observer = new ResizeObserver(() => {
    over = box.scrollWidth > box.clientWidth + 1 && !box.classList.contains('sr-only');
    pending ||= requestAnimationFrame(apply);
  });
  observer.observe(box);
  if (box.firstElementChild) observer.observe(box.firstElementChild);
  box._scrollHint = observer;
}
