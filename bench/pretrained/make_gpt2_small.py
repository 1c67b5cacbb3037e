#!/usr/bin/python3
"""A random model of GPT-2 small's shapes for the real-model benchmark, and its ONNX export.

Writes into OUT (default build/bench-gpt2; never committed: about 1 GB):
  config.json         GPT2LMHeadModel, 12 layers, 12 heads, d 768, vocabulary 50257, 1024 positions
  model.safetensors   float32, keys without the `transformer.` prefix, no lm_head.weight (tied to wte),
                      as openai-community/gpt2 stores them (without its mask buffers)
  tokenizer.json      a byte-level BPE of 50257 entries: the fixtures' learnt merges, then merges of
                      byte pairs to fill the vocabulary (the benchmark feeds ids; this only lets the
                      loader and a page tokenize)
  model.onnx          the same model exported by torch.onnx.export (opset 17): input_ids int64 [1, T]
                      (T dynamic) -> logits float32 [1, T, 50257]; wte stored once (Gather and the
                      unembedding's Gemm with transB share the initializer)
  check.json          ids (T = 64, fixed seed) and the float32 PyTorch logits of the last position, so
                      a benchmark can check an engine's output before timing it

Weights follow Hugging Face's GPT-2 initialisation (normal, std 0.02; LayerNorm 1 and 0; biases 0)
with small random biases and LayerNorm gains so that no term is trivially zero.

Run with Debian's Python (torch 1.13, python3-onnx):
  /usr/bin/python3 bench/pretrained/make_gpt2_small.py [OUT] [--no-onnx] [--no-check]
(--no-check skips the float64 comparison, about 45-90 s of the run.)
"""

import math
import os
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "golden", "pretrained"))
import make_pretrained as mp  # noqa: E402  (safetensors writer, byte-level BPE, GPT-2 config)

SEED = 124
N_LAYER, N_HEAD, D, VOCAB, N_POS = 12, 12, 768, 50257, 1024
CHECK_T = 64


def gpt2_small_state(gen):
    """GPT2LMHeadModel's tensors (no prefix), Conv1D weights [in, out]."""
    ff = 4 * D

    def normal(*shape, std=0.02):
        return torch.empty(*shape).normal_(0.0, std, generator=gen)

    s = [("wte.weight", normal(VOCAB, D)), ("wpe.weight", normal(N_POS, D, std=0.01))]
    for i in range(N_LAYER):
        p = f"h.{i}."
        s += [
            (p + "ln_1.weight", 1 + normal(D)), (p + "ln_1.bias", normal(D)),
            (p + "attn.c_attn.weight", normal(D, 3 * D)), (p + "attn.c_attn.bias", normal(3 * D)),
            # GPT-2 scales the residual projections by 1/sqrt(2 * n_layer)
            (p + "attn.c_proj.weight", normal(D, D, std=0.02 / math.sqrt(2 * N_LAYER))), (p + "attn.c_proj.bias", normal(D)),
            (p + "ln_2.weight", 1 + normal(D)), (p + "ln_2.bias", normal(D)),
            (p + "mlp.c_fc.weight", normal(D, ff)), (p + "mlp.c_fc.bias", normal(ff)),
            (p + "mlp.c_proj.weight", normal(ff, D, std=0.02 / math.sqrt(2 * N_LAYER))), (p + "mlp.c_proj.bias", normal(D)),
        ]
    s += [("ln_f.weight", 1 + normal(D)), ("ln_f.bias", normal(D))]
    return s


class GPT2Small(torch.nn.Module):
    """GPT-2's forward from the maths over the stored layouts, written so the export stays lean:
    2-D activations [T, d] so every projection is one Gemm on the stored [in, out] weight, and the
    unembedding a Gemm with transB on wte itself."""

    def __init__(self, state):
        super().__init__()
        self.names = [n for n, _ in state]
        self.p = torch.nn.ParameterDict({n.replace(".", "_"): torch.nn.Parameter(t, requires_grad=False) for n, t in state})
        self.register_buffer("causal", torch.tril(torch.ones(N_POS, N_POS, dtype=torch.bool)), persistent=False)
        # A zero bias makes the export a Gemm with transB on wte's own initializer; without one,
        # F.linear becomes a MatMul on a constant-folded transposed copy (150 MB more in the file).
        self.register_buffer("zero_logit_bias", torch.zeros(VOCAB), persistent=False)

    def w(self, name):
        return self.p[name.replace(".", "_")]

    def forward(self, input_ids):
        ids = input_ids[0]
        T = ids.shape[0]
        dk = D // N_HEAD
        x = F.embedding(ids, self.w("wte.weight")) + F.embedding(torch.arange(T), self.w("wpe.weight"))
        mask = self.causal[:T, :T]
        for i in range(N_LAYER):
            p = f"h.{i}."
            h = F.layer_norm(x, (D,), self.w(p + "ln_1.weight"), self.w(p + "ln_1.bias"), 1e-5)
            qkv = torch.addmm(self.w(p + "attn.c_attn.bias"), h, self.w(p + "attn.c_attn.weight"))
            q, k, v = (t.reshape(T, N_HEAD, dk).transpose(0, 1) for t in qkv.split(D, dim=1))
            s = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(dk)
            s = s.masked_fill(~mask, torch.finfo(torch.float32).min)
            o = torch.matmul(torch.softmax(s, dim=-1), v).transpose(0, 1).reshape(T, D)
            x = x + torch.addmm(self.w(p + "attn.c_proj.bias"), o, self.w(p + "attn.c_proj.weight"))
            h = F.layer_norm(x, (D,), self.w(p + "ln_2.weight"), self.w(p + "ln_2.bias"), 1e-5)
            u = F.gelu(torch.addmm(self.w(p + "mlp.c_fc.bias"), h, self.w(p + "mlp.c_fc.weight")), approximate="tanh")
            x = x + torch.addmm(self.w(p + "mlp.c_proj.bias"), u, self.w(p + "mlp.c_proj.weight"))
        x = F.layer_norm(x, (D,), self.w("ln_f.weight"), self.w("ln_f.bias"), 1e-5)
        return F.linear(x, self.w("wte.weight"), self.zero_logit_bias).unsqueeze(0)


