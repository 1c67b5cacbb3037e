#!/usr/bin/python3
"""Random models of SmolLM2-135M's and bert-base's shapes for the families benchmark, with an ONNX
export of each and, for the Llama shape, an f16 GGUF file for llama.cpp (wllama).

  /usr/bin/python3 bench/pretrained/make_families.py smollm2|bert-base [OUT] [--tiny] [--no-onnx] [--no-gguf]

OUT defaults to build/bench-<name>[-tiny]/ (never committed). --tiny writes the same files, through the
same code, for a 2-layer, d 64, vocabulary 512 model: the harness's end-to-end check in a minute.

smollm2 (LlamaForCausalLM): 30 layers, d 576, 9 heads of 64, 3 key-value heads, MLP 1536 (SwiGLU),
  vocabulary 49152, rope theta 1e5, RMSNorm eps 1e-5, tied embeddings (no lm_head.weight). Every weight
  is rounded to float16 and stored as float32, so model.safetensors, model.onnx and model-f16.gguf hold
  the same numbers.
  model.onnx: input_ids int64 [1, T], past_key_values.N.key / .value float32 [1, 3, P, 64] (P may be 0)
  -> logits [1, T, V], present.N.key / .value [1, 3, P + T, 64]: generation with a KV cache.
  model-f16.gguf: GGUF v3 (gguf_write below).
bert-base (BertForMaskedLM): 12 layers, d 768, 12 heads, MLP 3072, vocabulary 30522, 512 positions,
  2 token types, erf GELU, LayerNorm eps 1e-12, tied decoder. model.onnx: input_ids int64 [1, T] ->
  logits [1, T, V] (token types 0, no padding mask).

Both: config.json, model.safetensors (float32), tokenizer.json (byte-level BPE / WordPiece padded to the
vocabulary: the bench feeds ids), check.json (ids, PyTorch's float32 logits at the last of 64 positions,
and for the decoder a 64-token prompt text with its ids, and the greedy continuations of three prompt
texts through the cache path, each step's margin beside it). Each export module is checked against
tests/golden/families/make_families.py's Hugging Face-style float32 forward (independent code) first.
"""

import json
import math
import os
import struct
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tests", "golden", "pretrained"))
sys.path.insert(0, os.path.join(ROOT, "tests", "golden", "families"))
import make_pretrained as mp  # noqa: E402  (safetensors writer, byte-level BPE)
import make_families as mf  # noqa: E402  (WordPiece, Hugging Face-style float32 forwards)

torch.set_num_threads(os.cpu_count() or 1)  # make_families pins 1
SEED = 135
CHECK_T = 64
GREEDY = 8
GEN_PROMPT = 64

SHAPES = {
    "smollm2": dict(L=30, d=576, H=9, KV=3, ff=1536, V=49152, pos=8192),
    "smollm2-tiny": dict(L=2, d=64, H=4, KV=2, ff=128, V=512, pos=8192),
    "bert-base": dict(L=12, d=768, H=12, KV=12, ff=3072, V=30522, pos=512),
    "bert-base-tiny": dict(L=2, d=64, H=4, KV=4, ff=128, V=512, pos=512),
}


def normal(gen, *shape, std=1.0, mean=0.0):
    return mean + torch.randn(*shape, generator=gen) * std


# ---------------------------------------------------------------------------------------------
# Tokenizers: enough for a loader to read and a page to tokenize; the benchmark feeds ids.


def byte_level(V):
    """make_pretrained's byte-level BPE grown to V entries, <|endoftext|> last, by merges of printable ASCII
    (pairs, then a pair and a character): every token but the 128 single bytes >= 0x80 is UTF-8 on its own,
    which llama.cpp's server needs to answer with text (NON_UTF8_IDS below)."""
    merges = mp.train_bpe(mp.TRAINING_TEXT, min(96, V - 257))
    have = {mp.BYTE_TO_CHAR[b] for b in mp.BYTE_ORDER} | {a + b for a, b in merges}
    chars = [mp.BYTE_TO_CHAR[b] for b in range(32, 127)]
    firsts = list(chars)
    while len(merges) < V - 257:
        made = []
        for a in firsts:
            for b in chars:
                if len(merges) == V - 257:
                    break
                if a + b not in have:
                    merges.append((a, b))
                    have.add(a + b)
                    made.append(a + b)
        firsts = made
    tok = mp.ByteLevelBPE(merges)
    assert tok.size == V, (tok.size, V)
    return tok


