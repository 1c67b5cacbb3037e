// How a training element paces the costly part of its redraw (text, tables, curves: what changes
// layout) while its Worker trains: at most one refresh every `gap` ms, and each refresh drawn in
// parts, one part per animation frame, so no single frame carries the style and layout of all of
// them (bench/results/long-frames-2026-12-07d.md: a frame that redrew everything at once passed
// 50 ms on a busy machine). Stopped, a refresh is drawn whole at once. No DOM: the clock, the
// current animation frame and the timers are given, so the pacing is tested in Node
// (tests/js/paced-refresh.test.mjs); <headlab-trainer> and <headlab-language-model> hand it their parts.

/**
 * @typedef {object} PaceTimers
 * @property {(fn: () => void, ms: number) => unknown} setTimeout
 * @property {(handle: unknown) => void} clearTimeout
 * @property {(fn: () => void) => unknown} requestFrame  runs fn in a coming animation frame
 * @property {(handle: unknown) => void} cancelFrame
 */

export class PacedRefresh {
  /**
   * @param {object} o
   * @param {() => number} o.clock  milliseconds
   * @param {() => unknown} o.frame  an id of the animation frame being drawn (the same within one
   *   frame; null when unknown, which lets every call draw a part)
   * @param {PaceTimers} o.timers
   * @param {number} [o.partWait]  how long the next part waits for an update's frame before it takes one of its own
   */
  constructor({ clock, frame, timers, partWait = 100 }) {
    this.clock = clock;
    this.frame = frame;
    this.timers = timers;
    this.partWait = partWait;
    this.last = -Infinity;
    this.forced = false;
    /** @type {(() => void)[] | null} the parts of the refresh under way, not drawn yet */
    this.pending = null;
    this.partFrame = undefined;
    this.gapTimer = null;
    this.waitTimer = null;
    this.frameHandle = null;
  }

  /** The next update refreshes whatever the gap (the learner changed something; training stopped). */
  force() { this.forced = true; }

  /** Whether a part of a refresh will be drawn at an update now: one is under way, forced, or the gap has passed. */
  due(gap) {
    return Boolean(this.pending?.length) || this.forced || this.clock() - this.last >= gap;
  }

  /**
   * Called at each of the element's updates (in its animation frame).
   * @param {object} o
   * @param {boolean} o.running  training: paced and in parts; otherwise every part now
   * @param {number} o.gap  milliseconds between refreshes while running
   * @param {() => (() => void)[]} o.parts  the refresh's parts, made when a refresh starts (each reads the
   *   state when it runs)
   * @param {() => void} o.again  asks for an update (the element's forced render) once the gap has passed
   * @returns {boolean} whether a part was drawn
   */
  update({ running, gap, parts, again }) {
    if (!running) {
      this.stop();
      this.forced = false;
      this.last = this.clock();
      for (const part of parts()) part();
      return true;
    }
    if (this.pending?.length) return this.next();
    if (!this.forced && this.clock() - this.last < gap) {
      this.timers.clearTimeout(this.gapTimer);
      this.gapTimer = this.timers.setTimeout(again, gap);
      return false;
    }
    this.forced = false;
    this.last = this.clock();
    this.pending = parts();
    return this.next();
  }

  /**
   * Draws the refresh's next part, unless one was drawn in this animation frame already; the part after
   * it waits for the next update, or, if none comes within partWait, takes a frame of its own.
   * @returns {boolean} whether a part was drawn
   */
  next() {
    this.cancelWait();
    const parts = this.pending;
    if (!parts?.length) return false;
    const frame = this.frame();
    let drew = false;
    if (frame === null || frame !== this.partFrame) {
      this.partFrame = frame;
      parts.shift()();
      drew = true;
    }
    if (parts.length) {
      this.waitTimer = this.timers.setTimeout(() => {
        this.waitTimer = null;
        this.frameHandle = this.timers.requestFrame(() => {
          this.frameHandle = null;
          this.next();
        });
      }, this.partWait);
    } else {
      this.pending = null;
    }
    return drew;
  }

  /**
   * Whether this animation frame is taken: a part was drawn in it, or something else costly was
   * ({@link claimFrame}). False when the frame is unknown.
   */
  frameTaken() {
    const frame = this.frame();
    return frame !== null && frame === this.partFrame;
  }

  /**
   * Something else costly was drawn in this animation frame (a heatmap's full redraw): no part of a
   * refresh is drawn in it; the next part waits for the next update, or partWait.
   */
  claimFrame() {
    this.partFrame = this.frame();
  }

  /** Drops the refresh under way and every timer (the element stops drawing, or will draw all at once). */
  stop() {
    this.cancelWait();
    this.timers.clearTimeout(this.gapTimer);
    this.gapTimer = null;
    this.pending = null;
  }

  cancelWait() {
    this.timers.clearTimeout(this.waitTimer);
    this.timers.cancelFrame(this.frameHandle);
    this.waitTimer = this.frameHandle = null;
  }
}

/** The page's clock, frame and timers, for an element. */
export function pageRefresh() {
  return new PacedRefresh({
    clock: () => performance.now(),
    frame: () => document.timeline?.currentTime ?? null,
    timers: {
      setTimeout: (fn, ms) => setTimeout(fn, ms),
      clearTimeout: (h) => clearTimeout(h),
      requestFrame: (fn) => requestAnimationFrame(fn),
      cancelFrame: (h) => { if (h !== null) cancelAnimationFrame(h); },
    },
  });
}