def big_tokenizer():
    """The fixtures' tokenizer grown to VOCAB entries with byte-pair merges (deterministic)."""
    merges = mp.train_bpe(mp.TRAINING_TEXT, mp.NUM_MERGES)
    have = {mp.BYTE_TO_CHAR[b] for b in mp.BYTE_ORDER} | {a + b for a, b in merges}
    chars = [mp.BYTE_TO_CHAR[b] for b in mp.BYTE_ORDER]
    want = VOCAB - 1 - 256
    for a in chars:
        for b in chars:
            if len(merges) == want:
                break
            if a + b not in have:
                merges.append((a, b))
                have.add(a + b)
    tok = mp.ByteLevelBPE(merges)
    assert tok.size == VOCAB, tok.size
    return tok


def check_against_fixture_reference(state, ids, logits32):
    """The exported module against the fixtures' float64 forward (make_pretrained.forward64), run
    at GPT-2 small's sizes by setting that module's size constants."""
    saved = (mp.D_MODEL, mp.N_HEAD, mp.N_LAYER)
    mp.D_MODEL, mp.N_HEAD, mp.N_LAYER = D, N_HEAD, N_LAYER
    try:
        m = mp.canonical_gpt2({n: t.double() for n, t in state})
        ref, _, _ = mp.forward64(m, ids)
    finally:
        mp.D_MODEL, mp.N_HEAD, mp.N_LAYER = saved
    diff = (logits32.double() - ref).abs().max().item()
    assert diff < 1e-3, f"GPT2Small differs from the float64 reference by {diff}"
    print(f"  float32 module vs float64 reference: max |diff| {diff:.2e} over {len(ids)} x {VOCAB} logits")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = os.path.abspath(args[0] if args else os.path.join(ROOT, "build", "bench-gpt2"))
    os.makedirs(out, exist_ok=True)
    times = {}

    t0 = time.time()
    tok = big_tokenizer()
    gen = torch.Generator().manual_seed(SEED)
    state = gpt2_small_state(gen)
    times["weights"] = time.time() - t0

    t0 = time.time()
    config = mp.gpt2_config(VOCAB, tok.eot_id, "float32")
    config.update({"n_ctx": N_POS, "n_embd": D, "n_head": N_HEAD, "n_layer": N_LAYER, "n_positions": N_POS})
    mp.write_json(os.path.join(out, "config.json"), config)
    mp.write_json(os.path.join(out, "tokenizer.json"), tok.tokenizer_json(), compact=True)
    nbytes = mp.write_safetensors(os.path.join(out, "model.safetensors"), state, {"format": "pt"})
    times["safetensors"] = time.time() - t0

    model = GPT2Small(state).eval()
    ids = torch.randint(0, tok.eot_id, (1, CHECK_T), generator=torch.Generator().manual_seed(SEED + 1))
    t0 = time.time()
    with torch.no_grad():
        logits = model(ids)
    times["torch forward T=64"] = time.time() - t0
    last = logits[0, -1]
    if "--no-check" not in sys.argv:
        t0 = time.time()
        check_against_fixture_reference(state, ids[0].tolist(), logits[0])
        times["float64 reference check"] = time.time() - t0
    mp.write_json(os.path.join(out, "check.json"), {
        "ids": ids[0].tolist(), "lastLogits": [float("%.7g" % v) for v in last.tolist()],
        "top5": torch.topk(last, 5).indices.tolist()}, compact=True)

    if "--no-onnx" not in sys.argv:
        import onnx
        t0 = time.time()
        path = os.path.join(out, "model.onnx")
        with torch.no_grad():
            torch.onnx.export(model, (ids,), path, input_names=["input_ids"], output_names=["logits"],
                              dynamic_axes={"input_ids": {1: "T"}, "logits": {1: "T"}},
                              opset_version=17, do_constant_folding=True)
        times["onnx export"] = time.time() - t0
        t0 = time.time()
        onnx.checker.check_model(path)
        times["onnx check"] = time.time() - t0

    params = sum(t.numel() for _, t in state)
    print(f"{out}: {params} parameters, model.safetensors {nbytes / 1e6:.0f} MB of weights")
    for f in sorted(os.listdir(out)):
        print(f"  {f}: {os.path.getsize(os.path.join(out, f)) / 1e6:.1f} MB")
    for k, v in times.items():
        print(f"  {k}: {v:.1f} s")


if __name__ == "__main__":
    main()
