#!/usr/bin/python3
"""Golden fixtures for HeadLab's multi-head attention, computed with PyTorch.

Run from the repository root with Debian's Python (torch 1.13 is installed there):

    /usr/bin/python3 tests/golden/make_golden.py

It rewrites tests/golden/fixtures/mha.json; tests/js/golden.test.mjs checks the
wasm module against it. The output is deterministic (fixed seed, fixed case list).

Inputs and weights are drawn in float32, so the Float32Arrays the test builds hold
exactly the same numbers; references are computed from them in float64.
Cases with d_k == d_v == d_model / h use torch.nn.MultiheadAttention; the others
(which torch's module cannot express) use the formula written out in plain torch
ops. Every torch-module case is also cross-checked against that formula, which
validates the weight layout mapping below.

Layout mapping (HeadLab is row-major, y = x @ W):
    wQ = in_proj_weight[:E].T      [E, h*d_k], head i in columns i*d_k..(i+1)*d_k-1
    wK = in_proj_weight[E:2E].T    [E, h*d_k]
    wV = in_proj_weight[2E:].T     [E, h*d_v]
    wO = out_proj.weight.T         [h*d_v, E]
    bQ, bK, bV = in_proj_bias split in thirds; bO = out_proj.bias
"""

import json
import math
import os

import numpy as np
import torch

SEED = 20240601
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "mha.json")

# (name, Tq, Tk or None for self-attention, d_model, h, bias, causal, key padding)
# key padding: None, "tail:n" (last n keys are padding) or "random".
MHA_CASES = [
    ("self_T1_d4_h1_bias", 1, None, 4, 1, True, False, None),
    ("self_T3_d8_h2_nobias", 3, None, 8, 2, False, False, None),
    ("self_T4_d16_h4_bias", 4, None, 16, 4, True, False, None),
    ("self_T5_d12_h3_bias", 5, None, 12, 3, True, False, None),
    ("self_T8_d32_h8_bias", 8, None, 32, 8, True, False, None),
    ("self_T17_d16_h4_nobias", 17, None, 16, 4, False, False, None),
    ("self_T1_d32_h8_nobias", 1, None, 32, 8, False, False, None),
    ("self_causal_T4_d8_h2_bias", 4, None, 8, 2, True, True, None),
    ("self_causal_T5_d4_h1_nobias", 5, None, 4, 1, False, True, None),
    ("self_causal_T8_d12_h3_nobias", 8, None, 12, 3, False, True, None),
    ("self_causal_T17_d32_h8_bias", 17, None, 32, 8, True, True, None),
    ("self_pad_T5_d8_h2_bias", 5, None, 8, 2, True, False, "tail:2"),
    ("self_pad_T17_d12_h3_nobias", 17, None, 12, 3, False, False, "random"),
    ("self_causal_pad_T8_d16_h4_bias", 8, None, 16, 4, True, True, "tail:3"),
    ("cross_Tq1_Tk5_d8_h2_bias", 1, 5, 8, 2, True, False, None),
    ("cross_Tq3_Tk4_d4_h1_bias", 3, 4, 4, 1, True, False, None),
    ("cross_Tq3_Tk3_d12_h3_bias", 3, 3, 12, 3, True, False, None),
    ("cross_Tq5_Tk3_d16_h4_nobias", 5, 3, 16, 4, False, False, None),
    ("cross_Tq4_Tk17_d12_h3_bias", 4, 17, 12, 3, True, False, None),
    ("cross_Tq8_Tk1_d32_h8_nobias", 8, 1, 32, 8, False, False, None),
    ("cross_pad_Tq5_Tk8_d8_h2_bias", 5, 8, 8, 2, True, False, "random"),
    ("cross_pad_Tq17_Tk5_d16_h4_nobias", 17, 5, 16, 4, False, False, "tail:1"),
]

# (name, Tq, Tk or None, d_model, h, d_k, d_v, bias, causal, key padding): plain torch ops.
PLAIN_CASES = [
    ("dkdv_self_T4_d8_h2_dk3_dv5_bias", 4, None, 8, 2, 3, 5, True, False, None),
    ("dkdv_cross_Tq5_Tk3_d12_h3_dk4_dv2_nobias", 5, 3, 12, 3, 4, 2, False, False, None),
    ("dkdv_self_causal_T5_d4_h2_dk8_dv1_bias", 5, None, 4, 2, 8, 1, True, True, None),
    ("dkdv_cross_pad_Tq3_Tk6_d16_h1_dk5_dv7_bias", 3, 6, 16, 1, 5, 7, True, False, "tail:2"),
]


