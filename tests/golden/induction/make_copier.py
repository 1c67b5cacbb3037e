#!/usr/bin/python3
"""A tiny GPT-2 that copies a repeat with one head whose pattern is not the induction shape (issue 33, point 7).

Sequences are <|endoftext|> then 12 random lowercase letters twice (one byte-level token each), as in
make_induction.py, but with 2 heads per layer and no heads switched off while training: one head
learns to copy, and it finds "the token after the earlier copy" by position (12 tokens back, less
one), not by content. On the explorer's detector sequence (a repeat of 15 random tokens) it puts
almost no weight on the induction stripe, so the grid does not label it; switching it off still
costs the model the whole repeat. The explorer must name it from the loss, not from its pattern.

The model, its forward, the training loop and the files are make_induction.py's (imported, with 2 heads),
written as config.json, model.safetensors and tokenizer.json the way ../pretrained/make_pretrained.py
writes them, with expected.json: PyTorch's own numbers on one held-out sequence (its loss with every
head on and with each head off, the share of the repeat it predicts), and the induction stripe on a
repeat of 15 random letters (the detector's length for this context), for the JS tests to compare.

    /usr/bin/python3 tests/golden/induction/make_copier.py   # about 20 s of CPU, fixed seeds
"""
import os, random, sys
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# make_induction's tokenizer, weights, forward, training loop and file writing (importing it sets one thread)
from make_induction import L, N, T, EOT, LETTER_IDS, STEPS, tok, forward, init, mean_loss, sequence, train, write_model  # noqa: E402

SEED = int(os.environ.get("SEED", "2"))
H = 2
DETECTOR_N = 15  # headScoreOptions(): n = floor((contextLength - 1) / 2) for a 32-token context
OUT = os.path.join(HERE, "gpt2-copier")
assert T == 2 * N + 1, "make_induction's sequences are <|endoftext|> and the repeat, nothing before it"


def repeat_accuracy(logits, ids):
    """Share of the repeat's tokens after its first (positions N+1 … 2N) that the argmax predicts."""
    pred = logits[0, N:2 * N].argmax(-1)
    return (pred == ids[0, N + 1:]).float().mean().item()


def main():
    gen = torch.Generator().manual_seed(SEED)
    rng = random.Random(SEED)
    # targets 1..T-1: the repeat (which copying predicts) weighs 1, the rest 0.2 (the letters' frequencies)
    weight = torch.tensor([0.2] * N + [1.0] * N)
    w = train(init(gen), rng, gen, weight, heads=H, log_every=100)
    ids = torch.tensor([sequence(random.Random(1000 + SEED), N)])
    text = tok.decode(ids[0].tolist())
    heads = [(l, h) for l in range(L) for h in range(H)]
    with torch.no_grad():
        logits = forward(w, ids, heads=H)
        base = mean_loss(logits, ids)
        accuracy = repeat_accuracy(logits, ids)
        singles = {f"{l}.{h}": mean_loss(forward(w, ids, [(l, h)], heads=H), ids) - base for (l, h) in heads}
        accuracy_off = {f"{l}.{h}": repeat_accuracy(forward(w, ids, [(l, h)], heads=H), ids) for (l, h) in heads}

        def stripe(n, seed):
            """Mean attention on the induction stripe A[t, t−n+1], t = n+1 … 2n, of BOS + r + r (headScores' definition)."""
            r = [random.Random(seed + k).choice(LETTER_IDS) for k in range(n)]
            _, a = forward(w, torch.tensor([[EOT] + r + r]), want_attention=True, heads=H)
            rows = list(range(n + 1, 2 * n + 1))
            return {f"{l}.{h}": a[l][0, h, rows, [t - n + 1 for t in rows]].mean().item() for (l, h) in heads}
        induction = stripe(DETECTOR_N, 7)
    carrier = max(singles, key=singles.get)
    print("text", text, "loss", round(base, 4), "repeat accuracy", round(accuracy, 3))
    print("induction (n = 15)", {k: round(v, 3) for k, v in induction.items()})
    print("single", {k: round(v, 3) for k, v in singles.items()})
    print("accuracy with one head off", {k: round(v, 3) for k, v in accuracy_off.items()})
    print("carrier", carrier)
    write_model(OUT, w, H, {
        "seed": SEED, "steps": STEPS, "text": text, "ids": ids[0].tolist(), "loss": base,
        "repeatAccuracy": accuracy, "lossChange": singles, "repeatAccuracyOff": accuracy_off,
        "carrier": [int(x) for x in carrier.split(".")], "induction15": induction,
    })


if __name__ == "__main__":
    main()
