// ONNX Runtime Web inputs for the benchmark's exports: `input_ids` int64 [1, T], and for a graph
// with `past_key_values.N.key` / `.value` inputs (make_families.py's Llama) an empty cache [1, KV, 0, hd]
// on a full pass, and the previous run's `present.N.*` on each generated token.

/** `session` an ort.InferenceSession, `config` the model's config.json. */
export function ortFeeds(ort, session, config) {
  const pastNames = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const hasPast = pastNames.length > 0;
  const ids = (xs) => new ort.Tensor('int64', BigInt64Array.from(xs, (x) => BigInt(x)), [1, xs.length]);
  let emptyPast = null;
  if (hasPast) {
    const kv = config.num_key_value_heads ?? config.num_attention_heads;
    const hd = config.head_dim ?? config.hidden_size / config.num_attention_heads;
    emptyPast = Object.fromEntries(pastNames.map((n) => [n, new ort.Tensor('float32', new Float32Array(0), [1, kv, 0, hd])]));
  }
  const argmaxLast = (logits) => {
    const V = logits.dims[2], T = logits.dims[1], d = logits.data;
    let best = 0;
    for (let v = 1; v < V; v++) if (d[(T - 1) * V + v] > d[(T - 1) * V + best]) best = v;
    return best;
  };
  return {
    hasPast,
    /** Feeds for one pass over `xs` from an empty cache. */
    feed: (xs) => ({ input_ids: ids(xs), ...emptyPast }),
    /** Greedy continuation of `prompt` by `n` tokens through the cache (the prompt in one pass). */
    async greedy(prompt, n) {
      if (!hasPast) throw new Error('greedy: this graph has no past_key_values inputs');
      let out = await session.run({ input_ids: ids(prompt), ...emptyPast });
      const next = [];
      for (let i = 0; i < n; i++) {
        const tok = argmaxLast(out.logits);
        next.push(tok);
        if (i === n - 1) break;
        const feed = { input_ids: ids([tok]) };
        for (const name of pastNames) feed[name] = out[name.replace('past_key_values.', 'present.')];
        out = await session.run(feed);
      }
      return next;
    },
  };
}