def f32_list(t):
    """float32 tensor -> list of Python floats that parse back to the same float32.

    Uses numpy's shortest float32 repr (a JS Number parsed from it and stored in a
    Float32Array rounds to the same value); falls back to the exact float64 value
    if that ever failed.
    """
    out = []
    for x in t.detach().to(torch.float32).reshape(-1).numpy():
        v = float(repr(x))
        if np.float32(v) != x:
            v = float(x)
        out.append(v)
    return out


def f64_list(t):
    """Reference values, 12 significant digits (far below the test tolerance)."""
    return [float(f"{x:.12g}") for x in t.detach().to(torch.float64).reshape(-1).tolist()]


def key_mask_for(spec, t_k, g):
    """List of 0/1 (0 = padding) or None. Never pads every key."""
    if spec is None:
        return None
    if spec.startswith("tail:"):
        n = int(spec[5:])
        assert 0 < n < t_k
        return [1] * (t_k - n) + [0] * n
    assert spec == "random"
    while True:
        m = (torch.rand(t_k, generator=g) > 0.35).to(torch.int64).tolist()
        if 0 < sum(m) < t_k and m[0] == 1:  # key 0 kept so causal rows never lose every key
            return m


def plain_mha(xq, xk, xv, w, h, d_k, d_v, causal, key_mask):
    """head_i = softmax(Q W_i^Q (K W_i^K)^T / sqrt(d_k)) V W_i^V; Concat(heads) W^O, in float64."""
    def lin(x, wt, b):
        y = x @ wt
        return y if b is None else y + b

    q = lin(xq, w["wQ"], w["bQ"])  # [Tq, h*d_k]
    k = lin(xk, w["wK"], w["bK"])  # [Tk, h*d_k]
    v = lin(xv, w["wV"], w["bV"])  # [Tk, h*d_v]
    t_q, t_k = xq.shape[0], xk.shape[0]
    blocked = torch.zeros(t_q, t_k, dtype=torch.bool)
    if causal:
        blocked |= torch.triu(torch.ones(t_q, t_k, dtype=torch.bool), diagonal=1)
    if key_mask is not None:
        blocked |= (torch.tensor(key_mask) == 0)[None, :]
    heads, weights = [], []
    for i in range(h):
        qi = q[:, i * d_k:(i + 1) * d_k]
        ki = k[:, i * d_k:(i + 1) * d_k]
        vi = v[:, i * d_v:(i + 1) * d_v]
        s = (qi @ ki.T) / math.sqrt(d_k)
        s = s.masked_fill(blocked, float("-inf"))
        p = torch.softmax(s, dim=-1)
        weights.append(p)
        heads.append(p @ vi)
    out = lin(torch.cat(heads, dim=1), w["wO"], w["bO"])
    return out, torch.stack(weights)  # [Tq, E], [h, Tq, Tk]


def randn32(*shape, std=1.0):
    return (torch.randn(*shape, dtype=torch.float32) * std).to(torch.float32)


def inputs(t_q, t_k, d_model):
    is_self = t_k is None
    xq = randn32(t_q, d_model)
    if is_self:
        return True, xq, xq, xq
    return False, xq, randn32(t_k, d_model), randn32(t_k, d_model)


def case_record(name, d_model, h, d_k, d_v, explicit, causal, is_self, xq, xk, xv, key_mask, w32, out, attn):
    rec = {
        "name": name,
        "dModel": d_model,
        "numHeads": h,
        "dK": d_k,
        "dV": d_v,
        "explicitDims": explicit,
        "causal": causal,
        "self": is_self,
        "tQ": xq.shape[0],
        "tK": xk.shape[0],
        "query": f32_list(xq),
        "key": None if is_self else f32_list(xk),
        "value": None if is_self else f32_list(xv),
        "keyMask": key_mask,
    }
    for n in ("wQ", "wK", "wV", "wO", "bQ", "bK", "bV", "bO"):
        rec[n] = None if w32[n] is None else f32_list(w32[n])
    rec["output"] = f64_list(out)
    rec["weights"] = f64_list(attn)
    return rec