def word_piece(V):
    """make_families' WordPiece over the course sentences, padded with [unusedN] to V entries."""
    wp = mf.WordPiece(mp.TRAINING_TEXT)
    k = 0
    while len(wp.vocab) < V:
        wp.vocab[f"[unused{k}]"] = len(wp.vocab)
        k += 1
    assert len(wp.vocab) == V, (len(wp.vocab), V)
    return wp


def prompt_text(tok, n):
    """A text of the course's sentences that encodes to exactly n ids."""
    words = " ".join(mp.TRAINING_TEXT * 8).split(" ")
    text = words[0]
    for w in words[1:]:
        if len(tok.encode(text + " " + w)[0]) > n:
            break
        text += " " + w
    while len(tok.encode(text)[0]) < n:
        text += "."
    assert len(tok.encode(text)[0]) == n, (len(tok.encode(text)[0]), n)
    return text


# ---------------------------------------------------------------------------------------------
# Llama


def llama_state(s, gen):
    """LlamaForCausalLM's tensors ([out, in]), tied: no lm_head.weight. Scales keep attention far from
    uniform and logits spread over a few units; residual writes scaled by 1/sqrt(2L) as GPT-2 does."""
    d, H, KV, ff, V, L = s["d"], s["H"], s["KV"], s["ff"], s["V"], s["L"]
    hd = d // H
    res = 1 / math.sqrt(2 * L)
    t = [("model.embed_tokens.weight", normal(gen, V, d, std=3 / math.sqrt(d)))]
    for i in range(L):
        p = f"model.layers.{i}."
        t += [
            (p + "input_layernorm.weight", normal(gen, d, std=0.1, mean=1.0)),
            (p + "self_attn.q_proj.weight", normal(gen, H * hd, d, std=1.5 / math.sqrt(d))),
            (p + "self_attn.k_proj.weight", normal(gen, KV * hd, d, std=1.5 / math.sqrt(d))),
            (p + "self_attn.v_proj.weight", normal(gen, KV * hd, d, std=1 / math.sqrt(d))),
            (p + "self_attn.o_proj.weight", normal(gen, d, H * hd, std=res / math.sqrt(H * hd))),
            (p + "post_attention_layernorm.weight", normal(gen, d, std=0.1, mean=1.0)),
            (p + "mlp.gate_proj.weight", normal(gen, ff, d, std=1 / math.sqrt(d))),
            (p + "mlp.up_proj.weight", normal(gen, ff, d, std=1 / math.sqrt(d))),
            (p + "mlp.down_proj.weight", normal(gen, d, ff, std=2 * res / math.sqrt(ff))),
        ]
    t.append(("model.norm.weight", normal(gen, d, std=0.1, mean=1.0)))
    # float16-representable, so the GGUF's f16 tensors are these exactly
    return [(n, w.half().float()) for n, w in t]


def llama_config(s, eos):
    return {
        "architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
        "bos_token_id": eos, "eos_token_id": eos, "head_dim": s["d"] // s["H"], "hidden_act": "silu",
        "hidden_size": s["d"], "initializer_range": 0.02, "intermediate_size": s["ff"],
        "max_position_embeddings": s["pos"], "mlp_bias": False, "model_type": "llama",
        "num_attention_heads": s["H"], "num_hidden_layers": s["L"], "num_key_value_heads": s["KV"],
        "pretraining_tp": 1, "rms_norm_eps": 1e-5, "rope_scaling": None, "rope_theta": 100000.0,
        "tie_word_embeddings": True, "torch_dtype": "float32", "transformers_version": "4.46.0",
        "use_cache": True, "vocab_size": s["V"],
    }


