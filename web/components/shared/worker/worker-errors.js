// Errors across the message layer (worker-rpc.js), in a module of their own: the Worker side
// (session-host.js) imports these without the page side's Worker factories (worker-files.js),
// which would make each Worker bundle name every Worker, itself included (a cycle bundlers refuse).

/** An error sent across as { name, message, code?, params? }, rebuilt with the same type and code. */
export function rebuildError(e) {
  const Ctor = { TypeError, RangeError }[e?.name] ?? Error;
  const error = new Ctor(e?.message ?? String(e));
  if (typeof e?.code === 'string') Object.assign(error, { code: e.code, params: e.params ?? {} });
  return error;
}

/** The { error, fatal } part of a reply for an exception thrown in the Worker. */
export function errorReply(e) {
  const error = { name: e?.name ?? 'Error', message: e?.message ?? String(e) };
  if (typeof e?.code === 'string') Object.assign(error, { code: e.code, params: JSON.parse(JSON.stringify(e.params ?? {})) });
  return { error, fatal: e instanceof WebAssembly.RuntimeError };
}
