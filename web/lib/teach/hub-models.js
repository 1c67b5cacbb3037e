// The Hugging Face models <headlab-model-explorer> offers, one row each, and the words and marks
// the picker shows for them. No DOM, no network.
//
// The byte figures are the sizes the hub's model cards and "Files" listings gave when this table
// was written (December 2026); they are not fetched. They say what a learner is about to download
// before anything is; the engine checks the real sizes itself before the weights come: a HEAD-like
// look at model.safetensors' Content-Length (or the index's metadata.total_size for sharded files),
// and it refuses a model that cannot fit its WebAssembly memory before downloading the weights
// (lab.loadPretrained, web/lib/api/pretrained.js). A repository typed by hand is sized by
// teach/hub-size.js's HEAD requests.

/** A download below this many bytes is marked as one a phone can take (memory and data plan). */
export const PHONE_BYTES = 300e6;

/** Decoders predict the next token; encoders fill a masked word. In the picker's order. */
export const KINDS = ['decoder', 'encoder'];

/** The families, in the picker's order: name, kind, the architecture config.json names. */
export const FAMILIES = [
  { family: 'Llama', kind: 'decoder', architecture: 'LlamaForCausalLM' },
  { family: 'Qwen2', kind: 'decoder', architecture: 'Qwen2ForCausalLM' },
  { family: 'Pythia (GPT-NeoX)', kind: 'decoder', architecture: 'GPTNeoXForCausalLM' },
  { family: 'GPT-2', kind: 'decoder', architecture: 'GPT2LMHeadModel' },
  { family: 'GPT-Neo', kind: 'decoder', architecture: 'GPTNeoForCausalLM' },
  { family: 'Phi-3', kind: 'decoder', architecture: 'Phi3ForCausalLM' },
  { family: 'Gemma', kind: 'decoder', architecture: 'GemmaForCausalLM' },
  { family: 'BERT', kind: 'encoder', architecture: 'BertForMaskedLM' },
  { family: 'RoBERTa', kind: 'encoder', architecture: 'RobertaForMaskedLM' },
  { family: 'DistilBERT', kind: 'encoder', architecture: 'DistilBertForMaskedLM' },
];

const row = (r) => {
  const f = FAMILIES.find((x) => x.family === r.family);
  return Object.freeze({
    revision: undefined, gated: false, ...r,
    kind: f?.kind, architecture: f?.architecture,
    bytes: r.weightBytes + r.tokenizerBytes,
    phone: r.weightBytes + r.tokenizerBytes < PHONE_BYTES,
  });
};

/**
 * One row per model: `id` (owner/name on the hub), `revision` (when main has no model.safetensors),
 * `title`, `family` (FAMILIES), `kind` and `architecture` (from the family), `layers`, `heads`,
 * `kvHeads` (key-value heads; fewer than `heads` is grouped-query attention), `parameters`, `dtype`
 * of the hub file ('F32' | 'F16' | 'BF16'), `weightBytes` (model.safetensors, or the shards'
 * total_size) and `tokenizerBytes` (tokenizer.json) as the hub listed them, `bytes` their sum
 * (what is downloaded, besides a config.json of a few KB), `phone` (bytes < PHONE_BYTES), `gated`
 * (the hub wants a login and an accepted licence: HeadLab sends no token, so it cannot download
 * it), `why` (why a learner would pick it, in English; the catalogue has it in every language), and
 * `shape` where a file in this repository gives the model's sizes ({ dModel, dFF, vocab, positions (learned
 * position rows), tied (one embedding matrix in and out) }), from which tests/js/hub-models.test.mjs counts
 * the parameters.
 */
