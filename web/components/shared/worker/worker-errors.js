// Errors across the message layer (worker-rpc.js), in a module of their own: the Worker side
// (session-host.js) imports these without the page side's Worker factories (worker-files.js),
// which would make each Worker bundle name every Worker, itself included (a cycle bundlers refuse).

/** An error sent across as { name, message }, rebuilt with the same type. */
export function rebuildError(e) {
  const Ctor = { TypeError, RangeError }[e?.name] ?? Error;
  return new Ctor(e?.message ?? String(e));
}

/** The { error, fatal } part of a reply for an exception thrown in the Worker. */
export function errorReply(e) {
  return { error: { name: e?.name ?? 'Error', message: e?.message ?? String(e) }, fatal: e instanceof WebAssembly.RuntimeError };
}
