#!/usr/bin/env python3
"""Independent answers for HeadLab's causal tools (issue 35): activation patching, patchHeads and
direct logit attribution, and a small GPT-2-style model trained to do IOI-like name copying.

1. On the random checkpoints of tests/golden/pretrained/ (gpt2-f32, gpt2-bf16, neo-f32), read from their
   safetensors and config.json by this script, computes in float64 with its own forward:
   run with a patch, patchHeads and directLogitAttribution, and checks each against a second, hook-style
   float32 implementation that uses the stored tensors the way Hugging Face's modules do. Writes
   causal-<folder>.json.
2. Writes ioi-model/ (config.json, model.safetensors, tokenizer.json in the Hugging Face GPT-2 layout): a
   2-layer model trained here on the IOI prompts of web/lib/api/findings.js (read through node), then
   PyTorch's own per-head activation patching and DLA on it, with their top-3 heads, in
   ioi-model/expected.json.

Run with Debian's Python (torch 1.13): /usr/bin/python3 tests/golden/findings/make_findings.py
Deterministic: fixed seeds, one thread. The format of the JSON files is in README.md.
"""

import json
import math
import os
import re
import struct
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
PRETRAINED = os.path.join(REPO, "tests", "golden", "pretrained")
torch.set_num_threads(1)

# ---------------------------------------------------------------------------------------------
# safetensors (an 8-byte little-endian header length, a JSON header, raw data) read and written here.

DT = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def read_safetensors(path):
    """name -> tensor in its stored dtype."""
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
            t = torch.frombuffer(chunk, dtype=DT[info["dtype"]])
        out[name] = t.reshape(info["shape"]).clone()
    return out


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, t in tensors:
        data = t.contiguous().float().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


# ---------------------------------------------------------------------------------------------
# The float64 reference: one canonical layout (y = x @ W + b, W [in, out], head h in columns h*dk..),
# converted from each architecture's stored tensors, and a forward with the patch point z (each head's
# output before the output projection).


def strip(w):
    return {k[len("transformer."):] if k.startswith("transformer.") else k: v.double() for k, v in w.items()}


