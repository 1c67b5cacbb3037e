// HeadLab through its public API (web/lib/headlab.js).
// flavour 'simd' is the shipped build; 'scalar' is web/lib/gen/headlab_core_scalar.*,
// loaded through createHeadlab({ flavour: 'scalar' }) when the API has that option.
// With `threads`, the multi-core layer (lab.createParallelLayer; `mechanism` as it takes it: by
// default pthreads where SharedArrayBuffer and isolation allow, else Workers splitting the heads).

/** Identity [n, n]. */
function identity(n) {
  const I = new Float32Array(n * n);
  for (let i = 0; i < n; i++) I[i * n + i] = 1;
  return I;
}

/** Columns off..off+w-1 of a [rows, cols] matrix, as [rows, w]. */
function columns(A, rows, cols, off, w) {
  const out = new Float32Array(rows * w);
  for (let r = 0; r < rows; r++) out.set(A.subarray(r * cols + off, r * cols + off + w), r * w);
  return out;
}

export async function createEngine(ctx, { flavour = 'simd', threads = 0, mechanism = 'auto' } = {}) {
  const { createHeadlab } = await import(ctx.root + (ctx.headlabModule ?? 'web/lib/headlab.js'));
  const lab = flavour === 'scalar' ? await createHeadlab({ flavour: 'scalar' }) : await createHeadlab();
  const info = lab.info();
  const notes = [];
  if (flavour === 'scalar' && info.simd) {
    const err = new Error('createHeadlab has no { flavour: "scalar" } option yet (it returned the SIMD build)');
    err.skip = true;
    throw err;
  }
  if (flavour === 'simd' && !info.simd) notes.push('warning: the module reports simd=false');
  return {
    version: `${info.version} (${info.isa})`,
    notes,
    memory: () => ({ wasmBytes: lab.info().memoryBytes }),
    async setup(p) {
      const { T, d, h } = p;
      if (threads) {
        if (p.mode !== 'mha') {
          const err = new Error('the multi-core layer is measured with projections only');
          err.skip = true;
          throw err;
        }
        if (mechanism === 'workers' && lab.info().parallel.mechanism === 'workers') {
          const err = new Error('the Workers are the default mechanism here (HeadLab 2 threads)');
          err.skip = true;
          throw err;
        }
        const layer = await lab.createParallelLayer({ dModel: d, numHeads: h, wQ: p.Wq, wK: p.Wk, wV: p.Wv, wO: p.Wo, threads, mechanism });
        notes.push(`lab.createParallelLayer({ threads: ${threads}${mechanism === 'auto' ? '' : `, mechanism: '${mechanism}'`} }): ` +
          `${layer.mechanism === 'pthreads' ? `${layer.threads} pthreads of one wasm module taking the ${h} heads, then blocks of 64 query rows, one at a time` : `${layer.threads} Workers, ${h / layer.threads} heads each`}; each run awaits layer.forward({ query })`);
        this.mechanism = layer.mechanism;
        return { run: async () => (await layer.forward({ query: p.X })).output, dispose: () => layer.dispose() };
      }
      if (p.mode === 'mha') {
        // The weights go into the wasm heap once (createLayer), as ORT holds its initializers;
        // each run moves the input in and the output out.
        if (typeof lab.createLayer === 'function') {
          const layer = lab.createLayer({ dModel: d, numHeads: h, wQ: p.Wq, wK: p.Wk, wV: p.Wv, wO: p.Wo });
          notes.push('weights held by lab.createLayer (copied once), like ORT\'s initializers');
          return { run: () => layer.forward({ query: p.X }).output, dispose: () => layer.dispose() };
        }
        const options = { query: p.X, dModel: d, numHeads: h, wQ: p.Wq, wK: p.Wk, wV: p.Wv, wO: p.Wo };
        return { run: () => lab.multiHeadAttention(options).output };
      }
      // Attention only: the API always projects, so run one head per call with
      // dModel = dk and identity projections (their 8·T·dk² FLOPs per head are not counted).
      const dk = p.dk, I = identity(dk);
      const heads = [];
      for (let i = 0; i < h; i++) {
        const slice = (A) => columns(A, T, d, i * dk, dk);
        heads.push({ query: slice(p.Q), key: slice(p.K), value: slice(p.V) });
      }
      const layer = typeof lab.createLayer === 'function' ? lab.createLayer({ dModel: dk, numHeads: 1, wQ: I, wK: I, wV: I, wO: I }) : null;
      const attend = layer
        ? (x) => layer.forward(x)
        : (x) => lab.multiHeadAttention({ ...x, dModel: dk, numHeads: 1, wQ: I, wK: I, wV: I, wO: I });
      notes.push('attention-only: h calls with dModel=d_k and identity projections (extra 2·d_k/T of the counted FLOPs, uncounted)');
      return {
        run: () => {
          const out = new Float32Array(T * d);
          for (let i = 0; i < h; i++) {
            const o = attend(heads[i]).output;
            for (let r = 0; r < T; r++) out.set(o.subarray(r * dk, (r + 1) * dk), r * d + i * dk);
          }
          return out;
        },
      };
    },
  };
}
