#!/usr/bin/python3
"""A tiny GPT-2 trained here to copy repeated letters, for the explorer's head importance (issue 33).

Sequences are <|endoftext|> then 12 random lowercase letters twice (one byte-level token each).
The repeat always starts 12 tokens back, so a head can find "the token after the earlier copy" by
position alone: the layer-0 heads that copy score as induction heads by headScores' definition (mean
attention on the stripe) without a previous-token head before them. (Repeats of varying length, which
force content-based induction, did not train in 1,500 steps here.) Trained with Adam on the repeat's
loss, each head switched off with chance HEAD_DROP per sequence so that heads learn to share the job
(redundancy on purpose); one thread, fixed seeds (about a minute of CPU); written as config.json,
model.safetensors and tokenizer.json the way ../pretrained/make_pretrained.py writes them, with
expected.json: PyTorch's own numbers on one held-out sequence (the text, its loss with every head on,
with each head off and with groups of heads off, and the induction scores as headScores defines
them), for the JS tests to compare against.

    /usr/bin/python3 tests/golden/induction/make_induction.py
"""
import json, math, os, random, sys
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pretrained"))
import make_pretrained as mp  # noqa: E402

torch.set_num_threads(1)
SEED = int(os.environ.get("SEED", "3"))
D, H, L, NPOS, N = 32, 4, 2, 32, 12
LETTERS = "abcdefghijklmnopqrstuvwxyz"
STEPS = int(os.environ.get("STEPS", "400"))
HEAD_DROP = float(os.environ.get("HEAD_DROP", "0.3"))  # each head off with this chance per sequence while training
T = 25
OUT = os.path.join(HERE, "gpt2-induction")

tok = mp.ByteLevelBPE([])
V = tok.size
EOT = tok.eot_id
LETTER_IDS = [tok.encode(c)[0][0] for c in LETTERS]


def init(gen):
    def randn(*shape, std):
        return (torch.randn(*shape, generator=gen) * std).requires_grad_()
    w = {"wte.weight": randn(V, D, std=0.3), "wpe.weight": randn(NPOS, D, std=0.1)}
    for i in range(L):
        p = f"h.{i}."
        w.update({
            p + "ln_1.weight": torch.ones(D, requires_grad=True), p + "ln_1.bias": torch.zeros(D, requires_grad=True),
            p + "attn.c_attn.weight": randn(D, 3 * D, std=D ** -0.5), p + "attn.c_attn.bias": torch.zeros(3 * D, requires_grad=True),
            p + "attn.c_proj.weight": randn(D, D, std=D ** -0.5 / 2), p + "attn.c_proj.bias": torch.zeros(D, requires_grad=True),
            p + "ln_2.weight": torch.ones(D, requires_grad=True), p + "ln_2.bias": torch.zeros(D, requires_grad=True),
            p + "mlp.c_fc.weight": randn(D, 4 * D, std=D ** -0.5), p + "mlp.c_fc.bias": torch.zeros(4 * D, requires_grad=True),
            p + "mlp.c_proj.weight": randn(4 * D, D, std=(4 * D) ** -0.5 / 2), p + "mlp.c_proj.bias": torch.zeros(D, requires_grad=True),
        })
    w["ln_f.weight"] = torch.ones(D, requires_grad=True)
    w["ln_f.bias"] = torch.zeros(D, requires_grad=True)
    return w


