// A stand-in for the training elements' client (components/shared/worker/trainer-client.js) in the
// Node tests of their controllers (trainer-controller.test.mjs, lm-controller.test.mjs).
import assert from 'node:assert/strict';

/** Lets pending promise callbacks run (the controller awaits its requests). */
export const settle = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Stands in for components/shared/worker/trainer-client.js: records requests; 'options' and 'run' are answered at
 * once, the others when the test answers them. Events go back through `onEvent`.
 */
export class FakeClient {
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.requests = [];
    this.dead = false;
    this.disposed = false;
    this.mode = 'worker';
  }

  request(type, payload = {}) {
    return new Promise((resolve, reject) => {
      const r = { type, payload, resolve, reject, answered: false };
      this.requests.push(r);
      if (type === 'options' || type === 'run') { r.answered = true; resolve(null); }
    });
  }

  /** The oldest unanswered request of `type`. */
  take(type) {
    const r = this.requests.find((x) => x.type === type && !x.answered);
    assert.ok(r, `a ${type} request was sent (sent: ${this.requests.map((x) => x.type).join(', ')})`);
    r.answered = true;
    return r;
  }

  sent(type) { return this.requests.filter((x) => x.type === type); }
  note() { return 'Training runs in a fake Worker.'; }
  dispose() { this.disposed = true; }

  /** The session pausing: a snapshot, then { event: 'paused' }, then the pause request's reply. */
  paused(reason = 'pause', extra = {}) {
    this.onEvent({ event: 'paused', reason, ...extra });
    const r = this.requests.find((x) => x.type === 'pause' && !x.answered);
    if (r) { r.answered = true; r.resolve(null); }
  }
}
