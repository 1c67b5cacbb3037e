// config.json of a Hugging Face checkpoint → the engine's configuration (PretrainedCore.configure),
// with an Error naming the field for anything the engine does not run.

/** The architectures HeadLab runs, as config.json's `architectures` names them (READERS' keys). */
export const SUPPORTED_ARCHITECTURES = ['GPT2LMHeadModel', 'GPTNeoForCausalLM', 'LlamaForCausalLM', 'Qwen2ForCausalLM',
  'MistralForCausalLM', 'GPTNeoXForCausalLM', 'Phi3ForCausalLM', 'GemmaForCausalLM',
  'BertForMaskedLM', 'RobertaForMaskedLM', 'DistilBertForMaskedLM', 'BertModel'];

function field(fn, config, names, { optional = false, fallback } = {}) {
  for (const name of names) {
    const v = config[name];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 2 ** 31 - 1) {
      throw new Error(`${fn}: config.json: ${name} must be a positive integer, got ${JSON.stringify(v)}`);
    }
    return v;
  }
  if (optional) return fallback;
  throw new Error(`${fn}: config.json: ${names.join(' (or ')}${names.length > 1 ? ')' : ''} is missing`);
}

function tokenId(fn, config, name, vocabSize) {
  const v = config[name];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= vocabSize) {
    throw new Error(`${fn}: config.json: ${name} must be a token id in 0..${vocabSize - 1}, got ${JSON.stringify(v)}`);
  }
  return v;
}

/**
 * Reads config.json. Returns { engine, info, bosId, eosId }: `engine` is what
 * PretrainedCore.configure takes, `info` the public part of model.info.
 */
export function readConfig(fn, config) {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new Error(`${fn}: config.json must hold a JSON object, got ${Array.isArray(config) ? 'an array' : typeof config}`);
  }
  const archs = config.architectures;
  const supported = SUPPORTED_ARCHITECTURES.join(', ');
  if (!Array.isArray(archs) || archs.length === 0 || !archs.every((a) => typeof a === 'string')) {
    throw new Error(`${fn}: config.json: architectures must list the model's class (HeadLab runs ${supported}), ` +
      `got ${JSON.stringify(archs)}${config.model_type ? ` (model_type ${JSON.stringify(config.model_type)})` : ''}`);
  }
  const architecture = archs.find((a) => SUPPORTED_ARCHITECTURES.includes(a));
  if (!architecture) {
    throw new Error(`${fn}: config.json: architectures ${JSON.stringify(archs)} is not supported; HeadLab runs ${supported}`);
  }
  const { engine, info } = READERS[architecture](fn, config);
  const bosId = tokenId(fn, config, 'bos_token_id', engine.vocabSize);
  const eosId = tokenId(fn, config, 'eos_token_id', engine.vocabSize);
  // torch_dtype, when config.json gives one the engine knows: the weights must be stored so.
  const dtype = { float32: 'F32', float16: 'F16', bfloat16: 'BF16' }[config.torch_dtype];
  if (dtype) engine.dtype = dtype;
  return { engine, info: { architecture, ...info }, bosId, eosId };
}

/** GPT2LMHeadModel and GPTNeoForCausalLM: learned positions, LayerNorm, GELU (tanh). */
function readGpt(fn, config, gpt2) {
  const numLayers = field(fn, config, gpt2 ? ['n_layer'] : ['num_layers']);
  const numHeads = field(fn, config, gpt2 ? ['n_head'] : ['num_heads']);
  const dModel = field(fn, config, gpt2 ? ['n_embd'] : ['hidden_size']);
  const vocabSize = field(fn, config, ['vocab_size']);
  const contextLength = field(fn, config, gpt2 ? ['n_positions', 'n_ctx'] : ['max_position_embeddings']);
  const dFF = field(fn, config, gpt2 ? ['n_inner'] : ['intermediate_size'], { optional: true, fallback: 4 * dModel });
  if (dModel % numHeads !== 0) {
    throw new Error(`${fn}: config.json: ${gpt2 ? 'n_head' : 'num_heads'} ${numHeads} does not divide ${gpt2 ? 'n_embd' : 'hidden_size'} ${dModel}`);
  }
  const eps = epsilon(fn, config, 'layer_norm_epsilon', 1e-5);
  const activation = config.activation_function ?? 'gelu_new';
  if (activation !== 'gelu_new') {
    throw new Error(`${fn}: config.json: activation_function ${JSON.stringify(activation)} is not supported; HeadLab runs gelu_new (GELU, tanh form)`);
  }
  let windows = new Array(numLayers).fill(0);
  if (gpt2) {
    if (config.scale_attn_by_inverse_layer_idx === true) {
      throw new Error(`${fn}: config.json: scale_attn_by_inverse_layer_idx true is not supported (HeadLab scales scores by 1/√d_k only)`);
    }
    if (config.scale_attn_weights !== undefined && typeof config.scale_attn_weights !== 'boolean') {
      throw new Error(`${fn}: config.json: scale_attn_weights must be a boolean, got ${JSON.stringify(config.scale_attn_weights)}`);
    }
  } else {
    windows = neoWindows(fn, config, numLayers);
  }
  const engine = {
    architecture: gpt2 ? 'gpt2' : 'gpt_neo', numLayers, numHeads, dModel, dFF, vocabSize, contextLength,
    layerNormEps: eps, scaleScores: gpt2 ? config.scale_attn_weights !== false : false, windows, activation: 'gelu_new',
  };
  return { engine, info: { numLayers, numHeads, dModel, vocabSize, contextLength } };
}

