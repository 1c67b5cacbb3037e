// ONNX Runtime Web, wasm execution provider, one thread (or `threads`: its own
// pthreads, which need SharedArrayBuffer: Node, cross-origin isolated pages). Runs the graphs that
// bench/onnx/make_graphs.py wrote: com.microsoft.MultiHeadAttention when this ORT
// build has it and it runs at this size ('fused'), else plain
// MatMul/Reshape/Transpose/Softmax ('plain'). runner.variant says which ran.

async function loadOrt(ctx) {
  if (ctx.env === 'node') return import('onnxruntime-web');
  return import(ctx.root + 'node_modules/onnxruntime-web/dist/ort.wasm.min.mjs');
}

export async function createEngine(ctx, { graph = 'auto', threads = 1 } = {}) {
  const ort = await loadOrt(ctx);
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  const notes = [];
  const shared = typeof SharedArrayBuffer === 'function' && globalThis.crossOriginIsolated !== false;
  if (threads > 1) notes.push(shared ? `numThreads = ${threads}` : `numThreads = ${threads}, but this page is not cross-origin isolated: ORT falls back to 1 thread`);
  return {
    version: ort.env.versions?.web ?? 'unknown',
    notes,
    async setup(p) {
      const { T, d, h } = p;
      const shapes = p.mode === 'mha'
        ? { X: [1, T, d], Wq: [d, d], Wk: [d, d], Wv: [d, d], Wo: [d, d] }
        : { Q: [1, T, d], K: [1, T, d], V: [1, T, d] };
      const outName = p.mode === 'mha' ? 'Y' : 'O';
      const open = async (kind) => {
        const file = `bench/onnx/${p.mode}_${kind}_d${d}_h${h}.onnx`;
        const s = await ort.InferenceSession.create(await ctx.readBytes(file),
          { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
        // Unsupported ops can surface at the first run: try a tiny input.
        const tiny = {};
        for (const [name, dims] of Object.entries(shapes)) {
          const dd = dims.length === 3 ? [1, 4, d] : dims;  // [1, T, d] -> [1, 4, d]
          tiny[name] = new ort.Tensor('float32', new Float32Array(dd.reduce((a, b) => a * b, 1)), dd);
        }
        await s.run(tiny);
        return s;
      };
      const message = (e) => String(e?.message ?? e).split('\n')[0];

      let session = null;
      let fusedError = null;
      const runner = { variant: null };
      if (graph !== 'plain') {
        try {
          session = await open('fused');
          runner.variant = 'fused';
        } catch (e) {
          if (graph === 'fused') throw e;
          fusedError = message(e);
        }
      }
      if (!session) {
        session = await open('plain');
        runner.variant = 'plain';
      }
      const feeds = {};
      for (const [name, dims] of Object.entries(shapes)) {
        const src = { X: p.X, Wq: p.Wq, Wk: p.Wk, Wv: p.Wv, Wo: p.Wo, Q: p.Q, K: p.K, V: p.V }[name];
        feeds[name] = new ort.Tensor('float32', src, dims);
      }
      const threadNote = notes.filter((n) => n.startsWith('numThreads'));
      const describe = () => {
        notes.length = 0;
        notes.push(...threadNote);
        notes.push(runner.variant === 'fused' ? 'graph: MatMul + com.microsoft.MultiHeadAttention'
          : 'graph: plain ops (MatMul, Reshape/Transpose, Softmax)');
        if (fusedError) runner.fusedError = fusedError;
      };
      describe();
      runner.run = async () => {
        try {
          return (await session.run(feeds))[outName].data;
        } catch (e) {
          // The fused op can fail on the real size where plain ops still run
          // (ORT 1.30's MultiHeadAttention overflows an integer at T = 4096).
          if (runner.variant !== 'fused' || graph !== 'auto') throw e;
          fusedError = message(e);
          await session.release();
          session = await open('plain');
          runner.variant = 'plain';
          runner.retimeFirst = true;  // this call's time includes the failed attempt
          describe();
          return (await session.run(feeds))[outName].data;
        }
      };
      runner.dispose = () => session.release();
      return runner;
    },
  };
}
