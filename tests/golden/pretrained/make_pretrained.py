#!/usr/bin/env python3
"""Small Hugging Face checkpoints and float64 reference outputs for HeadLab's pretrained-model loader.

Writes, next to this file, one folder per checkpoint in the Hugging Face repository layout
(config.json, model.safetensors or shards + model.safetensors.index.json, tokenizer.json) and an
expected.json computed in float64 from the weights as stored. No `transformers` package is used:
the key names, shapes and dtypes follow GPT2LMHeadModel and GPTNeoForCausalLM, the safetensors
files and the byte-level BPE tokenizer.json are written by this script.

Run with Debian's Python (torch 1.13): /usr/bin/python3 tests/golden/pretrained/make_pretrained.py
Deterministic: fixed seeds, no dictionary-order or hash dependence.
"""

import json
import math
import os
import re
import struct
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 22
D_MODEL = 32
N_HEAD = 4
N_LAYER = 2
N_POSITIONS = 32
NEO_INTERMEDIATE = 96  # deliberately not 4 * d_model: readers must take it from config.json
NEO_WINDOW = 4
LN_EPS = 1e-5
NUM_MERGES = 96
HEAD_SCORE_N = 6
GREEDY_TOKENS = 8
EOT = "<|endoftext|>"

COURSE = "Virat hit the ball because it was full and outside off."
# Sentences the tokenizer's merges are learnt from (ASCII only: see pre_tokenize).
TRAINING_TEXT = [
    COURSE,
    COURSE,
    "The ball was full and the batter hit it through the covers.",
    "It was outside off stump, so he left the ball alone.",
    "Virat hit the next ball for four because it was short.",
    "She said the bowler was tired and the ball was old.",
    "He hit it hard and it went over the fence for six.",
]

# ---------------------------------------------------------------------------------------------
# Byte-level BPE (GPT-2 style), written from the algorithm.


def bytes_to_unicode():
    """GPT-2's reversible map from the 256 byte values to printable unicode characters.

    Printable Latin-1 bytes map to themselves; the others to 256, 257, ... in byte order.
    Returns (byte -> char dict, list of bytes in vocabulary order)."""
    order = (list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1))
             + list(range(0xAE, 0xFF + 1)))
    chars = [chr(b) for b in order]
    extra = 0
    for b in range(256):
        if b not in order:
            order.append(b)
            chars.append(chr(256 + extra))
            extra += 1
    return dict(zip(order, chars)), order


BYTE_TO_CHAR, BYTE_ORDER = bytes_to_unicode()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}

# The ByteLevel pre-tokenizer's regex ('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+
# |\s+(?!\S)|\s+) restricted to ASCII, where \p{L} = [A-Za-z] and \p{N} = [0-9]; Python's `re` has
# no \p classes, so every text this script tokenizes is asserted to be ASCII.
PRE_TOKENIZE = re.compile(
    r"'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+")


def pre_tokenize(text):
    """Split like the ByteLevel pre-tokenizer and map every byte to its unicode character."""
    assert text.isascii(), "the script's pre-tokenizer only covers ASCII text"
    return ["".join(BYTE_TO_CHAR[b] for b in piece.encode("utf-8"))
            for piece in PRE_TOKENIZE.findall(text)]


def train_bpe(texts, num_merges):
    """Greedy BPE: repeatedly merge the most frequent adjacent pair (ties: smallest pair)."""
    words = {}
    for text in texts:
        for w in pre_tokenize(text):
            words[w] = words.get(w, 0) + 1
    split = {w: list(w) for w in words}
    merges = []
    for _ in range(num_merges):
        counts = {}
        for w, freq in words.items():
            s = split[w]
            for a, b in zip(s, s[1:]):
                counts[(a, b)] = counts.get((a, b), 0) + freq
        if not counts:
            break
        best = min(counts, key=lambda p: (-counts[p], p))
        merges.append(best)
        for w in words:
            split[w] = merge_pair(split[w], best)
    return merges


def merge_pair(symbols, pair):
    out = []
    i = 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


