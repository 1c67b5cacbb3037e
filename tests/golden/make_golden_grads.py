#!/usr/bin/python3
"""Golden gradients for HeadLab's multi-head attention backward, from PyTorch autograd.

Run from the repository root with Debian's Python (torch 1.13 is installed there):

    /usr/bin/python3 tests/golden/make_golden_grads.py

It rewrites tests/golden/grads/golden_grads.inc (deterministic: fixed seed, fixed
case list), which tests/cpp/test_golden_grads.cpp includes.

Inputs, weights and the upstream gradient G are drawn in float32 (so the C++ float
inputs are exact) and used in float64. The forward pass is the formula in plain
torch ops, with HeadLab's layouts (row-major, y = x @ W):
    w_q, w_k [d_model, h*d_k] (head i in columns i*d_k..), w_v [d_model, h*d_v],
    w_o [h*d_v, d_model], b_q, b_k [h*d_k], b_v [h*d_v], b_o [d_model]
    head_i = softmax(Q_i K_i^T / sqrt(d_k), masked -> -inf) V_i,  Y = Concat(heads) w_o + b_o
Loss = sum(Y * G), so dY = G. For self-attention query, key and value are one
tensor X and its gradient is the sum of the three (what mha_backward writes when
query, key and value alias one buffer). Config (a)'s forward is cross-checked
against torch.nn.MultiheadAttention (wQ = in_proj_weight[:E].T, ...).
"""

import math
import os

import torch

SEED = 20240607
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grads", "golden_grads.inc")

# (name, t_q, t_k, d_model, h, d_k, d_v, causal, self, bias, padded keys)
CASES = [
    ("self_T5_d8_h2_bias", 5, 5, 8, 2, 4, 4, False, True, True, 0),
    ("self_causal_T4_d6_h3_nobias", 4, 4, 6, 3, 2, 2, True, True, False, 0),
    ("cross_pad_Tq3_Tk6_d8_h2_bias", 3, 6, 8, 2, 4, 4, False, False, True, 2),
    ("self_dk3_dv5_T4_d4_h2_bias", 4, 4, 4, 2, 3, 5, False, True, True, 0),
]

FIELDS = ["query", "key", "value", "w_q", "w_k", "w_v", "w_o", "b_q", "b_k", "b_v", "b_o", "d_out"]
GRADS = ["w_q", "w_k", "w_v", "w_o", "b_q", "b_k", "b_v", "b_o", "query", "key", "value"]


def forward(t, h, d_k, d_v, causal, mask, bias):
    """t: dict of float64 tensors; mask: [t_k] bool (True = attend) or None."""
    q = t["query"] @ t["w_q"]
    k = t["key"] @ t["w_k"]
    v = t["value"] @ t["w_v"]
    if bias:
        q, k, v = q + t["b_q"], k + t["b_k"], v + t["b_v"]
    t_q, t_k = q.shape[0], k.shape[0]
    blocked = torch.zeros(t_q, t_k, dtype=torch.bool)
    if causal:
        blocked |= torch.triu(torch.ones(t_q, t_k, dtype=torch.bool), diagonal=1)
    if mask is not None:
        blocked |= ~mask[None, :]
    heads = []
    for i in range(h):
        qi = q[:, i * d_k:(i + 1) * d_k]
        ki = k[:, i * d_k:(i + 1) * d_k]
        vi = v[:, i * d_v:(i + 1) * d_v]
        s = (qi @ ki.T) / math.sqrt(d_k)
        s = s.masked_fill(blocked, float("-inf"))
        heads.append(torch.softmax(s, dim=-1) @ vi)
    y = torch.cat(heads, dim=1) @ t["w_o"]
    if bias:
        y = y + t["b_o"]
    return y