export const HUB_MODELS = Object.freeze([
  row({ id: 'HuggingFaceTB/SmolLM2-135M', title: 'SmolLM2-135M', family: 'Llama', layers: 30, heads: 9, kvHeads: 3,
    parameters: 134.5e6, dtype: 'BF16', weightBytes: 269.06e6, tokenizerBytes: 2.10e6,
    shape: { dModel: 576, dFF: 1536, vocab: 49152, tied: true },  // bench/pretrained/make_families.py's smollm2
    why: 'A modern Llama-style model small enough for a phone; 3 query heads share each key-value head' }),
  row({ id: 'HuggingFaceTB/SmolLM2-360M', title: 'SmolLM2-360M', family: 'Llama', layers: 32, heads: 15, kvHeads: 5,
    parameters: 361.8e6, dtype: 'BF16', weightBytes: 723.67e6, tokenizerBytes: 2.10e6,
    why: 'The same recipe, larger: more layers to find induction heads in' }),
  row({ id: 'TinyLlama/TinyLlama-1.1B-Chat-v1.0', title: 'TinyLlama-1.1B', family: 'Llama', layers: 22, heads: 32, kvHeads: 4,
    parameters: 1100e6, dtype: 'BF16', weightBytes: 2200.12e6, tokenizerBytes: 1.84e6,
    why: 'A 1.1 B Llama 2-style chat model: 8 query heads per key-value head; 2.2 GB, for a desktop browser' }),
  row({ id: 'meta-llama/Llama-3.2-1B', title: 'Llama 3.2 1B', family: 'Llama', layers: 16, heads: 32, kvHeads: 8,
    parameters: 1236e6, dtype: 'BF16', weightBytes: 2471.65e6, tokenizerBytes: 9.09e6, gated: true,
    why: 'Meta’s smallest Llama 3 (llama3 rope scaling); gated: the hub wants a login and Meta’s licence accepted' }),
  row({ id: 'Qwen/Qwen2.5-0.5B', title: 'Qwen2.5-0.5B', family: 'Qwen2', layers: 24, heads: 14, kvHeads: 2,
    parameters: 494e6, dtype: 'BF16', weightBytes: 988.10e6, tokenizerBytes: 7.03e6,
    why: 'A strong small model: 7 query heads share each of its 2 key-value heads; biases on q, k, v' }),
  row({ id: 'EleutherAI/pythia-70m', title: 'Pythia-70M', family: 'Pythia (GPT-NeoX)', layers: 6, heads: 8, kvHeads: 8,
    parameters: 70.4e6, dtype: 'F16', weightBytes: 166.03e6, tokenizerBytes: 2.11e6,
    why: 'Built for research: checkpoints across training, so heads can be watched as they form' }),
  row({ id: 'EleutherAI/pythia-160m', title: 'Pythia-160M', family: 'Pythia (GPT-NeoX)', layers: 12, heads: 12, kvHeads: 12,
    parameters: 162.3e6, dtype: 'F16', weightBytes: 374.98e6, tokenizerBytes: 2.11e6,
    why: 'GPT-2 small’s shape in the Pythia suite: parallel attention and MLP, rotary positions' }),
  row({ id: 'openai-community/gpt2', title: 'GPT-2 small', family: 'GPT-2', layers: 12, heads: 12, kvHeads: 12,
    parameters: 124.4e6, dtype: 'F32', weightBytes: 548.11e6, tokenizerBytes: 1.36e6,
    shape: { dModel: 768, dFF: 3072, vocab: 50257, positions: 1024, tied: true },  // bench/pretrained/make_gpt2_small.py
    why: 'The model most interpretability papers start from (induction heads, IOI circuit)' }),
  row({ id: 'distilbert/distilgpt2', title: 'distilgpt2', family: 'GPT-2', layers: 6, heads: 12, kvHeads: 12,
    parameters: 81.9e6, dtype: 'F32', weightBytes: 352.82e6, tokenizerBytes: 1.36e6,
    why: 'GPT-2 distilled to 6 layers: the same tokens, half the depth' }),
  row({ id: 'EleutherAI/gpt-neo-125m', title: 'GPT-Neo 125M', family: 'GPT-Neo', layers: 12, heads: 12, kvHeads: 12,
    parameters: 125.2e6, dtype: 'F32', weightBytes: 526.23e6, tokenizerBytes: 2.11e6,
    why: 'GPT-2 small’s size with local attention on every other layer' }),
  row({ id: 'roneneldan/TinyStories-1M', revision: 'refs/pr/1', title: 'TinyStories-1M', family: 'GPT-Neo', layers: 8, heads: 16, kvHeads: 16,
    parameters: 3.7e6, dtype: 'F32', weightBytes: 48.6e6, tokenizerBytes: 2.11e6,
    why: 'Tiny, trained on children’s stories: loads in seconds anywhere' }),
  row({ id: 'roneneldan/TinyStories-33M', title: 'TinyStories-33M', family: 'GPT-Neo', layers: 4, heads: 16, kvHeads: 16,
    parameters: 68.5e6, dtype: 'F32', weightBytes: 291e6, tokenizerBytes: 2.11e6,
    why: 'Four wide layers trained on children’s stories: clear induction heads' }),
  row({ id: 'microsoft/Phi-3-mini-4k-instruct', title: 'Phi-3 mini', family: 'Phi-3', layers: 32, heads: 32, kvHeads: 32,
    parameters: 3821e6, dtype: 'BF16', weightBytes: 7642.16e6, tokenizerBytes: 1.94e6,
    why: 'The smallest Phi-3 is 3.8 B parameters: it shows the limit, a tab’s engine cannot hold it' }),
  row({ id: 'google/gemma-2b', title: 'Gemma 2B', family: 'Gemma', layers: 18, heads: 8, kvHeads: 1,
    parameters: 2506e6, dtype: 'BF16', weightBytes: 5012.34e6, tokenizerBytes: 17.48e6, gated: true,
    why: 'One key-value head for all 8 query heads (multi-query); gated, and larger than a tab’s engine holds' }),
  row({ id: 'google-bert/bert-base-uncased', title: 'BERT base (uncased)', family: 'BERT', layers: 12, heads: 12, kvHeads: 12,
    parameters: 110e6, dtype: 'F32', weightBytes: 440.45e6, tokenizerBytes: 0.47e6,
    shape: { dModel: 768, dFF: 3072, vocab: 30522, positions: 512, tied: true },  // bench/pretrained/make_families.py's bert-base
    why: 'The model whose heads were found to track syntax (Clark et al. 2019): fill in [MASK]' }),
  row({ id: 'FacebookAI/roberta-base', title: 'RoBERTa base', family: 'RoBERTa', layers: 12, heads: 12, kvHeads: 12,
    parameters: 125e6, dtype: 'F32', weightBytes: 498.82e6, tokenizerBytes: 1.36e6,
    why: 'BERT trained longer on more text, with GPT-2’s tokens: fill in <mask>' }),
  row({ id: 'distilbert/distilbert-base-uncased', title: 'DistilBERT base (uncased)', family: 'DistilBERT', layers: 6, heads: 12, kvHeads: 12,
    parameters: 67e6, dtype: 'F32', weightBytes: 267.95e6, tokenizerBytes: 0.47e6,
    why: 'BERT distilled to 6 layers: the encoder that fits a phone' }),
]);