class ByteLevelBPE:
    """Encoder for the tokenizer this script writes: special tokens split out first, then the
    ByteLevel pre-tokenizer, then BPE (lowest-ranked pair first, leftmost on ties)."""

    def __init__(self, merges):
        self.vocab = {}
        for b in BYTE_ORDER:
            self.vocab[BYTE_TO_CHAR[b]] = len(self.vocab)
        for a, b in merges:
            if a + b not in self.vocab:
                self.vocab[a + b] = len(self.vocab)
        self.eot_id = len(self.vocab)
        self.ranks = {pair: i for i, pair in enumerate(merges)}
        self.merges = merges
        self.size = self.eot_id + 1
        self.id_to_token = {i: t for t, i in self.vocab.items()}
        self.id_to_token[self.eot_id] = EOT

    def bpe(self, word):
        symbols = list(word)
        while len(symbols) > 1:
            pairs = list(zip(symbols, symbols[1:]))
            ranked = [self.ranks[p] for p in pairs if p in self.ranks]
            if not ranked:
                break
            symbols = merge_pair(symbols, self.merges[min(ranked)])
        return symbols

    def encode(self, text):
        ids, tokens = [], []
        for k, part in enumerate(text.split(EOT)):
            if k > 0:
                ids.append(self.eot_id)
                tokens.append(EOT)
            for word in pre_tokenize(part):
                for sym in self.bpe(word):
                    ids.append(self.vocab[sym])
                    tokens.append(sym)
        return ids, tokens

    def decode(self, ids):
        out = []
        buf = bytearray()
        for i in ids:
            if i == self.eot_id:
                out.append(buf.decode("utf-8"))
                buf = bytearray()
                out.append(EOT)
            else:
                buf.extend(CHAR_TO_BYTE[c] for c in self.id_to_token[i])
        out.append(buf.decode("utf-8"))
        return "".join(out)

    def tokenizer_json(self):
        """The tokenizer.json layout the `tokenizers` library writes for GPT-2."""
        vocab = dict(self.vocab)
        return {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": [{"id": self.eot_id, "content": EOT, "single_word": False, "lstrip": False,
                              "rstrip": False, "normalized": True, "special": True}],
            "normalizer": None,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                              "use_regex": True},
            "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
                               "use_regex": True},
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                        "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                      "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
                      "vocab": vocab, "merges": [a + " " + b for a, b in self.merges]},
        }


# ---------------------------------------------------------------------------------------------
# safetensors, written from the format: u64 little-endian header length N, N bytes of JSON
# (padded with spaces to a multiple of 8, as the reference writer does), then the raw data.

DTYPE_NAMES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}


def tensor_bytes(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)  # numpy has no bfloat16; the bits are what is stored
    data = t.numpy().tobytes()
    assert sys.byteorder == "little"
    return data


def write_safetensors(path, tensors, metadata=None):
    """tensors: list of (name, tensor). Data is laid out in the order given, without gaps."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    blobs = []
    offset = 0
    for name, t in tensors:
        data = tensor_bytes(t)
        header[name] = {"dtype": DTYPE_NAMES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in blobs:
            f.write(data)
    return offset


def read_safetensors(path):
    """Reads a file back (a round-trip check of the writer): name -> float64 tensor."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        chunk = bytearray(raw[8 + n + b:8 + n + e])
        if info["dtype"] == "BF16":
            t = torch.frombuffer(chunk, dtype=torch.int16).view(torch.bfloat16)
        else:
            t = torch.frombuffer(chunk, dtype={"F32": torch.float32, "F16": torch.float16}[info["dtype"]])
        out[name] = t.reshape(info["shape"]).double()
    return out


# ---------------------------------------------------------------------------------------------
# Random weights in Hugging Face's layouts. Scales are chosen so attention is far from uniform and
# logits spread over several units: a weak test would pass with uniform attention.


def gpt2_state(vocab_size, gen):
    """GPT2LMHeadModel's tensors without the `transformer.` prefix (Conv1D weights are [in, out])."""
    d, ff = D_MODEL, 4 * D_MODEL

    def randn(*shape, std):
        return torch.randn(*shape, generator=gen) * std

    s = [("wte.weight", randn(vocab_size, d, std=0.5)), ("wpe.weight", randn(N_POSITIONS, d, std=0.3))]
    for i in range(N_LAYER):
        p = f"h.{i}."
        s += [
            (p + "ln_1.weight", 1 + randn(d, std=0.2)), (p + "ln_1.bias", randn(d, std=0.1)),
            (p + "attn.c_attn.weight", randn(d, 3 * d, std=0.25)), (p + "attn.c_attn.bias", randn(3 * d, std=0.2)),
            (p + "attn.c_proj.weight", randn(d, d, std=d ** -0.5)), (p + "attn.c_proj.bias", randn(d, std=0.1)),
            (p + "ln_2.weight", 1 + randn(d, std=0.2)), (p + "ln_2.bias", randn(d, std=0.1)),
            (p + "mlp.c_fc.weight", randn(d, ff, std=d ** -0.5)), (p + "mlp.c_fc.bias", randn(ff, std=0.2)),
            (p + "mlp.c_proj.weight", randn(ff, d, std=ff ** -0.5)), (p + "mlp.c_proj.bias", randn(d, std=0.1)),
        ]
    s += [("ln_f.weight", 1 + randn(d, std=0.2)), ("ln_f.bias", randn(d, std=0.1))]
    return s


