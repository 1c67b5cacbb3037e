// TensorFlow.js with the wasm backend (SIMD, non-threaded binary, one thread),
// composed from ops: matMul, reshape, transpose, softmax.

async function loadTf(ctx) {
  if (ctx.env === 'node') {
    const tf = await import('@tensorflow/tfjs-core');
    const wasm = await import('@tensorflow/tfjs-backend-wasm');
    return { tf, wasm };
  }
  // The ES bundles import Node built-ins; the UMD bundles define globalThis.tf.
  await ctx.loadScript('node_modules/@tensorflow/tfjs-core/dist/tf-core.min.js');
  await ctx.loadScript('node_modules/@tensorflow/tfjs-backend-wasm/dist/tf-backend-wasm.min.js');
  const tf = globalThis.tf;
  tf.wasm.setWasmPaths(ctx.root + 'node_modules/@tensorflow/tfjs-backend-wasm/dist/');
  return { tf, wasm: tf.wasm };
}

export async function createEngine(ctx) {
  const { tf, wasm } = await loadTf(ctx);
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);  // picks tfjs-backend-wasm-simd.wasm
  if (typeof wasm.setThreadsCount === 'function') wasm.setThreadsCount(1);
  if (!(await tf.setBackend('wasm'))) throw new Error('tf.setBackend("wasm") failed');
  await tf.ready();
  const simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
  const notes = [`SIMD ${simd ? 'on' : 'OFF'}, threads ${tf.env().getBool('WASM_HAS_MULTITHREAD_SUPPORT') ? 'on' : 'off'}`];
  return {
    version: `${tf.version_core} / wasm ${wasm.version_wasm}`,
    notes,
    async setup(p) {
      const { T, d, h, dk } = p;
      const scale = 1 / Math.sqrt(dk);
      // [T, d] -> [h, T, dk]
      const toHeads = (x) => tf.transpose(tf.reshape(x, [T, h, dk]), [1, 0, 2]);
      const attend = (q, k, v) => {
        const scores = tf.matMul(tf.mul(q, scale), k, false, true);          // [h, T, T]
        const heads = tf.matMul(tf.softmax(scores), v);                       // [h, T, dk]
        return tf.reshape(tf.transpose(heads, [1, 0, 2]), [T, d]);            // [T, d]
      };
      let inputs, graph;
      if (p.mode === 'mha') {
        inputs = [tf.tensor2d(p.X, [T, d]), tf.tensor2d(p.Wq, [d, d]), tf.tensor2d(p.Wk, [d, d]),
          tf.tensor2d(p.Wv, [d, d]), tf.tensor2d(p.Wo, [d, d])];
        const [X, Wq, Wk, Wv, Wo] = inputs;
        graph = () => tf.matMul(attend(toHeads(tf.matMul(X, Wq)), toHeads(tf.matMul(X, Wk)),
          toHeads(tf.matMul(X, Wv))), Wo);
      } else {
        // Attention only: Q, K, V handed over in the per-head layout [h, T, dk].
        inputs = tf.tidy(() => [p.Q, p.K, p.V].map((a) => toHeads(tf.tensor2d(a, [T, d]))));
        const [Q, K, V] = inputs;
        graph = () => attend(Q, K, V);
      }
      return {
        run: () => {
          const y = tf.tidy(graph);
          const out = y.dataSync();
          y.dispose();
          return out;
        },
        dispose: () => tf.dispose(inputs),
      };
    },
  };
}