class Llama(torch.nn.Module):
    """Llama's forward from the maths, with a KV cache: 2-D activations [T, d]; rotary as Hugging Face
    applies it (rotate_half: dims i and i + hd/2 form a pair); grouped-query attention by expanding each
    key-value head to its H/KV query heads; the tied unembedding a Gemm with transB on the embedding."""

    def __init__(self, state, c):
        super().__init__()
        self.c = c
        self.p = torch.nn.ParameterDict({n.replace(".", "_"): torch.nn.Parameter(t, requires_grad=False) for n, t in state})
        hd = c["head_dim"]
        self.register_buffer("inv_freq", 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2).float() / hd)), persistent=False)
        self.register_buffer("zero_logit_bias", torch.zeros(c["vocab_size"]), persistent=False)

    def w(self, name):
        return self.p[name.replace(".", "_")]

    def rms(self, x, name):
        return self.w(name) * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.c["rms_norm_eps"]))

    def forward(self, input_ids, *past):
        c = self.c
        H, KV, hd, L = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"], c["num_hidden_layers"]
        ids = input_ids[0]
        T = ids.shape[0]
        P = past[0].shape[2]
        pos = torch.arange(T) + P
        freqs = pos[:, None].float() * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None], emb.sin()[None]  # [1, T, hd]
        keep = torch.arange(P + T)[None, :] <= pos[:, None]  # [T, P + T]
        x = F.embedding(ids, self.w("model.embed_tokens.weight"))
        present = []
        for i in range(L):
            p = f"model.layers.{i}."
            h = self.rms(x, p + "input_layernorm.weight")
            q = F.linear(h, self.w(p + "self_attn.q_proj.weight")).reshape(T, H, hd).transpose(0, 1)
            k = F.linear(h, self.w(p + "self_attn.k_proj.weight")).reshape(T, KV, hd).transpose(0, 1)
            v = F.linear(h, self.w(p + "self_attn.v_proj.weight")).reshape(T, KV, hd).transpose(0, 1)
            q = q * cos + mf.rotate_half(q) * sin
            k = k * cos + mf.rotate_half(k) * sin
            k = torch.cat((past[2 * i][0], k), dim=1)  # [KV, P + T, hd]
            v = torch.cat((past[2 * i + 1][0], v), dim=1)
            present += [k[None], v[None]]
            S = k.shape[1]
            kx = k[:, None].expand(KV, H // KV, S, hd).reshape(H, S, hd)
            vx = v[:, None].expand(KV, H // KV, S, hd).reshape(H, S, hd)
            s = torch.matmul(q, kx.transpose(1, 2)) * hd ** -0.5
            s = s.masked_fill(~keep, torch.finfo(torch.float32).min)
            o = torch.matmul(torch.softmax(s, dim=-1), vx).transpose(0, 1).reshape(T, H * hd)
            x = x + F.linear(o, self.w(p + "self_attn.o_proj.weight"))
            h = self.rms(x, p + "post_attention_layernorm.weight")
            u = F.silu(F.linear(h, self.w(p + "mlp.gate_proj.weight"))) * F.linear(h, self.w(p + "mlp.up_proj.weight"))
            x = x + F.linear(u, self.w(p + "mlp.down_proj.weight"))
        x = self.rms(x, "model.norm.weight")
        logits = F.linear(x, self.w("model.embed_tokens.weight"), self.zero_logit_bias).unsqueeze(0)
        return (logits, *present)

    def empty_past(self, P=0):
        c = self.c
        return [torch.zeros(1, c["num_key_value_heads"], P, c["head_dim"]) for _ in range(2 * c["num_hidden_layers"])]


def past_names(L):
    ins, outs = [], []
    for i in range(L):
        ins += [f"past_key_values.{i}.key", f"past_key_values.{i}.value"]
        outs += [f"present.{i}.key", f"present.{i}.value"]
    return ins, outs


def non_utf8_ids(tok):
    """The single-byte tokens of bytes 0x80-0xff: not text on their own."""
    return [tok.vocab[mp.BYTE_TO_CHAR[b]] for b in range(128, 256)]


def greedy_with_cache(model, ids, n, banned=()):
    """Greedy continuation through the cache path (prefill, then one token at a time), each step's
    top-1 minus top-2 logit beside it; `banned` ids never chosen (as a logit bias of -inf)."""
    with torch.no_grad():
        out = model(torch.tensor([ids]), *model.empty_past())
        nxt, margins = [], []
        for _ in range(n):
            last = out[0][0, -1].clone()
            last[list(banned)] = -math.inf
            top2 = torch.topk(last, 2)
            tok = int(top2.indices[0])
            nxt.append(tok)
            margins.append(float(top2.values[0] - top2.values[1]))
            out = model(torch.tensor([[tok]]), *out[1:])
    return nxt, margins


# ---------------------------------------------------------------------------------------------
# GGUF v3, written from the format (llama.cpp's docs/gguf.md and gguf-py's constants):
#   "GGUF" | u32 version 3 | u64 tensor count | u64 metadata count
#   metadata: string key (u64 length + UTF-8) | u32 value type | value (arrays: u32 element type, u64 count, items)
#   tensor infos: name | u32 n_dims | u64 ne[n_dims] (ne[0] = the contiguous dimension: [cols, rows]) |
#                 u32 ggml type (0 F32, 1 F16) | u64 offset into the data section (aligned)
#   padding to general.alignment (32), then the tensors' data, each aligned.

GGUF_U32, GGUF_I32, GGUF_F32, GGUF_BOOL, GGUF_STR, GGUF_ARR = 4, 5, 6, 7, 8, 9
ALIGN = 32


def gguf_str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def gguf_value(kind, v):
    if kind == GGUF_U32:
        return struct.pack("<I", v)
    if kind == GGUF_I32:
        return struct.pack("<i", v)
    if kind == GGUF_F32:
        return struct.pack("<f", v)
    if kind == GGUF_BOOL:
        return struct.pack("<B", 1 if v else 0)
    if kind == GGUF_STR:
        return gguf_str(v)
    elem, items = v
    return struct.pack("<IQ", elem, len(items)) + b"".join(gguf_value(elem, x) for x in items)


def rope_rows_interleaved(w, heads):
    """HF's q/k rows pair dim i with i + hd/2 (rotate_half); llama.cpp's LLAMA rope pairs 2i with 2i + 1.
    Reorders each head's rows [first half, second half] -> [h0, s0, h1, s1, ...], which turns one into
    the other (q·k is unchanged: both sides are reordered alike)."""
    rows, cols = w.shape
    hd = rows // heads
    return w.reshape(heads, 2, hd // 2, cols).transpose(1, 2).reshape(rows, cols)


def gguf_write(path, c, state, tok):
    H, KV, L = c["num_attention_heads"], c["num_key_value_heads"], c["num_hidden_layers"]
    f = dict(state)
    names = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight"}
    slots = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
             "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output", "post_attention_layernorm": "ffn_norm",
             "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
    tensors = [("token_embd.weight", f["model.embed_tokens.weight"])]
    for i in range(L):
        for hf, gg in slots.items():
            w = f[f"model.layers.{i}.{hf}.weight"]
            if hf == "self_attn.q_proj":
                w = rope_rows_interleaved(w, H)
            elif hf == "self_attn.k_proj":
                w = rope_rows_interleaved(w, KV)
            tensors.append((f"blk.{i}.{gg}.weight", w))
    tensors.append((names["model.norm.weight"], f["model.norm.weight"]))

    V = c["vocab_size"]
    tokens = [tok.id_to_token[i] for i in range(V)]
    types = [3 if i == tok.eot_id else 1 for i in range(V)]  # 1 normal, 3 control
    meta = [
        ("general.architecture", GGUF_STR, "llama"), ("general.name", GGUF_STR, "bench-smollm2-shaped"),
        ("general.alignment", GGUF_U32, ALIGN), ("general.file_type", GGUF_U32, 1),  # mostly F16
        ("llama.context_length", GGUF_U32, c["max_position_embeddings"]),
        ("llama.embedding_length", GGUF_U32, c["hidden_size"]), ("llama.block_count", GGUF_U32, L),
        ("llama.feed_forward_length", GGUF_U32, c["intermediate_size"]),
        ("llama.rope.dimension_count", GGUF_U32, c["head_dim"]), ("llama.rope.freq_base", GGUF_F32, c["rope_theta"]),
        ("llama.attention.head_count", GGUF_U32, H), ("llama.attention.head_count_kv", GGUF_U32, KV),
        ("llama.attention.layer_norm_rms_epsilon", GGUF_F32, c["rms_norm_eps"]), ("llama.vocab_size", GGUF_U32, V),
        ("tokenizer.ggml.model", GGUF_STR, "gpt2"), ("tokenizer.ggml.pre", GGUF_STR, "gpt-2"),
        ("tokenizer.ggml.tokens", GGUF_ARR, (GGUF_STR, tokens)),
        ("tokenizer.ggml.token_type", GGUF_ARR, (GGUF_I32, types)),
        ("tokenizer.ggml.merges", GGUF_ARR, (GGUF_STR, [a + " " + b for a, b in tok.merges])),
        ("tokenizer.ggml.bos_token_id", GGUF_U32, c["bos_token_id"]),
        ("tokenizer.ggml.eos_token_id", GGUF_U32, c["eos_token_id"]),
        ("tokenizer.ggml.add_bos_token", GGUF_BOOL, False),
    ]
    head = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(meta)))
    for k, kind, v in meta:
        head += gguf_str(k) + struct.pack("<I", kind) + gguf_value(kind, v)
    blobs, offset = [], 0
    for name, w in tensors:
        # 1-D norms stay F32 (as llama.cpp's converter keeps them); matrices F16
        data = (w.float() if w.dim() == 1 else w.half()).contiguous().numpy().tobytes()
        ne = list(reversed(w.shape))
        head += gguf_str(name) + struct.pack("<I", len(ne)) + struct.pack(f"<{len(ne)}Q", *ne)
        head += struct.pack("<IQ", 0 if w.dim() == 1 else 1, offset)
        blobs.append((offset, data))
        offset += len(data)
        offset += (-offset) % ALIGN
    head += b"\0" * ((-len(head)) % ALIGN)
    with open(path, "wb") as fh:
        fh.write(head)
        pos = 0
        for off, data in blobs:
            fh.write(b"\0" * (off - pos))
            fh.write(data)
            pos = off + len(data)
    return os.path.getsize(path)


# ---------------------------------------------------------------------------------------------
# BERT


def bert_state(s, gen):
    """BertForMaskedLM's tensors in Hugging Face's current naming (LayerNorm.weight / .bias), no pooler,
    no cls.predictions.decoder.weight (tied to the word embeddings)."""
    d, ff, V, L, P = s["d"], s["ff"], s["V"], s["L"], s["pos"]
    e = "bert.embeddings."
    t = [(e + "word_embeddings.weight", normal(gen, V, d, std=0.05)),
         (e + "position_embeddings.weight", normal(gen, P, d, std=0.05)),
         (e + "token_type_embeddings.weight", normal(gen, 2, d, std=0.05)),
         (e + "LayerNorm.weight", normal(gen, d, std=0.1, mean=1.0)), (e + "LayerNorm.bias", normal(gen, d, std=0.05))]
    for i in range(L):
        p = f"bert.encoder.layer.{i}."
        for n in ("query", "key", "value"):
            t += [(p + f"attention.self.{n}.weight", normal(gen, d, d, std=1.2 / math.sqrt(d))),
                  (p + f"attention.self.{n}.bias", normal(gen, d, std=0.05))]
        t += [
            (p + "attention.output.dense.weight", normal(gen, d, d, std=1 / math.sqrt(d))),
            (p + "attention.output.dense.bias", normal(gen, d, std=0.05)),
            (p + "attention.output.LayerNorm.weight", normal(gen, d, std=0.1, mean=1.0)),
            (p + "attention.output.LayerNorm.bias", normal(gen, d, std=0.05)),
            (p + "intermediate.dense.weight", normal(gen, ff, d, std=1 / math.sqrt(d))),
            (p + "intermediate.dense.bias", normal(gen, ff, std=0.05)),
            (p + "output.dense.weight", normal(gen, d, ff, std=1 / math.sqrt(ff))),
            (p + "output.dense.bias", normal(gen, d, std=0.05)),
            (p + "output.LayerNorm.weight", normal(gen, d, std=0.1, mean=1.0)),
            (p + "output.LayerNorm.bias", normal(gen, d, std=0.05)),
        ]
    t += [("cls.predictions.bias", normal(gen, V, std=0.1)),
          ("cls.predictions.transform.dense.weight", normal(gen, d, d, std=1 / math.sqrt(d))),
          ("cls.predictions.transform.dense.bias", normal(gen, d, std=0.05)),
          ("cls.predictions.transform.LayerNorm.weight", normal(gen, d, std=0.1, mean=1.0)),
          ("cls.predictions.transform.LayerNorm.bias", normal(gen, d, std=0.05))]
    return t


def bert_config(s, pad):
    return {
        "architectures": ["BertForMaskedLM"], "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1, "hidden_size": s["d"], "initializer_range": 0.02, "intermediate_size": s["ff"],
        "layer_norm_eps": 1e-12, "max_position_embeddings": s["pos"], "model_type": "bert",
        "num_attention_heads": s["H"], "num_hidden_layers": s["L"], "pad_token_id": pad,
        "position_embedding_type": "absolute", "torch_dtype": "float32", "transformers_version": "4.46.0",
        "type_vocab_size": 2, "use_cache": True, "vocab_size": s["V"],
    }


class Bert(torch.nn.Module):
    """BertForMaskedLM from the maths, token types 0, bidirectional attention: post-norm blocks, erf GELU,
    the MLM head LN(gelu(dense(x))) @ E^T + bias as a Gemm with transB on the embedding."""

    def __init__(self, state, c):
        super().__init__()
        self.c = c
        self.p = torch.nn.ParameterDict({n.replace(".", "_"): torch.nn.Parameter(t, requires_grad=False) for n, t in state})

    def w(self, name):
        return self.p[name.replace(".", "_")]

    def ln(self, x, name):
        return F.layer_norm(x, (self.c["hidden_size"],), self.w(name + ".weight"), self.w(name + ".bias"), self.c["layer_norm_eps"])

    def lin(self, x, name):
        return torch.addmm(self.w(name + ".bias"), x, self.w(name + ".weight").t())

    def forward(self, input_ids):
        c = self.c
        H = c["num_attention_heads"]
        hs = c["hidden_size"] // H
        ids = input_ids[0]
        T = ids.shape[0]
        e = "bert.embeddings."
        x = (F.embedding(ids, self.w(e + "word_embeddings.weight")) + F.embedding(torch.arange(T), self.w(e + "position_embeddings.weight"))
             + self.w(e + "token_type_embeddings.weight")[0])
        x = self.ln(x, e + "LayerNorm")
        for i in range(c["num_hidden_layers"]):
            p = f"bert.encoder.layer.{i}."
            q, k, v = (self.lin(x, p + "attention.self." + n).reshape(T, H, hs).transpose(0, 1) for n in ("query", "key", "value"))
            s = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(hs)
            o = torch.matmul(torch.softmax(s, dim=-1), v).transpose(0, 1).reshape(T, H * hs)
            a = self.ln(self.lin(o, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            u = F.gelu(self.lin(a, p + "intermediate.dense"))
            x = self.ln(self.lin(u, p + "output.dense") + a, p + "output.LayerNorm")
        t = "cls.predictions.transform."
        y = self.ln(F.gelu(self.lin(x, t + "dense")), t + "LayerNorm")
        return F.linear(y, self.w(e + "word_embeddings.weight"), self.w("cls.predictions.bias")).unsqueeze(0)


# ---------------------------------------------------------------------------------------------


def check_close(name, got, ref, rtol=1e-4):
    diff = (got - ref).abs().max().item()
    scale = ref.abs().max().item()
    assert diff <= rtol * scale, f"{name}: max |diff| {diff:.3e} > {rtol} * {scale:.3f}"
    print(f"  {name}: max |diff| {diff:.2e} (max |ref| {scale:.2f})")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args or args[0] not in ("smollm2", "bert-base"):
        sys.exit("usage: make_families.py smollm2|bert-base [OUT] [--tiny] [--no-onnx] [--no-gguf]")
    kind = args[0]
    key = kind + ("-tiny" if "--tiny" in sys.argv else "")
    s = SHAPES[key]
    out = os.path.abspath(args[1] if len(args) > 1 else os.path.join(ROOT, "build", "bench-" + key))
    os.makedirs(out, exist_ok=True)
    times = {}
    gen = torch.Generator().manual_seed(SEED)
    t0 = time.time()
    if kind == "smollm2":
        tok = byte_level(s["V"])
        c = llama_config(s, tok.eot_id)
        state = llama_state(s, gen)
        model = Llama(state, c).eval()
        tok_json = tok.tokenizer_json()
        ids = torch.randint(0, tok.eot_id, (CHECK_T,), generator=torch.Generator().manual_seed(SEED + 1)).tolist()
    else:
        tok = word_piece(s["V"])
        c = bert_config(s, tok.vocab["[PAD]"])
        state = bert_state(s, gen)
        model = Bert(state, c).eval()
        tok_json = tok.tokenizer_json()
        ids = torch.randint(len(mf.BERT_SPECIALS), s["V"], (CHECK_T,), generator=torch.Generator().manual_seed(SEED + 1)).tolist()
    times["weights"] = time.time() - t0

    t0 = time.time()
    mp.write_json(os.path.join(out, "config.json"), c)
    mp.write_json(os.path.join(out, "tokenizer.json"), tok_json, compact=True)
    nbytes = mp.write_safetensors(os.path.join(out, "model.safetensors"), state, {"format": "pt"})
    times["safetensors"] = time.time() - t0

    t0 = time.time()
    f = dict(state)
    with torch.no_grad():
        if kind == "smollm2":
            logits = model(torch.tensor([ids]), *model.empty_past())[0][0]
            check_close("export module vs make_families' HF-style forward", logits, mf.hf_llama_like32(f, c, "llama", ids))
            # the cache path: 60 tokens, then 4 with the cache, against the whole 64 at once
            first = model(torch.tensor([ids[:60]]), *model.empty_past())
            rest = model(torch.tensor([ids[60:]]), *first[1:])[0][0]
            check_close("KV-cache path (60 + 4) vs one pass", rest, logits[60:])
        else:
            logits = model(torch.tensor([ids]))[0]
            check_close("export module vs make_families' HF-style forward", logits, mf.hf_bert32(f, c, ids, [0] * len(ids)))
    times["checks"] = time.time() - t0
    last = logits[-1]
    check = {"ids": ids, "lastLogits": [float("%.7g" % v) for v in last.tolist()], "top5": torch.topk(last, 5).indices.tolist()}
    if kind == "smollm2":
        # wllama takes text only: prompts are texts whose encoding (the same BPE in llama.cpp) is the ids
        text64 = prompt_text(tok, GEN_PROMPT)
        check["generate"] = {"text": text64, "ids": tok.encode(text64)[0]}
        check["nonUtf8Ids"] = non_utf8_ids(tok)
        check["greedy"] = []
        for text in (text64, mp.COURSE, "Virat hit the ball."):
            prompt = tok.encode(text)[0]
            nxt, margins = greedy_with_cache(model, prompt, GREEDY)
            nxt_text, margins_text = greedy_with_cache(model, prompt, GREEDY, check["nonUtf8Ids"])
            check["greedy"].append({"text": text, "prompt": prompt, "next": nxt, "margins": [round(m, 4) for m in margins],
                                    "nextText": nxt_text, "marginsText": [round(m, 4) for m in margins_text]})
            print(f"  greedy after {len(prompt)} ids: {nxt}, smallest margin {min(margins):.3f}; "
                  f"without single bytes >= 0x80: {nxt_text}, smallest margin {min(margins_text):.3f}")
    mp.write_json(os.path.join(out, "check.json"), check, compact=True)

    if "--no-onnx" not in sys.argv:
        import onnx
        t0 = time.time()
        path = os.path.join(out, "model.onnx")
        with torch.no_grad():
            if kind == "smollm2":
                pin, pout = past_names(s["L"])
                dyn = {"input_ids": {1: "T"}, "logits": {1: "T"}}
                dyn.update({n: {2: "P"} for n in pin})
                dyn.update({n: {2: "P+T"} for n in pout})
                torch.onnx.export(model, (torch.tensor([ids[:5]]), *model.empty_past(3)), path,
                                  input_names=["input_ids"] + pin, output_names=["logits"] + pout,
                                  dynamic_axes=dyn, opset_version=17, do_constant_folding=True)
            else:
                torch.onnx.export(model, (torch.tensor([ids]),), path, input_names=["input_ids"], output_names=["logits"],
                                  dynamic_axes={"input_ids": {1: "T"}, "logits": {1: "T"}},
                                  opset_version=17, do_constant_folding=True)
        times["onnx export"] = time.time() - t0
        onnx.checker.check_model(path)

    if kind == "smollm2" and "--no-gguf" not in sys.argv:
        t0 = time.time()
        gguf_write(os.path.join(out, "model-f16.gguf"), c, state, tok)
        times["gguf"] = time.time() - t0

    params = sum(t.numel() for _, t in state)
    print(f"{out}: {params} parameters, model.safetensors {nbytes / 1e6:.0f} MB of weights")
    for name in sorted(os.listdir(out)):
        print(f"  {name}: {os.path.getsize(os.path.join(out, name)) / 1e6:.1f} MB")
    for k, v in times.items():
        print(f"  {k}: {v:.1f} s")


if __name__ == "__main__":
    main()
