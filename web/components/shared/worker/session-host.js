// The Worker side of worker-rpc.js's messages: answers { id, type, payload } with
// { id, result } or { id, error }; a session's snapshots and pauses go out as
// { event }. Every *-worker.js (the compute Worker, the trainer's, the language
// model's) opens its session through this.

import { errorReply } from './worker-errors.js';

// Chunks are queued through a MessageChannel: setTimeout(0) is clamped to 4 ms
// once nested, which would idle the Worker for a sixth of every chunk.
const channel = new MessageChannel();
const queued = [];
channel.port1.onmessage = () => queued.shift()?.();
export const schedule = (fn) => { queued.push(fn); channel.port2.postMessage(0); };

/**
 * @param {(post: (message: object, transfer?: Transferable[]) => void) => Promise<{ handle: Function }>} open
 *   opens the session; `post` sends its events
 * @param {{ warmUp?: () => Promise<void>, stopWarmUp?: () => void, startsWork?: (type: string) => boolean }} [o]
 *   warmUp runs once the session is ready (a throwaway run that gets the browser to optimise the
 *   wasm while the page is read); stopWarmUp is called when a request in startsWork arrives
 */
export function hostSession(open, { warmUp, stopWarmUp, startsWork = () => false } = {}) {
  // A message marked fatal reports an abort of the WebAssembly module (e.g. out of
  // memory), which leaves it unusable: the Worker stops after sending it, and the
  // page starts a new one.
  const post = (message, transfer = []) => {
    self.postMessage(message, transfer);
    if (message.fatal) self.close();
  };
  const ready = open(post);
  // While a request is handled, { alive: true } every second: the page can tell a request that takes
  // long (a download on a slow network) from a Worker that stopped (trainer-client.js's watchdog).
  let handling = 0;
  let beat = null;
  self.addEventListener('message', async (event) => {
    const { id, type, payload } = event.data ?? {};
    if (startsWork(type)) stopWarmUp?.();
    if (handling++ === 0) beat = setInterval(() => self.postMessage({ alive: true }), 1000);
    try {
      const session = await ready;
      const { result, transfer } = await session.handle(type, payload);
      post({ id, result }, transfer ?? []);
    } catch (e) {
      post({ id, ...errorReply(e) });
    } finally {
      if (--handling === 0) clearInterval(beat);
    }
  });
  ready.then(() => {
    post({ ready: true });
    if (warmUp) setTimeout(() => warmUp().catch(() => stopWarmUp?.()), 0);
  }, (e) => post({ failed: String(e?.message ?? e) }));
}
