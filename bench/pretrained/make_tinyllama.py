#!/usr/bin/python3
"""A random TinyLlama-1.1B-shaped LlamaForCausalLM in bfloat16 (22 layers, d 2048, 32 heads, 4 KV heads,
MLP 5632, vocabulary 32000, separate lm_head; a 2.2 GB model.safetensors: more than 2 GiB in one file)
and PyTorch's float32 forward of those bfloat16 weights: logits at every one of 64 random ids
(reference-logits.f32, [64, 32000] little-endian; reference.json holds the ids). About 4 minutes to
write and 8 for the forward on one core here; 2.2 GB of RAM for the weights.
  /usr/bin/python3 bench/pretrained/make_tinyllama.py [OUT]   (default build/bench-tinyllama/, never committed)
Then: node bench/pretrained/tinyllama-memory.mjs [THREADS] [OUT]"""
import json
import math
import os
import struct
import sys
import time

import torch
import torch.nn.functional as F

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "golden", "pretrained"))
import make_pretrained as mp  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "bench-tinyllama")
os.makedirs(OUT, exist_ok=True)
L, d, H, KV, ff, V = 22, 2048, 32, 4, 5632, 32000
hd = d // H
T = 64
gen = torch.Generator().manual_seed(11)
t0 = time.time()

def normal(*shape, std, mean=0.0):
    return (mean + torch.randn(*shape, generator=gen) * std).to(torch.bfloat16)

res = 1 / math.sqrt(2 * L)
tensors = [("model.embed_tokens.weight", normal(V, d, std=3 / math.sqrt(d)))]
for i in range(L):
    p = f"model.layers.{i}."
    tensors += [
        (p + "input_layernorm.weight", normal(d, std=0.1, mean=1.0)),
        (p + "self_attn.q_proj.weight", normal(H * hd, d, std=1.5 / math.sqrt(d))),
        (p + "self_attn.k_proj.weight", normal(KV * hd, d, std=1.5 / math.sqrt(d))),
        (p + "self_attn.v_proj.weight", normal(KV * hd, d, std=1 / math.sqrt(d))),
        (p + "self_attn.o_proj.weight", normal(d, H * hd, std=res / math.sqrt(H * hd))),
        (p + "post_attention_layernorm.weight", normal(d, std=0.1, mean=1.0)),
        (p + "mlp.gate_proj.weight", normal(ff, d, std=1 / math.sqrt(d))),
        (p + "mlp.up_proj.weight", normal(ff, d, std=1 / math.sqrt(d))),
        (p + "mlp.down_proj.weight", normal(d, ff, std=2 * res / math.sqrt(ff))),
    ]
tensors += [("model.norm.weight", normal(d, std=0.1, mean=1.0)), ("lm_head.weight", normal(V, d, std=3 / math.sqrt(d)))]
print(f"generated {sum(t.numel() for _, t in tensors) / 1e9:.3f} B parameters in {time.time() - t0:.0f} s", flush=True)

# safetensors, one tensor at a time (no second copy of the whole file in memory)
header, offset = {}, 0
for n, t in tensors:
    nbytes = t.numel() * 2
    header[n] = {"dtype": "BF16", "shape": list(t.shape), "data_offsets": [offset, offset + nbytes]}
    offset += nbytes
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
with open(os.path.join(OUT, "model.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(text)))
    f.write(text)
    for _, t in tensors:
        f.write(t.contiguous().view(torch.int16).numpy().tobytes())
print(f"wrote {8 + len(text) + offset} bytes at {time.time() - t0:.0f} s", flush=True)

config = {
    "architectures": ["LlamaForCausalLM"], "attention_bias": False, "bos_token_id": 1, "eos_token_id": 2,
    "hidden_act": "silu", "hidden_size": d, "intermediate_size": ff, "max_position_embeddings": 2048,
    "model_type": "llama", "num_attention_heads": H, "num_hidden_layers": L, "num_key_value_heads": KV,
    "rms_norm_eps": 1e-5, "rope_scaling": None, "rope_theta": 10000.0, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "vocab_size": V,
}
mp.write_json(os.path.join(OUT, "config.json"), config)
tok = mp.ByteLevelBPE(mp.train_bpe(mp.TRAINING_TEXT, 64))
mp.write_json(os.path.join(OUT, "tokenizer.json"), tok.tokenizer_json(), compact=True)

# float32 forward (Hugging Face's Llama maths: rotate_half pairs, grouped-query attention)
w = dict(tensors)
W = lambda n: w[n].float()
ids = torch.randint(3, V, (T,), generator=gen)
with torch.no_grad():
    rms = lambda x, n: W(n) * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5))
    inv = 1.0 / (10000.0 ** (torch.arange(0, hd, 2).float() / hd))
    fr = torch.arange(T)[:, None].float() * inv[None]
    emb = torch.cat((fr, fr), -1)
    cos, sin = emb.cos()[None], emb.sin()[None]
    rot = lambda x: torch.cat((-x[..., hd // 2:], x[..., :hd // 2]), -1)
    mask = torch.ones(T, T).tril().bool()
    x = F.embedding(ids, W("model.embed_tokens.weight"))
    for i in range(L):
        p = f"model.layers.{i}."
        h = rms(x, p + "input_layernorm.weight")
        q = F.linear(h, W(p + "self_attn.q_proj.weight")).reshape(T, H, hd).transpose(0, 1)
        k = F.linear(h, W(p + "self_attn.k_proj.weight")).reshape(T, KV, hd).transpose(0, 1)
        v = F.linear(h, W(p + "self_attn.v_proj.weight")).reshape(T, KV, hd).transpose(0, 1)
        q, k = q * cos + rot(q) * sin, k * cos + rot(k) * sin
        k = k.repeat_interleave(H // KV, 0)
        v = v.repeat_interleave(H // KV, 0)
        s = (q @ k.transpose(1, 2)) * hd ** -0.5
        s = s.masked_fill(~mask, float("-inf"))
        o = (torch.softmax(s, -1) @ v).transpose(0, 1).reshape(T, d)
        x = x + F.linear(o, W(p + "self_attn.o_proj.weight"))
        h = rms(x, p + "post_attention_layernorm.weight")
        x = x + F.linear(F.silu(F.linear(h, W(p + "mlp.gate_proj.weight"))) * F.linear(h, W(p + "mlp.up_proj.weight")),
                         W(p + "mlp.down_proj.weight"))
    logits = F.linear(rms(x, "model.norm.weight"), W("lm_head.weight"))
with open(os.path.join(OUT, "reference-logits.f32"), "wb") as f:
    f.write(logits.contiguous().numpy().astype("<f4").tobytes())
mp.write_json(os.path.join(OUT, "reference.json"), {"ids": ids.tolist(), "T": T, "V": V})
print(f"reference forward done at {time.time() - t0:.0f} s; logits std {logits.std():.3f}", flush=True)
