#!/usr/bin/python3
"""Calibrates the small English (cpp/include/headlab/english.hpp) with PyTorch.

Trains a causal transformer on sequences written by headlab_english_dump, then
reports per head the scores of issue 24 (mean attention from each relation's
query position to its true target), the baselines on the same query/target
(best fixed offset, "attend to the last noun"), agreement/selection/coreference
accuracy on held-out sequences, and the agreement ablation.

  /usr/bin/python3 bench/english/calibrate.py --seed 1 [--steps 3000] [--md bench/english/calibration.md]

Definitions (the arcs are the generator's; see english.hpp):
  score[rel][layer, head]  mean over held-out arcs of attention(query -> target)
  previousToken arcs       every t in 1..length-1: query t, target t-1
  best fixed offset        max over k of the share of arcs with query - target = k
  last noun                share of arcs whose target is the last noun (common
                           noun, first or last name) at or before the query
  agreementAccuracy        share of agreement arcs where p(verb) > p(other form)
                           at the query; "attractor": arcs with an attractor
  selectionAccuracy        share of selection arcs where, at the query, the
                           selected class holds more probability than any other
                           class of common nouns (both numbers summed)
  coreferenceAccuracy      share of coreference arcs where, at the query
                           ("was"/"were"), the antecedent's class holds more
                           probability than any other class of predicates
  ablation                 heads with agreement score >= 0.3 switched off (their
                           output zeroed before the output projection); control:
                           as many heads with the lowest agreement scores
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RELATIONS = ["agreement", "selection", "coreference", "induction", "previousToken"]


def dump(binary, seed, count, folder):
    prefix = os.path.join(folder, f"english_{seed}_{count}")
    subprocess.run([binary, "--seed", str(seed), "--count", str(count), "--out", prefix], check=True,
                   stdout=subprocess.DEVNULL)
    meta = json.load(open(prefix + ".json"))
    tokens = np.fromfile(prefix + ".tokens.bin", dtype="<i4").reshape(meta["count"], meta["seq_len"])
    arcs = np.fromfile(prefix + ".arcs.bin", dtype="<i4").reshape(-1, 8)
    return meta, tokens, arcs


class Block(nn.Module):
    def __init__(self, d, h, mlp):
        super().__init__()
        self.h, self.dk = h, d // h
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.mlp = mlp
        if mlp:
            self.ln2 = nn.LayerNorm(d)
            self.fc1 = nn.Linear(d, 4 * d)
            self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x, mask, head_gate=None):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.h, self.dk).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-1, -2)) / self.dk ** 0.5
        att = att.masked_fill(mask, float("-inf")).softmax(-1)  # [b, h, t, t]
        y = att @ v  # [b, h, t, dk]
        if head_gate is not None:
            y = y * head_gate.view(1, self.h, 1, 1)
        x = x + self.out(y.transpose(1, 2).reshape(b, t, d))
        if self.mlp:
            x = x + self.fc2(F.gelu(self.fc1(self.ln2(x))))
        return x, att


class Model(nn.Module):
    def __init__(self, vocab, seq_len, layers, heads, d, mlp):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(seq_len, d) * 0.02)
        self.blocks = nn.ModuleList(Block(d, heads, mlp) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.unembed = nn.Linear(d, vocab)
        self.register_buffer("mask", torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), 1))

    def forward(self, tokens, gates=None):
        t = tokens.shape[1]
        x = self.emb(tokens) + self.pos[:t]
        atts = []
        for i, blk in enumerate(self.blocks):
            x, att = blk(x, self.mask[:t, :t], None if gates is None else gates[i])
            atts.append(att)
        return self.unembed(self.ln(x)), atts


def loss_of(model, tokens, pad):
    logits, _ = model(tokens[:, :-1])
    target = tokens[:, 1:].clone()
    target[target == pad] = -100
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1), ignore_index=-100)


def evaluate(model, meta, tokens, arcs, gates=None, batch=500):
    """Attention, log-probabilities and accuracies on held-out sequences."""
    vocab = meta["vocab"]
    pad = meta["pad"]
    n, T = tokens.shape
    L = len(model.blocks)
    H = model.blocks[0].h
    probs, atts = [], [[] for _ in range(L)]
    with torch.no_grad():
        for s in range(0, n, batch):
            x = torch.from_numpy(tokens[s:s + batch]).long()
            logits, att = model(x, gates)
            probs.append(logits.softmax(-1).numpy())
            for i in range(L):
                atts[i].append(att[i].numpy())
    probs = np.concatenate(probs)  # [n, T, V]
    atts = [np.concatenate(a) for a in atts]  # L x [n, H, T, T]
    lengths = np.where((tokens == pad).any(1), (tokens == pad).argmax(1), T)

    rel_arcs = {}
    for r, name in enumerate(RELATIONS[:4]):
        a = arcs[arcs[:, 1] == r]
        rel_arcs[name] = a
    seq_idx = np.concatenate([np.full(l - 1, i) for i, l in enumerate(lengths)])
    q_idx = np.concatenate([np.arange(1, l) for l in lengths])
    prev = np.stack([seq_idx, np.full_like(seq_idx, 4), q_idx, q_idx - 1], 1)
    rel_arcs["previousToken"] = prev

    scores = {}
    for name, a in rel_arcs.items():
        s = np.zeros((L, H))
        for i in range(L):
            s[i] = atts[i][a[:, 0], :, a[:, 2], a[:, 3]].mean(0)
        scores[name] = s

    # Coreference by the antecedent's kind. Runs of seeds 1-7 (before the
    # target moved) used a name's last word as target; the target is now a
    # name's first name, and "span" adds the weight on the word after it.
    cats = np.array([w["cat"] for w in vocab])
    a = rel_arcs["coreference"]
    named = cats[tokens[a[:, 0], a[:, 3]]] == "first_name"
    split = {}
    for key, sel in (("noun", ~named), ("name", named)):
        s = np.zeros((L, H))
        span = np.zeros((L, H))
        for i in range(L):
            w = atts[i][a[sel, 0], :, a[sel, 2], a[sel, 3]]
            s[i] = w.mean(0)
            nxt = np.minimum(a[sel, 3] + 1, a[sel, 2])
            two_words = (cats[tokens[a[sel, 0], nxt]] == "last_name")[:, None]
            after = atts[i][a[sel, 0], :, a[sel, 2], nxt] * two_words
            span[i] = (w + (after if key == "name" else 0)).mean(0)
        split[key] = {"share": float(sel.mean()), "best": float(s.max()), "bestSpan": float(span.max()),
                      "head": [int(x) for x in np.unravel_index(s.argmax(), s.shape)]}
    scores["_coreferenceSplit"] = split

    # Baselines on the same arcs.
    is_noun = np.array([w["noun"] for w in vocab])
    noun_tok = is_noun[tokens]  # [n, T]
    last_noun = np.full(tokens.shape, -1)
    cur = np.full(n, -1)
    for t in range(T):
        cur = np.where(noun_tok[:, t], t, cur)
        last_noun[:, t] = cur
    baselines = {}
    for name, a in rel_arcs.items():
        off = a[:, 2] - a[:, 3]  # noqa
        _, counts = np.unique(off, return_counts=True)
        baselines[name] = {"fixedOffset": float(counts.max() / len(a)),
                           "lastNoun": float((last_noun[a[:, 0], a[:, 2]] == a[:, 3]).mean())}

    # Accuracies.
    acc = {}
    a = rel_arcs["agreement"]
    p = probs[a[:, 0], a[:, 2]]
    right = p[np.arange(len(a)), a[:, 4]] > p[np.arange(len(a)), a[:, 5]]
    acc["agreementAccuracy"] = float(right.mean())
    acc["agreementAccuracyAttractor"] = float(right[a[:, 7] == 1].mean())
    acc["agreementAccuracyNoAttractor"] = float(right[a[:, 7] == 0].mean())
    classes = len(meta["classes"])

    def class_mass(p, cat):
        m = np.zeros((p.shape[0], classes))
        for t, w in enumerate(vocab):
            if w["cat"] == cat and w["cls"] >= 0:
                m[:, w["cls"]] += p[:, t]
        return m

    a = rel_arcs["selection"]
    m = class_mass(probs[a[:, 0], a[:, 2]], "noun")
    acc["selectionAccuracy"] = float((m.argmax(1) == a[:, 6]).mean())
    a = rel_arcs["coreference"]
    m = class_mass(probs[a[:, 0], a[:, 2]], "pred")
    acc["coreferenceAccuracy"] = float((m.argmax(1) == a[:, 6]).mean())
    counts = {name: int(len(a)) for name, a in rel_arcs.items()}
    return scores, baselines, acc, counts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--no-mlp", action="store_true")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--eval", type=int, default=2000, help="held-out sequences")
    ap.add_argument("--dumper", default=os.path.join(ROOT, "build/native/headlab_english_dump"))
    ap.add_argument("--md", help="append the run's tables to this markdown file")
    ap.add_argument("--note", default="", help="a line for the markdown")
    ap.add_argument("--json", help="write the numbers here")
    ap.add_argument("--save", help="save the trained model's state_dict here")
    ap.add_argument("--load", help="evaluate this saved state_dict (same settings) instead of training")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    with tempfile.TemporaryDirectory() as tmp:
        meta, train_tok, _ = dump(args.dumper, args.seed, 1 if args.load else args.steps * args.batch, tmp)
        _, eval_tok, eval_arcs = dump(args.dumper, 1_000_000 + args.seed, args.eval, tmp)
    vocab, T, pad = len(meta["vocab"]), meta["seq_len"], meta["pad"]
    model = Model(vocab, T - 1, args.layers, args.heads, args.d_model, not args.no_mlp)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / max(1, args.warmup)))
    train = torch.from_numpy(train_tok).long()
    t0 = time.time()
    losses = []
    if args.load:
        model.load_state_dict(torch.load(args.load))
    for step in range(0 if args.load else args.steps):
        x = train[step * args.batch:(step + 1) * args.batch]
        loss = loss_of(model, x, pad)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
        if (step + 1) % 500 == 0:
            print(f"step {step + 1} loss {np.mean(losses[-100:]):.3f} ({time.time() - t0:.0f} s)", file=sys.stderr)
    seconds = time.time() - t0
    if args.load:
        losses = [float("nan")]
    model.eval()
    if args.save:
        torch.save(model.state_dict(), args.save)
    # The model sees T-1 inputs (position T-1 predicts nothing); every query is < T-1.
    eval_in = eval_tok[:, :T - 1]
    scores, baselines, acc, counts = evaluate(model, meta, eval_in, eval_arcs)
    L, H = args.layers, args.heads
    agr = scores["agreement"]
    flat = [(agr[l, h], l, h) for l in range(L) for h in range(H)]
    strong = [(l, h) for s, l, h in flat if s >= 0.3]
    weak = [(l, h) for s, l, h in sorted(flat)[:len(strong)]]

    def ablate(heads):
        gates = [torch.ones(H) for _ in range(L)]
        for l, h in heads:
            gates[l][h] = 0.0
        _, _, a, _ = evaluate(model, meta, eval_in, eval_arcs, gates)
        return a

    ablation = {"heads": strong, "acc": ablate(strong) if strong else acc,
                "controlHeads": weak, "controlAcc": ablate(weak) if weak else acc}
    result = {"settings": vars(args), "seconds": seconds, "finalLoss": float(np.mean(losses[-100:])),
              "scores": {k: v.round(3).tolist() for k, v in scores.items() if not k.startswith("_")},
              "coreferenceSplit": scores["_coreferenceSplit"], "baselines": baselines,
              "accuracy": acc, "ablation": ablation, "arcs": counts}
    md = report(result, L, H)
    print(md)
    if args.md:
        with open(args.md, "a") as f:
            f.write(md + "\n")
    if args.json:
        json.dump(result, open(args.json, "w"), indent=1)


def report(r, L, H):
    s = r["settings"]
    lines = [f"### seed {s['seed']}: {s['layers']} layers x {s['heads']} heads, d_model {s['d_model']}, "
             f"{'no MLP' if s['no_mlp'] else 'MLP'}, Adam {s['lr']} (warmup {s['warmup']}), batch {s['batch']}, "
             f"{s['steps']} steps",
             "", f"{r['seconds']:.0f} s training (one thread), final loss {r['finalLoss']:.3f}; held-out arcs: "
             + ", ".join(f"{k} {v}" for k, v in r["arcs"].items()) + (f". {s['note']}" if s["note"] else ""), "",
             "| relation | " + " | ".join(f"L{l}H{h}" for l in range(L) for h in range(H))
             + " | best head | fixed offset | last noun |",
             "| --- |" + " --- |" * (L * H + 3)]
    for rel in RELATIONS:
        sc = np.array(r["scores"][rel])
        b = r["baselines"][rel]
        lines.append(f"| {rel} | " + " | ".join(f"{sc[l][h]:.2f}" for l in range(L) for h in range(H))
                     + f" | **{sc.max():.2f}** | {b['fixedOffset']:.2f} | {b['lastNoun']:.2f} |")
    a = r["accuracy"]
    ab = r["ablation"]
    names = lambda hs: ", ".join(f"L{l}H{h}" for l, h in hs) or "none"
    lines += ["",
              f"agreementAccuracy {a['agreementAccuracy']:.3f} (attractor {a['agreementAccuracyAttractor']:.3f}, "
              f"none {a['agreementAccuracyNoAttractor']:.3f}); selectionAccuracy {a['selectionAccuracy']:.3f}; "
              f"coreferenceAccuracy {a['coreferenceAccuracy']:.3f}",
              "",
              "coreference by antecedent (best head's mean weight on the head word; on a name's two words): "
              + "; ".join(f"{k} ({v['share']:.0%} of arcs) {v['best']:.2f} at L{v['head'][0]}H{v['head'][1]}"
                          f" (span {v['bestSpan']:.2f})" for k, v in r["coreferenceSplit"].items()),
              "",
              f"ablation: agreement heads >= 0.3 off ({names(ab['heads'])}): agreementAccuracy "
              f"{ab['acc']['agreementAccuracy']:.3f}, attractor {ab['acc']['agreementAccuracyAttractor']:.3f}; "
              f"control, as many lowest-scoring heads off ({names(ab['controlHeads'])}): "
              f"{ab['controlAcc']['agreementAccuracy']:.3f}, attractor {ab['controlAcc']['agreementAccuracyAttractor']:.3f}",
              ""]
    met = [rel for rel in RELATIONS if np.max(r["scores"][rel]) >= 0.5
           and max(r["baselines"][rel].values()) <= 0.3]
    drop = a["agreementAccuracyAttractor"] - ab["acc"]["agreementAccuracyAttractor"]
    lines.append(f"thresholds: relations with a head >= 0.5 and baselines <= 0.3: {len(met)} ({', '.join(met)}); "
                 f"attractor accuracy >= 0.9: {'yes' if a['agreementAccuracyAttractor'] >= 0.9 else 'no'}; "
                 f"ablation drop {drop:.3f} (>= 0.2: {'yes' if drop >= 0.2 else 'no'})")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