def make_mha_case(spec, g):
    name, t_q, t_k, d_model, h, bias, causal, pad = spec
    is_self, xq, xk, xv = inputs(t_q, t_k, d_model)
    t_k = xk.shape[0]
    key_mask = key_mask_for(pad, t_k, g)

    mha = torch.nn.MultiheadAttention(embed_dim=d_model, num_heads=h, bias=bias, batch_first=True)
    std = 1.0 / math.sqrt(d_model)
    in_w = randn32(3 * d_model, d_model, std=std)
    out_w = randn32(d_model, d_model, std=std)
    in_b = randn32(3 * d_model, std=0.1) if bias else None
    out_b = randn32(d_model, std=0.1) if bias else None
    with torch.no_grad():
        mha.in_proj_weight.copy_(in_w)
        mha.out_proj.weight.copy_(out_w)
        if bias:
            mha.in_proj_bias.copy_(in_b)
            mha.out_proj.bias.copy_(out_b)
    mha = mha.double().eval()

    attn_mask = torch.triu(torch.ones(t_q, t_k, dtype=torch.bool), diagonal=1) if causal else None
    kpm = (torch.tensor(key_mask) == 0)[None, :] if key_mask is not None else None
    q64, k64, v64 = (x.to(torch.float64)[None] for x in (xq, xk, xv))
    with torch.no_grad():
        out, attn = mha(q64, k64, v64, key_padding_mask=kpm, need_weights=True,
                        attn_mask=attn_mask, average_attn_weights=False)
    out, attn = out[0], attn[0]  # [Tq, E], [h, Tq, Tk]

    E = d_model
    w32 = {
        "wQ": in_w[:E].T.contiguous(), "wK": in_w[E:2 * E].T.contiguous(), "wV": in_w[2 * E:].T.contiguous(),
        "wO": out_w.T.contiguous(),
        "bQ": in_b[:E] if bias else None, "bK": in_b[E:2 * E] if bias else None,
        "bV": in_b[2 * E:] if bias else None, "bO": out_b,
    }
    # Cross-check the layout mapping against the written-out formula.
    w64 = {n: None if t is None else t.to(torch.float64) for n, t in w32.items()}
    d_k = d_model // h
    ref_out, ref_attn = plain_mha(q64[0], k64[0], v64[0], w64, h, d_k, d_k, causal, key_mask)
    assert torch.allclose(out, ref_out, rtol=1e-12, atol=1e-12), name
    assert torch.allclose(attn, ref_attn, rtol=1e-12, atol=1e-12), name
    assert not torch.isnan(out).any() and not torch.isnan(attn).any(), name
    return case_record(name, d_model, h, d_k, d_k, False, causal, is_self, xq, xk, xv, key_mask, w32, out, attn)


def make_plain_case(spec, g):
    name, t_q, t_k, d_model, h, d_k, d_v, bias, causal, pad = spec
    is_self, xq, xk, xv = inputs(t_q, t_k, d_model)
    t_k = xk.shape[0]
    key_mask = key_mask_for(pad, t_k, g)
    std = 1.0 / math.sqrt(d_model)
    w32 = {
        "wQ": randn32(d_model, h * d_k, std=std),
        "wK": randn32(d_model, h * d_k, std=std),
        "wV": randn32(d_model, h * d_v, std=std),
        "wO": randn32(h * d_v, d_model, std=1.0 / math.sqrt(h * d_v)),
        "bQ": randn32(h * d_k, std=0.1) if bias else None,
        "bK": randn32(h * d_k, std=0.1) if bias else None,
        "bV": randn32(h * d_v, std=0.1) if bias else None,
        "bO": randn32(d_model, std=0.1) if bias else None,
    }
    w64 = {n: None if t is None else t.to(torch.float64) for n, t in w32.items()}
    out, attn = plain_mha(xq.double(), xk.double(), xv.double(), w64, h, d_k, d_v, causal, key_mask)
    assert not torch.isnan(out).any() and not torch.isnan(attn).any(), name
    return case_record(name, d_model, h, d_k, d_v, True, causal, is_self, xq, xk, xv, key_mask, w32, out, attn)


def main():
    torch.manual_seed(SEED)
    g = torch.Generator().manual_seed(SEED + 1)
    cases = [make_mha_case(s, g) for s in MHA_CASES] + [make_plain_case(s, g) for s in PLAIN_CASES]
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names))
    doc = {
        "generator": "tests/golden/make_golden.py",
        "torch": torch.__version__,
        "seed": SEED,
        "cases": cases,
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {len(cases)} cases, {os.path.getsize(OUT)} bytes to {os.path.relpath(OUT)}")


if __name__ == "__main__":
    main()
