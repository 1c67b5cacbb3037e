// Tracks every WebAssembly.Memory an engine creates or exports, so that the
// benchmark can report the wasm heap of any engine (HeadLab, ORT, TF.js) the same
// way. Memories only grow, so their size at the end of a run is the peak.

const memories = new Set();
const OrigMemory = WebAssembly.Memory;  // instanceof must not see the subclass below
let installed = false;

function scan(obj, depth = 0) {
  if (!obj || typeof obj !== 'object' || depth > 2) return;
  if (obj instanceof OrigMemory) { memories.add(obj); return; }
  for (const v of Object.values(obj)) scan(v, depth + 1);
}

/** Wraps WebAssembly's constructors and instantiate functions; call before loading an engine. */
export function trackWasmMemory() {
  if (installed) return;
  installed = true;
  const W = WebAssembly;
  const OrigInstance = W.Instance;
  class Memory extends OrigMemory {
    constructor(...args) { super(...args); memories.add(this); }
  }
  class Instance extends OrigInstance {
    constructor(module, imports) { super(module, imports); scan(imports); scan(this.exports); }
  }
  W.Memory = Memory;
  W.Instance = Instance;
  const origInstantiate = W.instantiate;
  W.instantiate = async function instantiate(source, imports) {
    const result = await origInstantiate.call(W, source, imports);
    scan(imports);
    scan((result.instance ?? result).exports);
    return result;
  };
  if (W.instantiateStreaming) {
    const origStreaming = W.instantiateStreaming;
    W.instantiateStreaming = async function instantiateStreaming(source, imports) {
      const result = await origStreaming.call(W, source, imports);
      scan(imports);
      scan(result.instance.exports);
      return result;
    };
  }
}

/** Total bytes of every tracked memory now. */
export function wasmMemoryBytes() {
  let total = 0;
  for (const m of memories) total += m.buffer.byteLength;
  return total;
}