def forward(w, ids, ablate=(), want_attention=False, drop=None, heads=H):
    """GPT2LMHeadModel's forward (gelu_new, tied unembedding) with `heads` heads per layer; ablate: (layer, head)
    outputs zeroed before c_proj; drop: [B, L, heads] per-sequence factors on the heads' outputs (training)."""
    B, T = ids.shape
    x = w["wte.weight"][ids] + w["wpe.weight"][:T]
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    attn = []
    for i in range(L):
        p = f"h.{i}."
        h = F.layer_norm(x, (D,), w[p + "ln_1.weight"], w[p + "ln_1.bias"], 1e-5)
        qkv = h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
        q, k, v = [t.view(B, T, heads, D // heads).transpose(1, 2) for t in qkv.split(D, dim=2)]
        s = (q @ k.transpose(-1, -2)) / math.sqrt(D // heads)
        a = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
        attn.append(a)
        o = a @ v  # [B, H, T, dk]
        keep = torch.ones(heads)
        for (l, hh) in ablate:
            if l == i:
                keep[hh] = 0
        o = o * keep.view(1, heads, 1, 1)
        if drop is not None:
            o = o * drop[:, i].view(B, heads, 1, 1)
        x = x + o.transpose(1, 2).reshape(B, T, D) @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        h = F.layer_norm(x, (D,), w[p + "ln_2.weight"], w[p + "ln_2.bias"], 1e-5)
        x = x + F.gelu(h @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"], approximate="tanh") @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    x = F.layer_norm(x, (D,), w["ln_f.weight"], w["ln_f.bias"], 1e-5)
    logits = x @ w["wte.weight"].T
    return (logits, attn) if want_attention else logits


def sequence(rng, n):
    """<|endoftext|>, random letters, then n random letters twice: 25 tokens, the repeat's length varies
    so that only copying (not a fixed offset) predicts it."""
    prefix = [rng.choice(LETTER_IDS) for _ in range(T - 1 - 2 * n)]
    r = [rng.choice(LETTER_IDS) for _ in range(n)]
    return [EOT] + prefix + r + r


def mean_loss(logits, ids):
    """Mean next-token cross-entropy over every position that has a next token (what the explorer ranks by)."""
    return F.cross_entropy(logits[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1)).item()


def train(w, rng, gen, weight, heads=H, head_drop=0.0, steps=STEPS, log_every=250, batch=32):
    """Adam (lr 3e-3) for `steps` steps, each on `batch` sequences(rng, N): the next-token cross-entropy weighted
    per target by `weight` ([T - 1], the same for every sequence, or [batch, T - 1]), summed, over the weights'
    sum across the batch (for [T - 1], weight.sum() * batch: float32 sums in another order differ in the last
    bit, and the fixtures were made this way). With head_drop > 0 each head is switched off with that chance
    per sequence (drawn from `gen` after the step's sequences). Returns the weights detached."""
    opt = torch.optim.Adam(list(w.values()), lr=3e-3)
    for step in range(steps):
        ids = torch.tensor([sequence(rng, N) for _ in range(batch)])
        drop = (torch.rand(batch, L, heads, generator=gen) >= head_drop).float() if head_drop > 0 else None
        logits = forward(w, ids, drop=drop, heads=heads)
        ce = F.cross_entropy(logits[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1), reduction="none").view(batch, T - 1)
        loss = (ce * weight).sum() / (weight.sum() * batch if weight.dim() == 1 else weight.sum())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % log_every == 0 or step == steps - 1:
            print(f"step {step} loss {loss.item():.3f}", flush=True)
    return {k: v.detach() for k, v in w.items()}


def write_model(out, w, heads, expected):
    """config.json, tokenizer.json and model.safetensors as ../pretrained/make_pretrained.py writes them, and expected.json."""
    os.makedirs(out, exist_ok=True)
    config = mp.gpt2_config(V, EOT, "float32")
    config.update({"n_embd": D, "n_head": heads, "n_layer": L, "n_positions": NPOS, "n_ctx": NPOS})
    mp.write_json(os.path.join(out, "config.json"), config)
    mp.write_json(os.path.join(out, "tokenizer.json"), tok.tokenizer_json())
    mp.write_safetensors(os.path.join(out, "model.safetensors"), [(k, v.contiguous()) for k, v in w.items()])
    mp.write_json(os.path.join(out, "expected.json"), expected)


def main():
    gen = torch.Generator().manual_seed(SEED)
    rng = random.Random(SEED)
    # targets 1..T-1: the repeat after its first token (which copying predicts) weighs 1, the rest 0.2 (so it
    # learns the letters' frequencies)
    weight = torch.tensor([[0.2] * (T - N) + [1] * (N - 1)] * 32, dtype=torch.float32)
    w = train(init(gen), rng, gen, weight, head_drop=HEAD_DROP)
    # One held-out sequence, as text (letters only: one token each, the text is the letters).
    test_rng = random.Random(1000 + SEED)
    ids = torch.tensor([sequence(test_rng, N)])  # <|endoftext|> first, as in training
    text = tok.decode(ids[0].tolist())
    with torch.no_grad():
        logits, attn = forward(w, ids, want_attention=True)
        base = mean_loss(logits, ids)
        singles = {f"{l}.{h}": mean_loss(forward(w, ids, [(l, h)]), ids) - base for l in range(L) for h in range(H)}
        # Induction scores on BOS + r + r as headScores defines them: mean over t = n+1…2n of A[t, t−n+1].
        seq = torch.tensor([[EOT] + (lambda r: r + r)([random.Random(7 + k).choice(LETTER_IDS) for k in range(N)])])
        _, a2 = forward(w, seq, want_attention=True)
        induction = {f"{l}.{h}": a2[l][0, h, [t for t in range(N + 1, 2 * N + 1)], [t - N + 1 for t in range(N + 1, 2 * N + 1)]].mean().item()
                     for l in range(L) for h in range(H)}
        prev = {f"{l}.{h}": a2[l][0, h, list(range(2, 2 * N + 1)), list(range(1, 2 * N))].mean().item() for l in range(L) for h in range(H)}
        ind_heads = [(int(k[0]), int(k[2])) for k, v in induction.items() if v >= 0.4]
        group = mean_loss(forward(w, ids, ind_heads), ids) - base
    print("text", text, "loss", round(base, 4))
    print("induction", {k: round(v, 3) for k, v in induction.items()})
    print("previous", {k: round(v, 3) for k, v in prev.items()})
    print("single", {k: round(v, 3) for k, v in singles.items()})
    print("induction heads", ind_heads, "group off", round(group, 3))
    write_model(OUT, w, H, {
        "seed": SEED, "steps": STEPS, "text": text, "ids": ids[0].tolist(), "loss": base,
        "lossChange": singles, "inductionHeads": [list(x) for x in ind_heads], "groupLossChange": group,
        "induction": induction, "previousToken": prev,
    })


if __name__ == "__main__":
    main()