def gpt2_buffers():
    """The causal-mask buffers old GPT-2 checkpoints hold (to be ignored by readers)."""
    out = []
    for i in range(N_LAYER):
        out.append((f"h.{i}.attn.bias", torch.tril(torch.ones(N_POSITIONS, N_POSITIONS)).view(1, 1, N_POSITIONS, N_POSITIONS)))
        out.append((f"h.{i}.attn.masked_bias", torch.tensor(-1e4)))
    return out


def neo_state(vocab_size, gen):
    """GPTNeoForCausalLM's tensors with the `transformer.` prefix (nn.Linear weights are [out, in])."""
    d, ff = D_MODEL, NEO_INTERMEDIATE

    def randn(*shape, std):
        return torch.randn(*shape, generator=gen) * std

    t = "transformer."
    s = [(t + "wte.weight", randn(vocab_size, d, std=0.5)), (t + "wpe.weight", randn(N_POSITIONS, d, std=0.3))]
    for i in range(N_LAYER):
        p = f"{t}h.{i}."
        a = p + "attn.attention."
        s += [
            (p + "ln_1.weight", 1 + randn(d, std=0.2)), (p + "ln_1.bias", randn(d, std=0.1)),
            (a + "k_proj.weight", randn(d, d, std=0.18)),
            (a + "v_proj.weight", randn(d, d, std=0.25)),
            (a + "q_proj.weight", randn(d, d, std=0.18)),
            (a + "out_proj.weight", randn(d, d, std=d ** -0.5)), (a + "out_proj.bias", randn(d, std=0.1)),
            (p + "ln_2.weight", 1 + randn(d, std=0.2)), (p + "ln_2.bias", randn(d, std=0.1)),
            (p + "mlp.c_fc.weight", randn(ff, d, std=d ** -0.5)), (p + "mlp.c_fc.bias", randn(ff, std=0.2)),
            (p + "mlp.c_proj.weight", randn(d, ff, std=ff ** -0.5)), (p + "mlp.c_proj.bias", randn(d, std=0.1)),
        ]
    s += [(t + "ln_f.weight", 1 + randn(d, std=0.2)), (t + "ln_f.bias", randn(d, std=0.1))]
    return s


def gpt2_config(vocab_size, eot_id, torch_dtype):
    return {
        "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
        "bos_token_id": eot_id, "embd_pdrop": 0.1, "eos_token_id": eot_id, "initializer_range": 0.02,
        "layer_norm_epsilon": LN_EPS, "model_type": "gpt2", "n_ctx": N_POSITIONS, "n_embd": D_MODEL,
        "n_head": N_HEAD, "n_inner": None, "n_layer": N_LAYER, "n_positions": N_POSITIONS,
        "reorder_and_upcast_attn": False, "resid_pdrop": 0.1, "scale_attn_by_inverse_layer_idx": False,
        "scale_attn_weights": True, "summary_activation": None, "summary_first_dropout": 0.1,
        "summary_proj_to_labels": True, "summary_type": "cls_index", "summary_use_proj": True,
        "torch_dtype": torch_dtype, "transformers_version": "4.46.0", "use_cache": True,
        "vocab_size": vocab_size,
    }


