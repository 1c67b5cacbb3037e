// In-page functions (sent as source: self-contained) for the quick-tab-switch case of the
// training elements, shared by tests/browser/*.test.mjs and tests/engines/checks.mjs. No
// automation protocol hides a page the same way in every engine, so the page's
// document.hidden and visibilityState are overridden and `visibilitychange` is dispatched,
// which is what the elements listen to (components/shared/elements/training-element.js).

/**
 * With the element `tag` training: hides the page and shows it again in the same task, so the
 * show comes before the Worker can report the pause. Logs the element's headlab-run events
 * (with the step each came at) to window.__headlabRunLog. Returns whether it was training
 * before, between and after.
 */
export function quickHideShow(tag) {
  const e = document.querySelector(tag);
  const log = (window.__headlabRunLog = []);
  e.addEventListener('headlab-run', (ev) => log.push({ running: ev.detail.running, reason: ev.detail.reason, step: e.snapshot?.runs[0].step ?? null }));
  let hidden = false;
  Object.defineProperty(document, 'hidden', { configurable: true, get: () => hidden });
  Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => (hidden ? 'hidden' : 'visible') });
  const before = e.running;
  hidden = true;
  document.dispatchEvent(new Event('visibilitychange'));
  const between = e.running;
  hidden = false;
  document.dispatchEvent(new Event('visibilitychange'));
  const after = e.running;
  // The document's own getters again (they say visible: the page is on screen).
  delete document.hidden;
  delete document.visibilityState;
  return { before, between, after, step: e.snapshot?.runs[0].step ?? null };
}

/**
 * After quickHideShow: { ok, log, step, running }, ok once the pause has taken effect (a
 * headlab-run event with running false), training went on (a later one with running true)
 * and the step moved past where it paused.
 */
export function resumedAfterQuickHideShow(tag) {
  const e = document.querySelector(tag);
  const log = window.__headlabRunLog ?? [];
  const paused = log.findIndex((x) => !x.running);
  const step = e.snapshot?.runs[0].step ?? -1;
  const ok = paused >= 0 && log.slice(paused + 1).some((x) => x.running) && e.running && step > (log[paused].step ?? Infinity);
  return { ok, log, step, running: e.running };
}

/** The same as a predicate for tests/engines' page.waitFor (its source is sent to the page). */
export const RESUMED = `(tag) => { const r = (${resumedAfterQuickHideShow})(tag); return r.ok && r; }`;