def canonical(w, config):
    w = strip(w)
    arch = config["model_type"]
    L = config.get("n_layer", config.get("num_layers"))
    H = config.get("n_head", config.get("num_heads"))
    d = config.get("n_embd", config.get("hidden_size"))
    windows = [0] * L
    if arch == "gpt_neo":
        kinds = []
        for k, r in config["attention_types"]:
            kinds += k * r
        windows = [config["window_size"] if k == "local" else 0 for k in kinds]
    layers = []
    for i in range(L):
        p = f"h.{i}."
        if arch == "gpt2":
            wa, ba = w[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"]
            att = dict(wq=wa[:, :d], wk=wa[:, d:2 * d], wv=wa[:, 2 * d:], bq=ba[:d], bk=ba[d:2 * d], bv=ba[2 * d:],
                       wo=w[p + "attn.c_proj.weight"], bo=w[p + "attn.c_proj.bias"],
                       w1=w[p + "mlp.c_fc.weight"], w2=w[p + "mlp.c_proj.weight"])
        else:
            a = p + "attn.attention."
            z = torch.zeros(d, dtype=torch.float64)
            att = dict(wq=w[a + "q_proj.weight"].T, wk=w[a + "k_proj.weight"].T, wv=w[a + "v_proj.weight"].T,
                       bq=z, bk=z, bv=z, wo=w[a + "out_proj.weight"].T, bo=w[a + "out_proj.bias"],
                       w1=w[p + "mlp.c_fc.weight"].T, w2=w[p + "mlp.c_proj.weight"].T)
        att.update(ln1=(w[p + "ln_1.weight"], w[p + "ln_1.bias"]), ln2=(w[p + "ln_2.weight"], w[p + "ln_2.bias"]),
                   b1=w[p + "mlp.c_fc.bias"], b2=w[p + "mlp.c_proj.bias"], window=windows[i])
        layers.append(att)
    wu = w["lm_head.weight"] if "lm_head.weight" in w else w["wte.weight"]
    return dict(wte=w["wte.weight"], wpe=w["wpe.weight"], lnf=(w["ln_f.weight"], w["ln_f.bias"]), wu=wu,
                layers=layers, H=H, d=d, eps=config.get("layer_norm_epsilon", 1e-5),
                scale=1 / math.sqrt(d // H) if arch == "gpt2" else 1.0)


def ln64(x, gb, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * gb[0] + gb[1]


def gelu64(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def forward64(m, ids, patch=None):
    """patch: {(layer, head): z [T, dk]} replaces those heads' outputs. Returns logits [T, V] and the
    pieces DLA needs: z per layer [T, H, dk], MLP outputs [L, T, d], the final residual [T, d]."""
    T, H, d = len(ids), m["H"], m["d"]
    dk = d // H
    x = m["wte"][torch.tensor(ids)] + m["wpe"][:T]
    i, j = torch.arange(T).view(T, 1), torch.arange(T).view(1, T)
    zs, mlps = [], []
    for li, L in enumerate(m["layers"]):
        allowed = j <= i
        if L["window"]:
            allowed = allowed & (j > i - L["window"])
        h = ln64(x, L["ln1"], m["eps"])
        q, k, v = ((h @ L["w" + c] + L["b" + c]).view(T, H, dk).transpose(0, 1) for c in "qkv")
        s = (q @ k.transpose(1, 2) * m["scale"]).masked_fill(~allowed, float("-inf"))
        z = (torch.softmax(s, -1) @ v).transpose(0, 1).clone()  # [T, H, dk]
        for (pl, ph), src in (patch or {}).items():
            if pl == li:
                z[:, ph] = src
        zs.append(z)
        x = x + z.reshape(T, d) @ L["wo"] + L["bo"]
        mo = gelu64(ln64(x, L["ln2"], m["eps"]) @ L["w1"] + L["b1"]) @ L["w2"] + L["b2"]
        mlps.append(mo)
        x = x + mo
    return ln64(x, m["lnf"], m["eps"]) @ m["wu"].T, dict(z=zs, mlp=mlps, resid=x)


def metric(logits, answer, wrong):
    return (logits[-1, answer] - logits[-1, wrong]).item()


def patch_heads64(m, clean, corrupted, answer, wrong):
    _, cache = forward64(m, clean)
    base = metric(forward64(m, corrupted)[0], answer, wrong)
    L, H = len(m["layers"]), m["H"]
    eff = torch.zeros(L, H, dtype=torch.float64)
    for li in range(L):
        for h in range(H):
            eff[li, h] = metric(forward64(m, corrupted, {(li, h): cache["z"][li][:, h]})[0], answer, wrong) - base
    return eff, base, metric(forward64(m, clean)[0], answer, wrong)


def dla64(m, ids, answer, wrong):
    """TransformerLens's apply_ln_to_stack at the final norm: each component centred, divided by the
    final LayerNorm's scale of the whole residual, times the norm's weight, dotted with W_U[a] - W_U[w]."""
    logits, c = forward64(m, ids)
    H, d = m["H"], m["d"]
    dk = d // H
    r = c["resid"][-1]
    scale = torch.sqrt(((r - r.mean()) ** 2).mean() + m["eps"])
    direction = (m["wu"][answer] - m["wu"][wrong]) * m["lnf"][0]

    def attribute(vec):
        return (((vec - vec.mean(-1, keepdim=True)) / scale) @ direction)

    heads = torch.stack([torch.stack([attribute(c["z"][li][-1, h] @ L["wo"][h * dk:(h + 1) * dk])
                                      for h in range(H)]) for li, L in enumerate(m["layers"])])
    mlps = torch.stack([attribute(c["mlp"][li][-1]) for li in range(len(m["layers"]))])
    # Completeness: every piece of the residual (embeddings, heads, output biases, MLPs) plus the norm's
    # bias gives the logit difference exactly.
    rest = attribute(m["wte"][ids[-1]] + m["wpe"][len(ids) - 1]) + sum(attribute(L["bo"]) for L in m["layers"])
    total = heads.sum() + mlps.sum() + rest + (m["wu"][answer] - m["wu"][wrong]) @ m["lnf"][1]
    assert abs(total.item() - metric(logits, answer, wrong)) < 1e-9, "DLA does not sum to the logit difference"
    return heads, mlps, scale.item()


# ---------------------------------------------------------------------------------------------
# The second implementation: float32 nn.Module over the stored tensors as Hugging Face's modules use them
# (Conv1D addmm with W [in, out], nn.Linear x @ W.T, heads split by view, finfo.min masking), with hook
# points on each head's output (hook_z), the MLP outputs and the final norm's scale, TransformerLens-style.
# The same module is trained below as the IOI model.


class HookedGPT(torch.nn.Module):
    def __init__(self, tensors, config):
        super().__init__()
        self.arch = config["model_type"]
        self.pre = "transformer." if any(k.startswith("transformer.") for k in tensors) else ""
        self.keys = {}
        for k, v in tensors.items():
            if k.endswith("attn.bias") and v.dim() == 4 or k.endswith("masked_bias"):
                continue  # the causal-mask buffers
            name = k.replace(".", "__")
            self.register_parameter(name, torch.nn.Parameter(v.float().clone()))
            self.keys[k] = name
        self.L = config.get("n_layer", config.get("num_layers"))
        self.H = config.get("n_head", config.get("num_heads"))
        self.d = config.get("n_embd", config.get("hidden_size"))
        self.eps = config.get("layer_norm_epsilon", 1e-5)
        self.windows = [0] * self.L
        if self.arch == "gpt_neo":
            kinds = [k for ks, r in config["attention_types"] for k in ks * r]
            self.windows = [config["window_size"] if k == "local" else 0 for k in kinds]
        self.hooks = {}  # name -> fn(tensor) -> tensor or None
        self.cache = {}

    def p(self, name):
        full = self.pre + name if self.pre + name in self.keys else name
        return getattr(self, self.keys[full])

    def hook(self, name, t):
        self.cache[name] = t.detach()
        fn = self.hooks.get(name)
        out = fn(t) if fn else None
        return t if out is None else out

    def forward(self, ids, last=False):
        """ids [B, T] -> logits [B, T, V], or [B, V] at the last position with `last`."""
        B, T = ids.shape
        H, d = self.H, self.d
        dk = d // H
        x = self.p("wte.weight")[ids] + self.p("wpe.weight")[:T]
        for li in range(self.L):
            pre = f"h.{li}."
            h = F.layer_norm(x, (d,), self.p(pre + "ln_1.weight"), self.p(pre + "ln_1.bias"), self.eps)
            if self.arch == "gpt2":
                q, k, v = (torch.addmm(self.p(pre + "attn.c_attn.bias"), h.reshape(B * T, d),
                                       self.p(pre + "attn.c_attn.weight")).view(B, T, 3 * d).split(d, dim=2))
            else:
                a = pre + "attn.attention."
                q, k, v = (F.linear(h, self.p(a + c + "_proj.weight")) for c in "qkv")
            q, k, v = (t.view(B, T, H, dk).transpose(1, 2) for t in (q, k, v))
            s = q @ k.transpose(-1, -2)
            if self.arch == "gpt2":
                s = s / dk ** 0.5
            mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
            if self.windows[li]:
                mask = mask & ~torch.tril(torch.ones(T, T, dtype=torch.bool), -self.windows[li])
            s = torch.where(mask, s, torch.tensor(torch.finfo(s.dtype).min))
            z = self.hook(f"blocks.{li}.attn.hook_z", (torch.softmax(s, -1) @ v).transpose(1, 2))  # [B, T, H, dk]
            o = z.reshape(B, T, d)
            if self.arch == "gpt2":
                x = x + torch.addmm(self.p(pre + "attn.c_proj.bias"), o.reshape(B * T, d),
                                    self.p(pre + "attn.c_proj.weight")).view(B, T, d)
            else:
                a = pre + "attn.attention."
                x = x + F.linear(o, self.p(a + "out_proj.weight"), self.p(a + "out_proj.bias"))
            h = F.layer_norm(x, (d,), self.p(pre + "ln_2.weight"), self.p(pre + "ln_2.bias"), self.eps)
            if self.arch == "gpt2":
                u = F.gelu(h @ self.p(pre + "mlp.c_fc.weight") + self.p(pre + "mlp.c_fc.bias"), approximate="tanh")
                mo = u @ self.p(pre + "mlp.c_proj.weight") + self.p(pre + "mlp.c_proj.bias")
            else:
                u = F.gelu(F.linear(h, self.p(pre + "mlp.c_fc.weight"), self.p(pre + "mlp.c_fc.bias")), approximate="tanh")
                mo = F.linear(u, self.p(pre + "mlp.c_proj.weight"), self.p(pre + "mlp.c_proj.bias"))
            x = x + self.hook(f"blocks.{li}.hook_mlp_out", mo)
        self.hook("ln_final.hook_scale", torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + self.eps))
        self.cache["resid_final"] = x.detach()
        y = F.layer_norm(x[:, -1] if last else x, (d,), self.p("ln_f.weight"), self.p("ln_f.bias"), self.eps)
        wu = self.p("lm_head.weight") if "lm_head.weight" in self.keys else self.p("wte.weight")
        return y @ wu.T

    def w_o(self, li):
        """[H, dk, d]: each head's block of the output projection."""
        pre = f"h.{li}."
        if self.arch == "gpt2":
            w = self.p(pre + "attn.c_proj.weight")
        else:
            w = self.p(pre + "attn.attention.out_proj.weight").T
        return w.view(self.H, self.d // self.H, self.d)

    def unembed(self):
        return self.p("lm_head.weight") if "lm_head.weight" in self.keys else self.p("wte.weight")


@torch.no_grad()
def run_hooked(model, ids, patch=None):
    """patch: (source ids, [(layer, head), ...]): those heads' hook_z from the source run."""
    model.hooks = {}
    if patch:
        model(torch.tensor([patch[0]]))
        src = {k: v.clone() for k, v in model.cache.items()}
        for li in {l for l, _ in patch[1]}:
            heads = [h for l, h in patch[1] if l == li]
            name = f"blocks.{li}.attn.hook_z"

            def fn(z, name=name, heads=heads):
                z = z.clone()
                z[:, :, heads] = src[name][:, :, heads]
                return z
            model.hooks[name] = fn
    out = model(torch.tensor([ids]))[0]
    model.hooks = {}
    return out


@torch.no_grad()
def patch_heads_hooked(model, clean, corrupted, answer, wrong):
    base = run_hooked(model, corrupted)
    m0 = (base[-1, answer] - base[-1, wrong]).item()
    eff = torch.zeros(model.L, model.H)
    for li in range(model.L):
        for h in range(model.H):
            y = run_hooked(model, corrupted, (clean, [(li, h)]))
            eff[li, h] = (y[-1, answer] - y[-1, wrong]).item() - m0
    return eff


@torch.no_grad()
def dla_hooked(model, ids, answer, wrong):
    run_hooked(model, ids)
    c = model.cache
    scale = c["ln_final.hook_scale"][0, -1]
    wu = model.unembed()
    direction = (wu[answer] - wu[wrong]) * model.p("ln_f.weight")
    heads = []
    for li in range(model.L):
        per = torch.einsum("hk,hkd->hd", c[f"blocks.{li}.attn.hook_z"][0, -1], model.w_o(li))  # [H, d]
        heads.append(((per - per.mean(-1, keepdim=True)) / scale) @ direction)
    mlps = []
    for li in range(model.L):
        v = c[f"blocks.{li}.hook_mlp_out"][0, -1]
        mlps.append(((v - v.mean()) / scale) @ direction)
    return torch.stack(heads), torch.stack(mlps)


# ---------------------------------------------------------------------------------------------
# Part 1: the random checkpoints.


def rounded(t, digits=9):
    return [float(f"{v:.{digits}g}") for v in t.reshape(-1).tolist()]


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, separators=(",", ":"))
        f.write("\n")


def random_checkpoint_cases(folder):
    config = json.load(open(os.path.join(PRETRAINED, folder, "config.json")))
    stored = read_safetensors(os.path.join(PRETRAINED, folder, "model.safetensors"))
    m = canonical(stored, config)
    hooked = HookedGPT(stored, config)
    V = m["wte"].shape[0]
    L, H = len(m["layers"]), m["H"]
    gen = torch.Generator().manual_seed(35)
    diffs = {"patch": 0.0, "patchHeads": 0.0, "dla": 0.0}
    rel = {"patch": 0.0, "patchHeads": 0.0, "dla": 0.0}
    out = {"checkpoint": f"tests/golden/pretrained/{folder}", "shapes": {"layers": L, "heads": H, "vocab": V},
           "patch": [], "patchHeads": [], "dla": []}

    def note(kind, a, b):
        d = (a.double() - b.double()).abs().max().item()
        diffs[kind] = max(diffs[kind], d)
        rel[kind] = max(rel[kind], d / max(b.double().abs().max().item(), 1e-30))

    for T, heads in ((12, [[0, 1], [1, 3]]), (7, [[1, 0]]), (16, [[0, 0], [0, 2], [1, 2]])):
        ids = torch.randint(0, V - 1, (T,), generator=gen).tolist()
        source = torch.randint(0, V - 1, (T,), generator=gen).tolist()
        _, src = forward64(m, source)
        logits, _ = forward64(m, ids, {(l, h): src["z"][l][:, h] for l, h in heads})
        note("patch", run_hooked(hooked, ids, (source, [tuple(x) for x in heads])), logits)
        out["patch"].append({"ids": ids, "source": source, "heads": heads, "logits": rounded(logits)})
    for T in (10, 16):
        clean = torch.randint(0, V - 1, (T,), generator=gen).tolist()
        corrupted = list(clean)
        for pos in (2, T - 3):
            corrupted[pos] = (clean[pos] + 1 + torch.randint(0, V - 2, (1,), generator=gen).item()) % (V - 1)
        answer, wrong = torch.randint(0, V - 1, (2,), generator=gen).tolist()
        if answer == wrong:
            wrong = (wrong + 1) % (V - 1)
        eff, m_corr, m_clean = patch_heads64(m, clean, corrupted, answer, wrong)
        note("patchHeads", patch_heads_hooked(hooked, clean, corrupted, answer, wrong), eff)
        out["patchHeads"].append({"clean": clean, "corrupted": corrupted, "answer": answer, "wrong": wrong,
                                  "metricClean": m_clean, "metricCorrupted": m_corr, "effects": rounded(eff)})
        heads, mlps, scale = dla64(m, clean, answer, wrong)
        h32, m32 = dla_hooked(hooked, clean, answer, wrong)
        note("dla", torch.cat([h32.reshape(-1), m32]), torch.cat([heads.reshape(-1), mlps]))
        out["dla"].append({"ids": clean, "answer": answer, "wrong": wrong, "scale": scale,
                           "logitDiff": m_clean, "heads": rounded(heads), "mlps": rounded(mlps)})
    out["float32MaxAbsDiff"] = diffs
    out["float32MaxRelDiff"] = rel
    for k, v in rel.items():
        assert v < 1e-4, f"{folder}: float32 hook-style {k} differs from float64 by {v} of the largest value"
    return out


# ---------------------------------------------------------------------------------------------
# Part 2: the IOI model. Prompts and words come from web/lib/api/findings.js (one source for both).

EOT = "<|endoftext|>"


def from_js(expr):
    code = f"import('{REPO}/web/lib/api/findings.js').then((m) => console.log(JSON.stringify({expr})))"
    return json.loads(subprocess.run(["node", "-e", code], check=True, capture_output=True, text=True).stdout)


def byte_chars():
    order = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    chars = [chr(b) for b in order]
    n = 0
    for b in range(256):
        if b not in order:
            order.append(b)
            chars.append(chr(256 + n))
            n += 1
    return dict(zip(order, chars)), order


B2C, BYTE_ORDER = byte_chars()
# The ByteLevel pre-tokenizer's regex on ASCII text.
PRE = re.compile(r"'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+")


def pieces(text):
    assert text.isascii()
    return ["".join(B2C[b] for b in p.encode()) for p in PRE.findall(text)]


def build_tokenizer(texts):
    """Byte-level BPE whose merges build every word of `texts` whole, left to right. Each merge's left
    part starts a word; merges of words with a leading space rank first, so inside such a word the chain
    from its space always wins over a bare word's merge (" the" against "the")."""
    vocab = {B2C[b]: i for i, b in enumerate(BYTE_ORDER)}
    merges = []
    for w in sorted({p for t in texts for p in pieces(t)}):
        for k in range(1, len(w)):
            if w[:k + 1] not in vocab:
                merges.append((w[:k], w[k]))
                vocab[w[:k + 1]] = len(vocab)
    merges.sort(key=lambda m: not m[0].startswith("Ġ"))  # stable: ids stay in word order
    eot = len(vocab)
    tok = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": eot, "content": EOT, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": True, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
                  "merges": [a + " " + b for a, b in merges]},
    }
    return tok, vocab, eot


def bpe(word, ranks):
    """BPE as the tokenizers library applies it: the lowest-ranked adjacent pair first, leftmost on ties."""
    symbols = list(word)
    while len(symbols) > 1:
        pairs = [(ranks.get((a, b), len(ranks)), k) for k, (a, b) in enumerate(zip(symbols, symbols[1:]))]
        rank, k = min(pairs)
        if rank == len(ranks):
            break
        symbols[k:k + 2] = [symbols[k] + symbols[k + 1]]
    return symbols


def encode(tok, text):
    vocab = tok["model"]["vocab"]
    ranks = {tuple(m.split(" ")): i for i, m in enumerate(tok["model"]["merges"])}
    out = []
    for p in pieces(text):
        symbols = bpe(p, ranks)
        assert symbols == [p], f"{p!r} is not one token: {symbols}"
        out.append(vocab[p])
    return out


IOI = dict(n_layer=2, n_embd=64, n_head=4, n_positions=32, steps=1200, batch=32, lr=3e-3, seed=35)


def ioi_config(vocab_size, eot):
    return {
        "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "bos_token_id": eot,
        "eos_token_id": eot, "layer_norm_epsilon": 1e-5, "model_type": "gpt2", "n_ctx": IOI["n_positions"],
        "n_embd": IOI["n_embd"], "n_head": IOI["n_head"], "n_inner": None, "n_layer": IOI["n_layer"],
        "n_positions": IOI["n_positions"], "scale_attn_weights": True, "torch_dtype": "float32",
        "vocab_size": vocab_size,
    }


def init_gpt2(vocab_size, gen):
    d, L = IOI["n_embd"], IOI["n_layer"]

    def randn(*shape, std=0.02):
        return torch.randn(*shape, generator=gen) * std
    s = [("transformer.wte.weight", randn(vocab_size, d)), ("transformer.wpe.weight", randn(IOI["n_positions"], d, std=0.01))]
    for i in range(L):
        p = f"transformer.h.{i}."
        s += [(p + "ln_1.weight", torch.ones(d)), (p + "ln_1.bias", torch.zeros(d)),
              (p + "attn.c_attn.weight", randn(d, 3 * d)), (p + "attn.c_attn.bias", torch.zeros(3 * d)),
              (p + "attn.c_proj.weight", randn(d, d, std=0.02 / math.sqrt(2 * L))), (p + "attn.c_proj.bias", torch.zeros(d)),
              (p + "ln_2.weight", torch.ones(d)), (p + "ln_2.bias", torch.zeros(d)),
              (p + "mlp.c_fc.weight", randn(d, 4 * d)), (p + "mlp.c_fc.bias", torch.zeros(4 * d)),
              (p + "mlp.c_proj.weight", randn(4 * d, d, std=0.02 / math.sqrt(2 * L))), (p + "mlp.c_proj.bias", torch.zeros(d))]
    s += [("transformer.ln_f.weight", torch.ones(d)), ("transformer.ln_f.bias", torch.zeros(d))]
    return s


def encoded(tok, prompts):
    vocab = tok["model"]["vocab"]
    return [dict(p, ids=encode(tok, p["clean"]), cids=encode(tok, p["corrupted"]),
                 a=vocab["Ġ" + p["names"][0]], w=vocab["Ġ" + p["names"][1]]) for p in prompts]


def top3(grid, H):
    order = sorted(range(grid.numel()), key=lambda k: -grid.reshape(-1)[k].item())
    flat = grid.reshape(-1)
    return [[k // H, k % H] for k in order[:3]], (flat[order[2]] - flat[order[3]]).item()


def ioi_words():
    """The prompt sets and the tokenizer that keeps every word of the templates whole."""
    words = from_js("{ train: m.ioiPrompts({ n: 20000, seed: 1 }), test: m.ioiPrompts({ n: 400, seed: 2 }), "
                    "checks: m.ioiPrompts({ n: 16, seed: 3 }), T: m.IOI_TEMPLATES, N: m.IOI_NAMES, "
                    "P: m.IOI_PLACES, O: m.IOI_OBJECTS }")
    every = [t.replace("{first}", n).replace("{second}", n).replace("{S}", n).replace("{PLACE}", p).replace("{OBJECT}", o)
             + " " + n for t in words["T"] for n in words["N"] for p in words["P"][:1] for o in words["O"][:1]]
    every += [f"the {p} a {o}" for p in words["P"] for o in words["O"]]
    tok, vocab, eot = build_tokenizer(every)
    return words, tok, vocab, eot


def ioi_model():
    words, tok, vocab, eot = ioi_words()
    V = eot + 1
    train = encoded(tok, words["train"])
    seen = {p["clean"] for p in train}
    test = [p for p in encoded(tok, words["test"]) if p["clean"] not in seen]
    checks = encoded(tok, words["checks"])
    by_len = {}
    for p in train:
        by_len.setdefault(len(p["ids"]), []).append(p)
    lens = sorted(by_len)

    gen = torch.Generator().manual_seed(IOI["seed"])
    model = HookedGPT(dict(init_gpt2(V, gen)), ioi_config(V, eot))
    opt = torch.optim.AdamW(model.parameters(), lr=IOI["lr"], weight_decay=0.01)
    torch.manual_seed(IOI["seed"])
    t0, cpu0 = time.time(), time.process_time()
    for step in range(IOI["steps"]):
        group = by_len[lens[step % len(lens)]]
        batch = [group[k] for k in torch.randint(0, len(group), (IOI["batch"],), generator=gen).tolist()]
        ids = torch.tensor([p["ids"] for p in batch])
        target = torch.tensor([p["a"] for p in batch])
        lr = IOI["lr"] * min(1.0, (step + 1) / 100) * (0.5 + 0.5 * math.cos(math.pi * step / IOI["steps"]))
        for g in opt.param_groups:
            g["lr"] = lr
        loss = F.cross_entropy(model(ids, last=True), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(f"  step {step} loss {loss.item():.4f} {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    train_seconds, train_cpu = time.time() - t0, time.process_time() - cpu0

    @torch.no_grad()
    def evaluate(prompts):
        right, diffs = 0, []
        for p in prompts:
            y = model(torch.tensor([p["ids"]]))[0, -1]
            diffs.append((y[p["a"]] - y[p["w"]]).item())
            right += int(y.argmax().item() == p["a"])
        return right / len(prompts), sum(diffs) / len(diffs), sum(d > 0 for d in diffs) / len(diffs)

    acc, mean_diff, io_wins = evaluate(test)
    folder = os.path.join(HERE, "ioi-model")
    os.makedirs(folder, exist_ok=True)
    config = ioi_config(V, eot)
    names = [k for k in model.keys]
    write_safetensors(os.path.join(folder, "model.safetensors"), [(k, model.p(k).detach()) for k in names])
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    with open(os.path.join(folder, "tokenizer.json"), "w") as f:
        json.dump(tok, f, ensure_ascii=False)
        f.write("\n")

    # PyTorch's own patching and DLA on the written weights, and the float64 reference beside them.
    stored = read_safetensors(os.path.join(folder, "model.safetensors"))
    hooked = HookedGPT(stored, config)
    m = canonical(stored, config)
    H = IOI["n_head"]
    cases, mean_eff, mean_dla, worst = [], torch.zeros(IOI["n_layer"], H), torch.zeros(IOI["n_layer"], H), 0.0
    for p in checks:
        eff = patch_heads_hooked(hooked, p["ids"], p["cids"], p["a"], p["w"])
        dh, dm = dla_hooked(hooked, p["ids"], p["a"], p["w"])
        e64, mc, mk = patch_heads64(m, p["ids"], p["cids"], p["a"], p["w"])
        h64, m64, _ = dla64(m, p["ids"], p["a"], p["w"])
        worst = max(worst, (eff.double() - e64).abs().max().item() / e64.abs().max().item(),
                    (dh.double() - h64).abs().max().item() / h64.abs().max().item())
        mean_eff += eff / len(checks)
        mean_dla += dh / len(checks)
        tp, mp = top3(eff, H)
        td, md = top3(dh, H)
        cases.append({"clean": p["clean"], "corrupted": p["corrupted"], "answer": p["answer"], "wrong": p["wrong"],
                      "ids": p["ids"], "corruptedIds": p["cids"], "answerId": p["a"], "wrongId": p["w"],
                      "metricClean": mk, "metricCorrupted": mc, "effects": rounded(e64, 7),
                      "dlaHeads": rounded(h64, 7), "dlaMlps": rounded(m64, 7),
                      "top3Patch": tp, "top3PatchMargin": mp, "top3Dla": td, "top3DlaMargin": md})
    tp, mp = top3(mean_eff, H)
    td, md = top3(mean_dla, H)
    expected = {
        "training": dict(IOI, seconds=round(train_seconds, 1), cpuSeconds=round(train_cpu, 1), trainPrompts=len(train), testPrompts=len(test)),
        "accuracy": acc, "answerBeatsWrong": io_wins, "meanLogitDiff": mean_diff,
        "float64VsTorchMaxRelDiff": worst,
        "mean": {"prompts": len(checks), "effects": rounded(mean_eff, 7), "dlaHeads": rounded(mean_dla, 7),
                 "top3Patch": tp, "top3PatchMargin": mp, "top3Dla": td, "top3DlaMargin": md},
        "cases": cases,
    }
    write_json(os.path.join(folder, "expected.json"), expected)
    return expected


def main():
    report = {}
    for folder in ("gpt2-f32", "gpt2-bf16", "neo-f32"):
        out = random_checkpoint_cases(folder)
        write_json(os.path.join(HERE, f"causal-{folder}.json"), out)
        report[folder] = out["float32MaxRelDiff"]
        print(folder, "float32 vs float64 max abs", out["float32MaxAbsDiff"], "rel", out["float32MaxRelDiff"])
    e = ioi_model()
    print("ioi-model: accuracy", e["accuracy"], "answer beats wrong", e["answerBeatsWrong"],
          "mean logit diff", round(e["meanLogitDiff"], 3), "train s", e["training"]["seconds"])
    print("  float64 vs torch hooks max rel diff", e["float64VsTorchMaxRelDiff"])
    print("  mean over", e["mean"]["prompts"], "prompts: top3 patch", e["mean"]["top3Patch"], "margin",
          round(e["mean"]["top3PatchMargin"], 4), "top3 DLA", e["mean"]["top3Dla"], "margin", round(e["mean"]["top3DlaMargin"], 4))
    for c in e["cases"][:4]:
        print("  ", c["clean"], "| patch", c["top3Patch"], "DLA", c["top3Dla"])


if __name__ == "__main__":
    main()
