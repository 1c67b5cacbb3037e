// The Worker behind ParallelLayer (headlab.js): it loads the module, holds a slice
// of the heads as an AttentionLayer, and answers forward calls with its partial
// result. A module Worker in browsers (same origin as headlab.js, so a strict
// Content-Security-Policy allows it), a worker_threads Worker in Node.
//
// Messages in:  { type: 'init', load: { flavour, wasmBinary?, wasmUrl? }, layer: createLayer's options }
//               { type: 'forward', id, call: AttentionLayer.forward's options }
// Messages out: { type: 'ready' } | { type: 'result', id, result } | { type: 'error', id?, error: { name, message } }
import { createHeadlab } from './headlab.js';

// No Node built-in is imported by name (browser bundles follow this file from headlab.js).
const port = typeof WorkerGlobalScope === 'function' && globalThis instanceof WorkerGlobalScope
  ? globalThis
  : globalThis.process.getBuiltinModule('worker_threads').parentPort;

let layer = null;
let queue = Promise.resolve();  // messages are handled one at a time, in order

async function handle(message) {
  if (message.type === 'init') {
    const { flavour, wasmBinary, wasmUrl } = message.load;
    const options = { flavour };
    if (wasmBinary) options.wasmBinary = wasmBinary;
    if (wasmUrl) options.locateFile = () => wasmUrl;
    const lab = await createHeadlab(options);
    layer = lab.createLayer(message.layer);
    port.postMessage({ type: 'ready' });
    return;
  }
  const result = layer.forward(message.call);
  // Every array in the result is a fresh copy: hand its memory over instead of copying it again.
  const transfer = [result.output.buffer];
  if (result.weights) transfer.push(result.weights.buffer);
  if (result.intermediates) transfer.push(...Object.values(result.intermediates).map((a) => a.buffer));
  port.postMessage({ type: 'result', id: message.id, result }, transfer);
}

function receive(message) {
  queue = queue.then(() => handle(message)).catch((e) => {
    port.postMessage({ type: 'error', id: message.id, error: { name: e?.name ?? 'Error', message: String(e?.message ?? e) } });
  });
}

if (port === globalThis) globalThis.onmessage = (e) => receive(e.data);
else port.on('message', receive);