function epsilon(fn, config, name, fallback) {
  const eps = config[name] ?? fallback;
  if (typeof eps !== 'number' || !(eps > 0 && eps < 1)) {
    throw new Error(`${fn}: config.json: ${name} must be a number in (0, 1), got ${JSON.stringify(eps)}`);
  }
  return eps;
}

function refuse(fn, key, value, why) {
  throw new Error(`${fn}: config.json: ${key} ${JSON.stringify(value)} is not supported${why ? ` (${why})` : ''}`);
}

/** rope_scaling: null, or llama3 with its four keys; any other type is refused naming it. */
function ropeScaling(fn, config) {
  const s = config.rope_scaling;
  if (s === undefined || s === null) return undefined;
  const type = s.rope_type ?? s.type;
  if (type === 'default') return undefined;
  if (type !== 'llama3') refuse(fn, 'rope_scaling.rope_type', type, 'HeadLab runs llama3 scaling or none');
  const num = (k) => {
    if (typeof s[k] !== 'number' || !(s[k] > 0)) throw new Error(`${fn}: config.json: rope_scaling.${k} must be a positive number, got ${JSON.stringify(s[k])}`);
    return s[k];
  };
  return { factor: num('factor'), lowFreqFactor: num('low_freq_factor'), highFreqFactor: num('high_freq_factor'),
    originalContext: num('original_max_position_embeddings') };
}

/**
 * The rotary decoders (Llama, Qwen2, Mistral, GPT-NeoX, Phi-3, Gemma): one reader with a row of
 * differences per architecture (ROTARY), not branches.
 */
function readRotary(fn, config, row) {
  const numLayers = field(fn, config, ['num_hidden_layers']);
  const numHeads = field(fn, config, ['num_attention_heads']);
  const dModel = field(fn, config, ['hidden_size']);
  const vocabSize = field(fn, config, ['vocab_size']);
  const contextLength = field(fn, config, ['max_position_embeddings']);
  const dFF = field(fn, config, ['intermediate_size']);
  const numKeyValueHeads = field(fn, config, ['num_key_value_heads'], { optional: true, fallback: numHeads });
  if (numHeads % numKeyValueHeads !== 0) {
    throw new Error(`${fn}: config.json: num_key_value_heads ${numKeyValueHeads} does not divide num_attention_heads ${numHeads}`);
  }
  const headDim = row.headDim ? field(fn, config, ['head_dim'], { optional: true, fallback: 0 }) : 0;
  if (!headDim && dModel % numHeads !== 0) {
    throw new Error(`${fn}: config.json: num_attention_heads ${numHeads} does not divide hidden_size ${dModel}`);
  }
  const act = row.activationKeys.map((k) => config[k]).find((v) => v !== undefined && v !== null) ?? row.activation;
  if (act !== row.activation) refuse(fn, row.activationKeys[0], act, `HeadLab runs ${row.activation} for ${row.name}`);
  for (const key of ['attn_logit_softcapping', 'final_logit_softcapping']) {
    if (config[key] !== undefined && config[key] !== null) refuse(fn, key, config[key], 'logit soft-capping');
  }
  if (row.parallel && config.use_parallel_residual === false) refuse(fn, 'use_parallel_residual', false, 'HeadLab runs the parallel residual');
  // Windows: every layer (Mistral, Phi-3) or none; Qwen2's per-layer use_sliding_window is refused.
  let window = 0;
  if (row.window && config.sliding_window !== undefined && config.sliding_window !== null) {
    window = field(fn, config, ['sliding_window']);
  }
  if (config.use_sliding_window === true) refuse(fn, 'use_sliding_window', true, 'a window on some layers only');
  const scaling = ropeScaling(fn, config);
  const theta = config[row.thetaKey] ?? 10000;
  const fraction = row.fractionKey ? config[row.fractionKey] ?? 1 : 1;
  const engine = {
    architecture: row.name, numLayers, numHeads, dModel, dFF, vocabSize, contextLength,
    layerNormEps: epsilon(fn, config, row.epsKey, 1e-6), scaleScores: true, windows: new Array(numLayers).fill(window),
    activation: act, numKeyValueHeads, ropeTheta: theta, rotaryFraction: fraction,
    attentionBias: row.biases ? config.attention_bias === true : false, mlpBias: row.biases ? config.mlp_bias === true : false,
    tieEmbeddings: config.tie_word_embeddings ?? row.tied,
  };
  if (headDim) engine.headDim = headDim;
  if (scaling) engine.ropeScaling = scaling;
  return { engine, info: { numLayers, numHeads, dModel, vocabSize, contextLength, kind: 'decoder', head: 'next-token', numKeyValueHeads } };
}

