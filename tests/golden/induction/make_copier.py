#!/usr/bin/python3
"""A tiny GPT-2 that copies a repeat with one head whose pattern is not the induction shape (issue 33, point 7).

Sequences are <|endoftext|> then 12 random lowercase letters twice (one byte-level token each), as in
make_induction.py, but with 2 heads per layer and no heads switched off while training: one head
learns to copy, and it finds "the token after the earlier copy" by position (12 tokens back, less
one), not by content. On the explorer's detector sequence (a repeat of 15 random tokens) it puts
almost no weight on the induction stripe, so the grid does not label it; switching it off still
costs the model the whole repeat. The explorer must name it from the loss, not from its pattern.

Written as config.json, model.safetensors and tokenizer.json the way ../pretrained/make_pretrained.py
writes them, with expected.json: PyTorch's own numbers on one held-out sequence (its loss with every
head on and with each head off, the share of the repeat it predicts), and the induction stripe on a
repeat of 15 random letters (the detector's length for this context), for the JS tests to compare.

    /usr/bin/python3 tests/golden/induction/make_copier.py   # about 20 s of CPU, fixed seeds
"""
import math, os, random, sys
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pretrained"))
import make_pretrained as mp  # noqa: E402

torch.set_num_threads(1)
SEED = int(os.environ.get("SEED", "2"))
D, H, L, NPOS, N = 32, 2, 2, 32, 12
DETECTOR_N = 15  # headScoreOptions(): n = floor((contextLength - 1) / 2) for a 32-token context
LETTERS = "abcdefghijklmnopqrstuvwxyz"
STEPS = int(os.environ.get("STEPS", "400"))
T = 2 * N + 1
OUT = os.path.join(HERE, "gpt2-copier")

tok = mp.ByteLevelBPE([])
V = tok.size
EOT = tok.eot_id
LETTER_IDS = [tok.encode(c)[0][0] for c in LETTERS]


def init(gen):
    def randn(*shape, std):
        return (torch.randn(*shape, generator=gen) * std).requires_grad_()

    def const(n, value):
        return torch.full((n,), float(value), requires_grad=True)
    w = {"wte.weight": randn(V, D, std=0.3), "wpe.weight": randn(NPOS, D, std=0.1)}
    for i in range(L):
        p = f"h.{i}."
        w.update({
            p + "ln_1.weight": const(D, 1), p + "ln_1.bias": const(D, 0),
            p + "attn.c_attn.weight": randn(D, 3 * D, std=D ** -0.5), p + "attn.c_attn.bias": const(3 * D, 0),
            p + "attn.c_proj.weight": randn(D, D, std=D ** -0.5 / 2), p + "attn.c_proj.bias": const(D, 0),
            p + "ln_2.weight": const(D, 1), p + "ln_2.bias": const(D, 0),
            p + "mlp.c_fc.weight": randn(D, 4 * D, std=D ** -0.5), p + "mlp.c_fc.bias": const(4 * D, 0),
            p + "mlp.c_proj.weight": randn(4 * D, D, std=(4 * D) ** -0.5 / 2), p + "mlp.c_proj.bias": const(D, 0),
        })
    w["ln_f.weight"] = const(D, 1)
    w["ln_f.bias"] = const(D, 0)
    return w