/** The row of a hub id, or undefined. */
export function hubModel(id) {
  return HUB_MODELS.find((m) => m.id === id);
}

/** The key of a row's words in the catalogue (catalogues/model-explorer.js): explorer.why.<slug of the id>. */
export function whyKey(model) {
  return `explorer.why.${model.id.replace(/[^\w]+/g, '-').toLowerCase()}`;
}

/** The test id of a row's picker button: explorer-hub-<slug of the title>. */
export function buttonTestId(model) {
  return `explorer-hub-${model.title.replace(/\W+/g, '-').replace(/-+$/, '').toLowerCase()}`;
}

/**
 * The picker's layout: [{ kind, families: [{ family, architecture, models: [row…] }] }], in the order
 * of KINDS and FAMILIES, families without a row left out.
 * @param {ReadonlyArray<object>} [models] default HUB_MODELS
 */
export function pickerGroups(models = HUB_MODELS) {
  if (!Array.isArray(models)) throw new TypeError(`pickerGroups: models must be an array of rows like HUB_MODELS', got ${typeof models}`);
  return KINDS.map((kind) => ({
    kind,
    families: FAMILIES.filter((f) => f.kind === kind)
      .map((f) => ({ family: f.family, architecture: f.architecture, models: models.filter((m) => m.family === f.family) }))
      .filter((f) => f.models.length),
  })).filter((k) => k.families.length);
}