const LLAMA = { headDim: true, activationKeys: ['hidden_act'], activation: 'silu', thetaKey: 'rope_theta', epsKey: 'rms_norm_eps', tied: false };
/** One row per rotary architecture: what its config.json calls things, and its defaults. */
const ROTARY = {
  LlamaForCausalLM: { ...LLAMA, name: 'LlamaForCausalLM', biases: true },
  Qwen2ForCausalLM: { ...LLAMA, name: 'Qwen2ForCausalLM' },
  MistralForCausalLM: { ...LLAMA, name: 'MistralForCausalLM', window: true },
  Phi3ForCausalLM: { ...LLAMA, name: 'Phi3ForCausalLM', window: true },
  GemmaForCausalLM: { ...LLAMA, name: 'GemmaForCausalLM', activationKeys: ['hidden_activation', 'hidden_act'], activation: 'gelu_pytorch_tanh', tied: true },
  GPTNeoXForCausalLM: { name: 'GPTNeoXForCausalLM', activationKeys: ['hidden_act'], activation: 'gelu', thetaKey: 'rotary_emb_base',
    fractionKey: 'rotary_pct', epsKey: 'layer_norm_eps', parallel: true, tied: false },
};

/**
 * The encoders (BERT, RoBERTa, DistilBERT with their masked-LM heads; BertModel without a head):
 * learned positions (RoBERTa's from pad_token_id + 1), token types, post-norm blocks, erf GELU.
 * One row of key names each.
 */
function readEncoder(fn, config, row) {
  const k = row.keys;
  const numLayers = field(fn, config, [k.layers]);
  const numHeads = field(fn, config, [k.heads]);
  const dModel = field(fn, config, [k.d]);
  const dFF = field(fn, config, [k.ff]);
  const vocabSize = field(fn, config, ['vocab_size']);
  const maxPositions = field(fn, config, ['max_position_embeddings']);
  if (dModel % numHeads !== 0) throw new Error(`${fn}: config.json: ${k.heads} ${numHeads} does not divide ${k.d} ${dModel}`);
  const act = config[k.act] ?? 'gelu';
  if (act !== 'gelu') refuse(fn, k.act, act, `HeadLab runs gelu (erf) for ${row.name}`);
  if ((config.position_embedding_type ?? 'absolute') !== 'absolute') {
    refuse(fn, 'position_embedding_type', config.position_embedding_type, 'HeadLab runs absolute positions');
  }
  if (config.sinusoidal_pos_embds === true) refuse(fn, 'sinusoidal_pos_embds', true, 'HeadLab reads learned positions');
  let positionOffset = 0;
  if (row.offsetPositions) {
    const pad = config.pad_token_id ?? 1;
    if (!Number.isInteger(pad) || pad < 0) throw new Error(`${fn}: config.json: pad_token_id must be a token id, got ${JSON.stringify(pad)}`);
    positionOffset = pad + 1;
    if (maxPositions <= positionOffset) {
      throw new Error(`${fn}: config.json: max_position_embeddings ${maxPositions} leaves no position after pad_token_id + 1 = ${positionOffset}`);
    }
  }
  const contextLength = maxPositions - positionOffset;
  const typeVocabSize = row.types ? field(fn, config, ['type_vocab_size'], { optional: true, fallback: 2 }) : 0;
  const engine = {
    architecture: row.name, numLayers, numHeads, dModel, dFF, vocabSize, contextLength,
    layerNormEps: row.eps ?? epsilon(fn, config, 'layer_norm_eps', 1e-12), scaleScores: true,
    windows: new Array(numLayers).fill(0), activation: 'gelu', typeVocabSize, positionOffset,
  };
  const head = row.head ?? 'masked-lm';
  return { engine, info: { numLayers, numHeads, dModel, vocabSize, contextLength, kind: 'encoder', head, numKeyValueHeads: numHeads } };
}