def neo_config(vocab_size, eot_id, torch_dtype):
    return {
        "activation_function": "gelu_new", "architectures": ["GPTNeoForCausalLM"], "attention_dropout": 0,
        "attention_layers": ["global", "local"], "attention_types": [[["global", "local"], 1]],
        "bos_token_id": eot_id, "embed_dropout": 0, "eos_token_id": eot_id, "gradient_checkpointing": False,
        "hidden_size": D_MODEL, "initializer_range": 0.02, "intermediate_size": NEO_INTERMEDIATE,
        "layer_norm_epsilon": LN_EPS, "max_position_embeddings": N_POSITIONS, "model_type": "gpt_neo",
        "num_heads": N_HEAD, "num_layers": N_LAYER, "resid_dropout": 0, "summary_activation": None,
        "summary_first_dropout": 0.1, "summary_proj_to_labels": True, "summary_type": "cls_index",
        "summary_use_proj": True, "torch_dtype": torch_dtype, "transformers_version": "4.46.0",
        "use_cache": True, "vocab_size": vocab_size, "window_size": NEO_WINDOW,
    }


def neo_windows(config):
    """Per-layer window (0 = global) expanded from attention_types, as GPT-Neo's config does."""
    layers = []
    for kinds, repeat in config["attention_types"]:
        layers += kinds * repeat
    assert len(layers) == config["num_layers"]
    return [config["window_size"] if k == "local" else 0 for k in layers]


# ---------------------------------------------------------------------------------------------
# The float64 reference, written from the maths over one canonical layout (y = x @ W + b, W [in, out],
# heads in contiguous column blocks), fed by per-architecture converters from the stored tensors.


