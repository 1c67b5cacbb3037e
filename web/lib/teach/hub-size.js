// How much a Hugging Face repository's model costs to download, asked of the hub before any
// weights are fetched: HEAD requests for model.safetensors (or the index of its shards, whose
// metadata.total_size says the shards' bytes) and tokenizer.json. Content-Length is a
// CORS-safelisted header, so a page can read it from the hub (which sends CORS headers) and
// from its CDN, where the hub redirects weight files. No DOM.

/**
 * @param {{ hubUrl?: string, id: string, revision?: string, fetch?: typeof fetch, signal?: AbortSignal }} o
 * @returns {Promise<{ bytes: number|null, files: Record<string, number|null>, problem: string }>}
 *   bytes: the sum (null when the weights' size is unknown); problem: why, in words ('' when known)
 */
export async function hubDownloadSize({ hubUrl = 'https://huggingface.co', id, revision = 'main', fetch: get = globalThis.fetch, signal } = {}) {
  if (typeof id !== 'string' || !/^[\w.-]+\/[\w.-]+$/.test(id)) throw new TypeError(`hubDownloadSize: id must look like owner/name, got ${JSON.stringify(id)}`);
  const base = `${hubUrl.replace(/\/+$/, '')}/${id}/resolve/${encodeURIComponent(revision)}/`;
  const head = async (file) => {
    const r = await get(base + file, { method: 'HEAD', signal });
    if (r.status === 404) return null;
    if (!r.ok) throw new Error(`${id}: ${file}: HTTP ${r.status}`);
    const n = Number(r.headers.get('content-length'));
    return Number.isFinite(n) && n > 0 ? n : NaN;
  };
  const files = {};
  files['model.safetensors'] = await head('model.safetensors');
  let weights = files['model.safetensors'];
  let problem = '';
  if (weights === null) {
    delete files['model.safetensors'];
    const r = await get(`${base}model.safetensors.index.json`, { signal });
    if (r.ok) {
      const index = await r.json().catch(() => null);
      const total = index?.metadata?.total_size;
      weights = Number.isFinite(total) ? total : NaN;
      files['model.safetensors.index.json (shards)'] = weights;
    } else if (await head('pytorch_model.bin')) {
      problem = `${id} has only pytorch_model.bin at revision ${revision}; HeadLab reads model.safetensors (look for a converted copy in a refs/pr/… revision)`;
    } else {
      problem = `${id} has no model.safetensors at revision ${revision}`;
    }
  }
  files['tokenizer.json'] = await head('tokenizer.json');
  if (Number.isNaN(weights) && !problem) problem = 'the hub did not say how large the weights are';
  const known = Number.isFinite(weights);
  return { bytes: known ? weights + (files['tokenizer.json'] || 0) : null, files, problem };
}