const BERT_KEYS = { layers: 'num_hidden_layers', heads: 'num_attention_heads', d: 'hidden_size', ff: 'intermediate_size', act: 'hidden_act' };
/** One row per encoder; DistilBERT's LayerNorm eps is fixed in its code (1e-12), not in config.json. */
const ENCODERS = {
  BertForMaskedLM: { name: 'BertForMaskedLM', keys: BERT_KEYS, types: true },
  RobertaForMaskedLM: { name: 'RobertaForMaskedLM', keys: BERT_KEYS, types: true, offsetPositions: true },
  DistilBertForMaskedLM: { name: 'DistilBertForMaskedLM', keys: { layers: 'n_layers', heads: 'n_heads', d: 'dim', ff: 'hidden_dim', act: 'activation' }, eps: 1e-12 },
  // sentence-transformers and many fine-tunes: the encoder and its pooler, no head (no logits).
  BertModel: { name: 'BertModel', keys: BERT_KEYS, types: true, head: 'none' },
};

/** config.json's class name → its reader: { engine, info }. */
const READERS = {
  GPT2LMHeadModel: (fn, c) => withKind(readGpt(fn, c, true)),
  GPTNeoForCausalLM: (fn, c) => withKind(readGpt(fn, c, false)),
  ...Object.fromEntries(Object.entries(ROTARY).map(([name, row]) => [name, (fn, c) => readRotary(fn, c, row)])),
  ...Object.fromEntries(Object.entries(ENCODERS).map(([name, row]) => [name, (fn, c) => readEncoder(fn, c, row)])),
};

function withKind(r) {
  return { engine: r.engine, info: { ...r.info, kind: 'decoder', head: 'next-token', numKeyValueHeads: r.info.numHeads } };
}

/** GPT-Neo's per-layer windows (0 = global) from attention_types and window_size. */
function neoWindows(fn, config, numLayers) {
  const types = config.attention_types;
  const bad = (why) => new Error(`${fn}: config.json: attention_types ${why}; expected a list like [[["global", "local"], ${numLayers / 2}]]`);
  if (!Array.isArray(types)) throw bad(`must be a list, got ${JSON.stringify(types)}`);
  const layers = [];
  for (const item of types) {
    if (!Array.isArray(item) || item.length !== 2 || !Array.isArray(item[0]) || !Number.isInteger(item[1]) || item[1] < 1) {
      throw bad(`holds ${JSON.stringify(item)}, not [[kinds…], repeat]`);
    }
    for (let r = 0; r < item[1] && layers.length <= numLayers; r++) {
      for (const kind of item[0]) {
        if (kind !== 'global' && kind !== 'local') throw bad(`names the attention kind ${JSON.stringify(kind)} (known: global, local)`);
        layers.push(kind);
      }
    }
  }
  if (layers.length !== numLayers) throw bad(`describes ${layers.length} layers but num_layers is ${numLayers}`);
  const hasLocal = layers.includes('local');
  const window = hasLocal ? field(fn, config, ['window_size']) : 0;
  return layers.map((k) => (k === 'local' ? window : 0));
}

/**
 * Bytes of activations a run of T tokens may hold at once, as an upper estimate: logits and the
 * softmax for T × V, every head's attention T × T, and the residual stream, Q/K/V and the MLP's
 * hidden layer of one block.
 */
export function activationBytes({ numLayers, numHeads, dModel, dFF, vocabSize }, T) {
  return 4 * (2 * T * vocabSize + numLayers * numHeads * T * T + T * (8 * dModel + 2 * dFF));
}