def make_case(gen, c):
    name, t_q, t_k, dm, h, d_k, d_v, causal, self_attn, bias, pad = c
    ws = 1.0 / math.sqrt(dm)  # scores of order 1, no saturated softmax

    def rnd(*shape, scale=1.0):
        return (torch.randn(*shape, generator=gen, dtype=torch.float32) * scale).to(torch.float32)

    f = {}
    f["query"] = rnd(t_q, dm)
    f["key"] = f["query"] if self_attn else rnd(t_k, dm)
    f["value"] = f["query"] if self_attn else rnd(t_k, dm)
    f["w_q"] = rnd(dm, h * d_k, scale=ws)
    f["w_k"] = rnd(dm, h * d_k, scale=ws)
    f["w_v"] = rnd(dm, h * d_v, scale=ws)
    f["w_o"] = rnd(h * d_v, dm, scale=ws)
    for b, n in (("b_q", h * d_k), ("b_k", h * d_k), ("b_v", h * d_v), ("b_o", dm)):
        f[b] = rnd(n, scale=0.3) if bias else torch.zeros(0)
    f["d_out"] = rnd(t_q, dm)
    mask = None
    if pad:
        mask = torch.ones(t_k, dtype=torch.bool)
        mask[t_k - pad:] = False

    t = {}
    for k_, v_ in f.items():
        t[k_] = v_.to(torch.float64).clone().requires_grad_(k_ != "d_out")
    if self_attn:  # one tensor X used as query, key and value
        t["key"] = t["query"]
        t["value"] = t["query"]
    y = forward(t, h, d_k, d_v, causal, mask, bias)
    loss = (y * t["d_out"]).sum()
    wrt = [t[g] for g in GRADS if g not in ("key", "value") or not self_attn]
    wrt = [w for w in wrt if w.numel() > 0]
    gs = torch.autograd.grad(loss, wrt)
    grads = {}
    it = iter(gs)
    for g in GRADS:
        if self_attn and g in ("key", "value"):
            grads[g] = torch.zeros(0)  # folded into query's gradient
        elif t[g].numel() == 0:
            grads[g] = torch.zeros(0)
        else:
            grads[g] = next(it)
    if self_attn:
        # Sanity: X's gradient equals the sum of the separate query/key/value gradients.
        sep = {k_: t["query"].detach().clone().requires_grad_(True) for k_ in ("query", "key", "value")}
        t2 = dict(t)
        t2.update(sep)
        y2 = forward(t2, h, d_k, d_v, causal, mask, bias)
        g3 = torch.autograd.grad((y2 * t["d_out"]).sum(), [sep["query"], sep["key"], sep["value"]])
        assert torch.allclose(g3[0] + g3[1] + g3[2], grads["query"], rtol=1e-12, atol=1e-12)
    return f, y.detach(), grads, mask


def check_against_torch_module(f, y, h, bias):
    """Forward of config (a) vs torch.nn.MultiheadAttention: validates the layout mapping."""
    E = f["w_q"].shape[0]
    m = torch.nn.MultiheadAttention(E, h, bias=bias, batch_first=True).double()
    with torch.no_grad():
        m.in_proj_weight.copy_(torch.cat([f["w_q"].T, f["w_k"].T, f["w_v"].T]).double())
        m.out_proj.weight.copy_(f["w_o"].T.double())
        if bias:
            m.in_proj_bias.copy_(torch.cat([f["b_q"], f["b_k"], f["b_v"]]).double())
            m.out_proj.bias.copy_(f["b_o"].double())
    x = f["query"].double()[None]
    with torch.no_grad():
        out, _ = m(x, x, x, need_weights=False)
    err = (out[0] - y).abs().max().item()
    assert err < 1e-12, err
    return err


def lit(t):
    vals = t.detach().reshape(-1).tolist()
    if not vals:
        return "{}"
    parts = [("%.9g" % float(torch.tensor(v, dtype=torch.float32).item())) for v in vals]
    parts = [p + ("f" if ("." in p or "e" in p) else ".f") for p in parts]
    lines, cur = [], ""
    for p in parts:
        if len(cur) + len(p) + 2 > 96:
            lines.append(cur.rstrip())
            cur = ""
        cur += p + ", "
    lines.append(cur.rstrip().rstrip(","))
    return "{\n      " + "\n      ".join(lines) + "}"


def main():
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    out = [
        "// Generated by tests/golden/make_golden_grads.py (PyTorch %s autograd, float64 from" % torch.__version__.split("+")[0],
        "// float32 inputs). Do not edit. Fields, in order:",
        "//   name, t_q, t_k, d_model, h, d_k, d_v, causal, self, bias, key_mask (empty = none, 0 = padding),",
        "//   " + ", ".join(FIELDS) + ",",
        "//   output, then gradients " + ", ".join("grad_" + g for g in GRADS) + ".",
        "// Self-attention: key/value and their gradients are empty; grad_query is dX (sum of the three).",
        "// Unbiased configs: biases and their gradients are empty.",
    ]
    for c in CASES:
        name, t_q, t_k, dm, h, d_k, d_v, causal, self_attn, bias, pad = c
        f, y, grads, mask = make_case(gen, c)
        if name.startswith("self_T5"):
            err = check_against_torch_module(f, y, h, bias)
            print("config a vs torch.nn.MultiheadAttention: max |diff| %.3g" % err)
        if self_attn:
            f = dict(f, key=torch.zeros(0), value=torch.zeros(0))
        mask_lit = "{}" if mask is None else "{" + ", ".join(str(int(b)) for b in mask.tolist()) + "}"
        out.append('{"%s", %d, %d, %d, %d, %d, %d, %s, %s, %s, %s,' % (
            name, t_q, t_k, dm, h, d_k, d_v, str(causal).lower(), str(self_attn).lower(), str(bias).lower(),
            mask_lit))
        body = ["    /* %s */ %s" % (k_, lit(f[k_])) for k_ in FIELDS]
        body.append("    /* output */ %s" % lit(y))
        body += ["    /* grad_%s */ %s" % (g, lit(grads[g])) for g in GRADS]
        out.append(",\n".join(body) + "},")
        print("%-32s |grad| max %.3g" % (name, max(g.abs().max().item() for g in grads.values() if g.numel())))
    text = "\n".join(out) + "\n"
    with open(OUT, "w") as fh:
        fh.write(text)
    print("wrote %s (%d bytes)" % (OUT, len(text)))


if __name__ == "__main__":
    main()