def canonical_gpt2(w):
    """w: name (no prefix) -> float64 tensor, as stored. Conv1D already computes x @ W."""
    d = D_MODEL
    layers = []
    for i in range(N_LAYER):
        p = f"h.{i}."
        wa, ba = w[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"]
        layers.append({
            "ln1": (w[p + "ln_1.weight"], w[p + "ln_1.bias"]),
            "wq": wa[:, :d], "wk": wa[:, d:2 * d], "wv": wa[:, 2 * d:],
            "bq": ba[:d], "bk": ba[d:2 * d], "bv": ba[2 * d:],
            "wo": w[p + "attn.c_proj.weight"], "bo": w[p + "attn.c_proj.bias"],
            "ln2": (w[p + "ln_2.weight"], w[p + "ln_2.bias"]),
            "w1": w[p + "mlp.c_fc.weight"], "b1": w[p + "mlp.c_fc.bias"],
            "w2": w[p + "mlp.c_proj.weight"], "b2": w[p + "mlp.c_proj.bias"],
            "window": 0,
        })
    return {"wte": w["wte.weight"], "wpe": w["wpe.weight"], "lnf": (w["ln_f.weight"], w["ln_f.bias"]),
            "layers": layers, "scale": 1 / math.sqrt(D_MODEL // N_HEAD)}


def canonical_neo(w, config):
    """w: name (with `transformer.`) -> float64 tensor. nn.Linear computes x @ W.T, no q/k/v bias."""
    zero = torch.zeros(D_MODEL, dtype=torch.float64)
    t = "transformer."
    layers = []
    for i, window in enumerate(neo_windows(config)):
        p = f"{t}h.{i}."
        a = p + "attn.attention."
        layers.append({
            "ln1": (w[p + "ln_1.weight"], w[p + "ln_1.bias"]),
            "wq": w[a + "q_proj.weight"].T, "wk": w[a + "k_proj.weight"].T, "wv": w[a + "v_proj.weight"].T,
            "bq": zero, "bk": zero, "bv": zero,
            "wo": w[a + "out_proj.weight"].T, "bo": w[a + "out_proj.bias"],
            "ln2": (w[p + "ln_2.weight"], w[p + "ln_2.bias"]),
            "w1": w[p + "mlp.c_fc.weight"].T, "b1": w[p + "mlp.c_fc.bias"],
            "w2": w[p + "mlp.c_proj.weight"].T, "b2": w[p + "mlp.c_proj.bias"],
            "window": window,
        })
    return {"wte": w[t + "wte.weight"], "wpe": w[t + "wpe.weight"], "lnf": (w[t + "ln_f.weight"], w[t + "ln_f.bias"]),
            "layers": layers, "scale": 1.0}


def layer_norm64(x, gb):
    g, b = gb
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)  # biased, as LayerNorm
    return (x - mu) / torch.sqrt(var + LN_EPS) * g + b


def gelu_tanh64(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def forward64(m, ids, ablate=()):
    """Returns logits [T, V], attention [L, H, T, T], lens [L, T, V] (float64)."""
    T = len(ids)
    H, dk = N_HEAD, D_MODEL // N_HEAD
    x = m["wte"][torch.tensor(ids)] + m["wpe"][:T]
    i = torch.arange(T).view(T, 1)
    j = torch.arange(T).view(1, T)
    attn, lens = [], []
    for li, L in enumerate(m["layers"]):
        allowed = j <= i
        if L["window"]:
            allowed = allowed & (j > i - L["window"])
        h = layer_norm64(x, L["ln1"])
        q = (h @ L["wq"] + L["bq"]).view(T, H, dk).transpose(0, 1)
        k = (h @ L["wk"] + L["bk"]).view(T, H, dk).transpose(0, 1)
        v = (h @ L["wv"] + L["bv"]).view(T, H, dk).transpose(0, 1)
        s = (q @ k.transpose(1, 2)) * m["scale"]
        s = s.masked_fill(~allowed, float("-inf"))
        a = torch.softmax(s, dim=-1)
        z = (a @ v).transpose(0, 1).clone()  # [T, H, dk]
        for (al, ah) in ablate:
            if al == li:
                z[:, ah, :] = 0
        x = x + z.reshape(T, D_MODEL) @ L["wo"] + L["bo"]
        hh = layer_norm64(x, L["ln2"])
        x = x + gelu_tanh64(hh @ L["w1"] + L["b1"]) @ L["w2"] + L["b2"]
        attn.append(a)
        lens.append(layer_norm64(x, m["lnf"]) @ m["wte"].T)
    return lens[-1], torch.stack(attn), torch.stack(lens)


# A second forward in float32 that follows the stored layouts the way Hugging Face's modules use them
# (Conv1D = addmm with W [in, out]; nn.Linear = x @ W.T; heads split by view; masked scores set to the
# dtype's most negative finite value). Used only to check the converters above.

def hf_style_forward32(w, arch, config, ids):
    pre = "transformer." if arch == "gpt_neo" else ""
    f = {k: v.float() for k, v in w.items()}
    T = len(ids)
    H, dk = N_HEAD, D_MODEL // N_HEAD
    x = f[pre + "wte.weight"][torch.tensor(ids)] + f[pre + "wpe.weight"][:T]
    windows = neo_windows(config) if arch == "gpt_neo" else [0] * N_LAYER
    for li in range(N_LAYER):
        p = f"{pre}h.{li}."
        h = torch.nn.functional.layer_norm(x, (D_MODEL,), f[p + "ln_1.weight"], f[p + "ln_1.bias"], LN_EPS)
        if arch == "gpt2":
            qkv = torch.addmm(f[p + "attn.c_attn.bias"], h, f[p + "attn.c_attn.weight"])
            q, k, v = qkv.split(D_MODEL, dim=1)
        else:
            a = p + "attn.attention."
            q = torch.nn.functional.linear(h, f[a + "q_proj.weight"])
            k = torch.nn.functional.linear(h, f[a + "k_proj.weight"])
            v = torch.nn.functional.linear(h, f[a + "v_proj.weight"])
        q, k, v = (t.view(T, H, dk).permute(1, 0, 2) for t in (q, k, v))
        s = torch.matmul(q, k.transpose(-1, -2))
        if arch == "gpt2":
            s = s / (dk ** 0.5)
        mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
        if windows[li]:
            mask = mask & ~torch.tril(torch.ones(T, T, dtype=torch.bool), -windows[li])
        s = torch.where(mask, s, torch.tensor(torch.finfo(s.dtype).min))
        o = torch.matmul(torch.softmax(s, -1), v).permute(1, 0, 2).reshape(T, D_MODEL)
        if arch == "gpt2":
            x = x + torch.addmm(f[p + "attn.c_proj.bias"], o, f[p + "attn.c_proj.weight"])
        else:
            x = x + torch.nn.functional.linear(o, f[a + "out_proj.weight"], f[a + "out_proj.bias"])
        h = torch.nn.functional.layer_norm(x, (D_MODEL,), f[p + "ln_2.weight"], f[p + "ln_2.bias"], LN_EPS)
        if arch == "gpt2":
            u = torch.addmm(f[p + "mlp.c_fc.bias"], h, f[p + "mlp.c_fc.weight"])
            x = x + torch.addmm(f[p + "mlp.c_proj.bias"], torch.nn.functional.gelu(u, approximate="tanh"),
                                f[p + "mlp.c_proj.weight"])
        else:
            u = torch.nn.functional.linear(h, f[p + "mlp.c_fc.weight"], f[p + "mlp.c_fc.bias"])
            x = x + torch.nn.functional.linear(torch.nn.functional.gelu(u, approximate="tanh"),
                                               f[p + "mlp.c_proj.weight"], f[p + "mlp.c_proj.bias"])
    x = torch.nn.functional.layer_norm(x, (D_MODEL,), f[pre + "ln_f.weight"], f[pre + "ln_f.bias"], LN_EPS)
    return x @ f[pre + "wte.weight"].T


def head_scores(attention, n):
    """TransformerLens-style detector scores from attention [L, H, T, T] on [bos, r1..rn, r1..rn]."""
    out = []
    for layer in range(attention.shape[0]):
        for head in range(attention.shape[1]):
            A = attention[layer, head]
            out.append({
                "layer": layer, "head": head,
                "previousToken": float(sum(A[t, t - 1] for t in range(2, 2 * n + 1)) / (2 * n - 1)),
                "duplicateToken": float(sum(A[t, t - n] for t in range(n + 1, 2 * n + 1)) / n),
                "induction": float(sum(A[t, t - n + 1] for t in range(n + 1, 2 * n + 1)) / n),
                "firstToken": float(sum(A[t, 0] for t in range(1, 2 * n + 1)) / (2 * n)),
            })
    return out


# ---------------------------------------------------------------------------------------------
# Output


def rounded(t):
    """float64 values printed with 8 significant digits (far below every test tolerance)."""
    return [float("%.8g" % v) for v in t.flatten().tolist()]


def write_json(path, obj, compact=False):
    with open(path, "w", encoding="utf-8") as f:
        if compact:
            json.dump(obj, f, separators=(",", ":"), ensure_ascii=False)
        else:
            json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")


CASES = [
    # name, text, ablate [[layer, head]], with logit lens
    ("course", COURSE, [], True),
    ("course-ablated", COURSE, [[0, 1], [1, 2]], False),
    ("special-digits", EOT + "In 2011, Virat hit 148 runs!", [], False),
]


def expected_for(tok, arch, config, stored, head_seq):
    if arch == "gpt2":
        w = {k[len("transformer."):] if k.startswith("transformer.") else k: v for k, v in stored.items()}
        m = canonical_gpt2(w)
        w_hf = w
    else:
        m = canonical_neo(stored, config)
        w_hf = stored
    cases = []
    for name, text, ablate, with_lens in CASES:
        ids, tokens = tok.encode(text)
        assert tok.decode(ids) == text
        assert len(ids) <= N_POSITIONS, (name, len(ids))
        logits, attention, lens = forward64(m, ids, [tuple(a) for a in ablate])
        assert torch.equal(lens[-1], logits)
        if not ablate:
            check = hf_style_forward32(w_hf, arch, config, ids)
            diff = (check.double() - logits).abs().max().item()
            assert diff < 1e-4, f"{arch} {name}: float32 Hugging Face-style forward differs by {diff}"
        else:
            plain, _, _ = forward64(m, ids)
            change = (plain - logits).abs().max().item()
            assert change > 0.05, f"ablation changes the logits by only {change}"
        case = {"name": name, "text": text, "ids": ids, "tokens": tokens, "ablate": ablate,
                "logits": rounded(logits), "attention": rounded(attention)}
        if with_lens:
            case["lens"] = rounded(lens)
        cases.append(case)
    _, attention, _ = forward64(m, head_seq)
    return {
        "shapes": {"layers": N_LAYER, "heads": N_HEAD, "vocab": tok.size},
        "cases": cases,
        "greedy": greedy(m, cases[0]["ids"], GREEDY_TOKENS),
        "headScores": {"n": HEAD_SCORE_N, "sequence": head_seq,
                       "scores": head_scores(attention, HEAD_SCORE_N), "attention": rounded(attention)},
    }


def greedy(m, prompt, count):
    """Greedy continuation (argmax of the last position, repeated), with the smallest gap between
    the best and second-best logit on the way: a reader's float32 rounding cannot change the ids
    when that gap is far above its error."""
    seq = list(prompt)
    margin = math.inf
    for _ in range(count):
        logits, _, _ = forward64(m, seq)
        top = torch.topk(logits[-1], 2)
        margin = min(margin, (top.values[0] - top.values[1]).item())
        seq.append(int(top.indices[0]))
    assert margin > 1e-3, f"greedy continuation too close to a tie ({margin})"
    return {"prompt": list(prompt), "next": seq[len(prompt):], "minMargin": float("%.8g" % margin)}


def cast(tensors, dtype):
    return [(n, t.to(dtype)) for n, t in tensors]


def write_checkpoint(folder, config, tensors, tok, arch, head_seq, shards=None):
    out = os.path.join(HERE, folder)
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        os.remove(os.path.join(out, f))
    write_json(os.path.join(out, "config.json"), config)
    write_json(os.path.join(out, "tokenizer.json"), tok.tokenizer_json(), compact=True)
    stored = {}
    if shards is None:
        path = os.path.join(out, "model.safetensors")
        write_safetensors(path, tensors, {"format": "pt"})
        stored.update(read_safetensors(path))
    else:
        names = [f"model-{k + 1:05d}-of-{len(shards):05d}.safetensors" for k in range(len(shards))]
        weight_map, total = {}, 0
        for fname, part in zip(names, shards):
            total += write_safetensors(os.path.join(out, fname), part, {"format": "pt"})
            for n, _ in part:
                weight_map[n] = fname
            stored.update(read_safetensors(os.path.join(out, fname)))
        write_json(os.path.join(out, "model.safetensors.index.json"),
                   {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))})
    for n, t in tensors:
        assert torch.equal(stored[n], t.double()), f"{folder}: {n} did not read back"
    params = {k: v for k, v in stored.items() if not re.search(r"\.attn\.(bias|masked_bias)$", k)}
    write_json(os.path.join(out, "expected.json"), expected_for(tok, arch, config, params, head_seq), compact=True)
    size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    print(f"{folder}: {len(tensors)} tensors, {size / 1024:.0f} KiB")


def main():
    torch.manual_seed(SEED)
    merges = train_bpe(TRAINING_TEXT, NUM_MERGES)
    tok = ByteLevelBPE(merges)
    V = tok.size
    gen = torch.Generator().manual_seed(SEED)
    head_seq_gen = torch.Generator().manual_seed(SEED + 1)
    r = torch.randint(0, tok.eot_id, (HEAD_SCORE_N,), generator=head_seq_gen).tolist()
    head_seq = [tok.eot_id] + r + r

    core = gpt2_state(V, gen)
    buffers = gpt2_buffers()
    with_buffers = []
    for n, t in core:
        with_buffers.append(("transformer." + n, t))
        m = re.match(r"h\.(\d+)\.attn\.c_proj\.bias$", n)
        if m:
            with_buffers += [("transformer." + bn, bt) for bn, bt in buffers if bn.startswith(f"h.{m.group(1)}.")]
    wte = dict(core)["wte.weight"]
    full = with_buffers + [("lm_head.weight", wte.clone())]
    g2 = lambda dt: gpt2_config(V, tok.eot_id, dt)

    write_checkpoint("gpt2-f32", g2("float32"), full, tok, "gpt2", head_seq)
    write_checkpoint("neo-f32", neo_config(V, tok.eot_id, "float32"), neo_state(V, gen), tok, "gpt_neo", head_seq)
    if len(sys.argv) > 1 and sys.argv[1] == "--first":
        return
    write_checkpoint("gpt2-noprefix-f32", g2("float32"), core, tok, "gpt2", head_seq)
    write_checkpoint("gpt2-f16", g2("float16"), cast(full, torch.float16), tok, "gpt2", head_seq)
    write_checkpoint("gpt2-bf16", g2("bfloat16"), cast(full, torch.bfloat16), tok, "gpt2", head_seq)
    cut = next(k for k, (n, _) in enumerate(full) if n.startswith("transformer.h.1."))
    write_checkpoint("gpt2-sharded", g2("float32"), full, tok, "gpt2", head_seq, shards=[full[:cut], full[cut:]])
    gen_neo = torch.Generator().manual_seed(SEED)
    gpt2_state(V, gen_neo)  # same draw order as above, so neo-bf16 holds neo-f32's weights
    neo = neo_state(V, gen_neo)
    write_checkpoint("neo-bf16", neo_config(V, tok.eot_id, "bfloat16"), cast(neo, torch.bfloat16), tok, "gpt_neo", head_seq)


if __name__ == "__main__":
    main()