def forward(w, ids, ablate=(), want_attention=False):
    """GPT2LMHeadModel's forward (gelu_new, tied unembedding); ablate: (layer, head) outputs zeroed before c_proj."""
    B, T = ids.shape
    x = w["wte.weight"][ids] + w["wpe.weight"][:T]
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    attn = []
    for i in range(L):
        p = f"h.{i}."
        h = F.layer_norm(x, (D,), w[p + "ln_1.weight"], w[p + "ln_1.bias"], 1e-5)
        qkv = h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
        q, k, v = [t.view(B, T, H, D // H).transpose(1, 2) for t in qkv.split(D, dim=2)]
        s = (q @ k.transpose(-1, -2)) / math.sqrt(D // H)
        a = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
        attn.append(a)
        keep = torch.ones(H)
        for (l, hh) in ablate:
            if l == i:
                keep[hh] = 0
        o = (a @ v) * keep.view(1, H, 1, 1)
        x = x + o.transpose(1, 2).reshape(B, T, D) @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        h = F.layer_norm(x, (D,), w[p + "ln_2.weight"], w[p + "ln_2.bias"], 1e-5)
        x = x + F.gelu(h @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"], approximate="tanh") @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    x = F.layer_norm(x, (D,), w["ln_f.weight"], w["ln_f.bias"], 1e-5)
    logits = x @ w["wte.weight"].T
    return (logits, attn) if want_attention else logits


def sequence(rng, n=N):
    r = [rng.choice(LETTER_IDS) for _ in range(n)]
    return [EOT] + r + r


def mean_loss(logits, ids):
    """Mean next-token cross-entropy over every position that has a next token (what the explorer ranks by)."""
    return F.cross_entropy(logits[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1)).item()


def repeat_accuracy(logits, ids):
    """Share of the repeat's tokens after its first (positions N+1 … 2N) that the argmax predicts."""
    pred = logits[0, N:2 * N].argmax(-1)
    return (pred == ids[0, N + 1:]).float().mean().item()


def main():
    gen = torch.Generator().manual_seed(SEED)
    rng = random.Random(SEED)
    w = init(gen)
    opt = torch.optim.Adam(list(w.values()), lr=3e-3)
    # targets 1..T-1: the repeat (which copying predicts) weighs 1, the rest 0.2 (the letters' frequencies)
    weight = torch.tensor([0.2] * N + [1.0] * N)
    for step in range(STEPS):
        ids = torch.tensor([sequence(rng) for _ in range(32)])
        logits = forward(w, ids)
        ce = F.cross_entropy(logits[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1), reduction="none").view(32, T - 1)
        loss = (ce * weight).sum() / (weight.sum() * 32)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0 or step == STEPS - 1:
            print(f"step {step} loss {loss.item():.3f}", flush=True)
    w = {k: v.detach() for k, v in w.items()}
    ids = torch.tensor([sequence(random.Random(1000 + SEED))])
    text = tok.decode(ids[0].tolist())
    heads = [(l, h) for l in range(L) for h in range(H)]
    with torch.no_grad():
        logits = forward(w, ids)
        base = mean_loss(logits, ids)
        accuracy = repeat_accuracy(logits, ids)
        singles = {f"{l}.{h}": mean_loss(forward(w, ids, [(l, h)]), ids) - base for (l, h) in heads}
        accuracy_off = {f"{l}.{h}": repeat_accuracy(forward(w, ids, [(l, h)]), ids) for (l, h) in heads}

        def stripe(n, seed):
            """Mean attention on the induction stripe A[t, t−n+1], t = n+1 … 2n, of BOS + r + r (headScores' definition)."""
            r = [random.Random(seed + k).choice(LETTER_IDS) for k in range(n)]
            _, a = forward(w, torch.tensor([[EOT] + r + r]), want_attention=True)
            rows = list(range(n + 1, 2 * n + 1))
            return {f"{l}.{h}": a[l][0, h, rows, [t - n + 1 for t in rows]].mean().item() for (l, h) in heads}
        induction = stripe(DETECTOR_N, 7)
    carrier = max(singles, key=singles.get)
    print("text", text, "loss", round(base, 4), "repeat accuracy", round(accuracy, 3))
    print("induction (n = 15)", {k: round(v, 3) for k, v in induction.items()})
    print("single", {k: round(v, 3) for k, v in singles.items()})
    print("accuracy with one head off", {k: round(v, 3) for k, v in accuracy_off.items()})
    print("carrier", carrier)
    os.makedirs(OUT, exist_ok=True)
    config = mp.gpt2_config(V, EOT, "float32")
    config.update({"n_embd": D, "n_head": H, "n_layer": L, "n_positions": NPOS, "n_ctx": NPOS})
    mp.write_json(os.path.join(OUT, "config.json"), config)
    mp.write_json(os.path.join(OUT, "tokenizer.json"), tok.tokenizer_json())
    mp.write_safetensors(os.path.join(OUT, "model.safetensors"), [(k, v.contiguous()) for k, v in w.items()])
    mp.write_json(os.path.join(OUT, "expected.json"), {
        "seed": SEED, "steps": STEPS, "text": text, "ids": ids[0].tolist(), "loss": base,
        "repeatAccuracy": accuracy, "lossChange": singles, "repeatAccuracyOff": accuracy_off,
        "carrier": [int(x) for x in carrier.split(".")], "induction15": induction,
    })


if __name__ == "__main__":
    main()
