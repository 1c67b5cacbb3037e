// WASM SIMD peak-FLOPS probe: a hand-assembled module whose loop runs C
// independent chains of acc = acc * m + c on f32x4 (separate mul and add, as
// baseline SIMD128 has no FMA). Each iteration is C chains x (4 mul + 4 add) = 8·C FLOPs.
//
//   (func (export "run") (param $n i32) (result f32)
//     (local $acc0..$acc{C-1} v128) (local $m v128) (local $c v128)
//     m = splat 0.9999; c = splat 1e-4; acc_i = splat (1 + i/C)
//     loop while n != 0 { acc_i = f32x4.add(f32x4.mul(acc_i, m), c) for each i; n -= 1 }
//     return lane 0 of (acc0 + ... + acc{C-1}))
//
// With 8 chains the loop is latency-bound (a mul then an add, ~3 cycles each, per chain and
// iteration); 24-32 chains keep the SIMD pipes busy. measurePeak tries several counts and reports
// the best, which is the roof engines' shares of peak are quoted against.

export const CHAIN_COUNTS = [8, 16, 24, 32];

function leb(n) {
  const out = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}
const f32 = (x) => [...new Uint8Array(new Float32Array([x]).buffer)];
const simd = (op) => [0xfd, ...leb(op)];
const SPLAT = 0x13, EXTRACT_LANE = 0x1f, ADD = 0xe4, MUL = 0xe6;  // f32x4.*
const GET = 0x20, SET = 0x21, F32_CONST = 0x43;
const section = (id, bytes) => [id, ...leb(bytes.length), ...bytes];

export function peakModuleBytes(CHAINS = 8) {
  if (!Number.isInteger(CHAINS) || CHAINS < 1 || CHAINS > 100) throw new RangeError(`peakModuleBytes: chains must be an integer in [1, 100], got ${CHAINS}`);
  const n = 0, acc = (i) => 1 + i, m = 1 + CHAINS, c = 2 + CHAINS;
  const body = [];
  body.push(F32_CONST, ...f32(0.9999), ...simd(SPLAT), SET, m);
  body.push(F32_CONST, ...f32(1e-4), ...simd(SPLAT), SET, c);
  for (let i = 0; i < CHAINS; i++) body.push(F32_CONST, ...f32(1 + i / CHAINS), ...simd(SPLAT), SET, acc(i));
  body.push(0x02, 0x40, 0x03, 0x40);                         // block, loop
  body.push(GET, n, 0x45, 0x0d, 1);                          // br_if 1 (n == 0)
  for (let i = 0; i < CHAINS; i++) {
    body.push(GET, acc(i), GET, m, ...simd(MUL), GET, c, ...simd(ADD), SET, acc(i));
  }
  body.push(GET, n, 0x41, 1, 0x6b, SET, n, 0x0c, 0, 0x0b, 0x0b);  // n -= 1; br 0; end; end
  body.push(GET, acc(0));
  for (let i = 1; i < CHAINS; i++) body.push(GET, acc(i), ...simd(ADD));
  body.push(...simd(EXTRACT_LANE), 0, 0x0b);
  const func = [1, ...leb(CHAINS + 2), 0x7b, ...body];       // one group of v128 locals
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 1, 0x7f, 1, 0x7d]),              // type: (i32) -> f32
    ...section(3, [1, 0]),                                   // function 0 has type 0
    ...section(7, [1, 3, 0x72, 0x75, 0x6e, 0x00, 0]),        // export "run"
    ...section(10, [1, ...leb(func.length), ...func]),
  ]);
}

/** Best GFLOP/s of one chain count over `runs` timed runs of ~0.1 s each, after warm-up (lets the tiering compiler finish). */
async function measureChains(chains, runs) {
  const { instance } = await WebAssembly.instantiate(peakModuleBytes(chains));
  const run = instance.exports.run;
  for (let i = 0; i < 20; i++) run(100000);
  let iters = 1 << 18, best = 0;
  for (;;) {  // size a run to ~100 ms
    const t0 = performance.now();
    run(iters);
    const ms = performance.now() - t0;
    if (ms > 50) { iters = Math.ceil(iters * 100 / ms); break; }
    iters *= 4;
  }
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    run(iters);
    const s = (performance.now() - t0) / 1e3;
    best = Math.max(best, (iters * chains * 8) / s / 1e9);
  }
  return best;
}

/**
 * The SIMD128 roof: each chain count in `chains` is timed (best of `runs`), in rounds that take
 * turns so that a burst of load elsewhere does not favour one count; `gflops` is the maximum over
 * counts, `chains` the count that gave it, `byChains` every count's best.
 */
export async function measurePeak({ runs = 5, chains = CHAIN_COUNTS } = {}) {
  const byChains = Object.fromEntries(chains.map((c) => [c, 0]));
  const rounds = 2;
  for (let r = 0; r < rounds; r++) {
    for (const c of chains) byChains[c] = Math.max(byChains[c], await measureChains(c, Math.ceil(runs / rounds)));
  }
  const [bestChains, gflops] = Object.entries(byChains).reduce((a, b) => (b[1] > a[1] ? b : a));
  return {
    gflops, chains: Number(bestChains), byChains,
    note: `max over ${chains.join('/')} independent f32x4 mul+add chains (${bestChains} here), best of ${rounds * Math.ceil(runs / rounds)} runs each`,
  };
}
