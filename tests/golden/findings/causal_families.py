#!/usr/bin/env python3
"""Independent float64 answers for HeadLab's causal tools on a grouped-query Llama and on BERT (issue 35).

Reads two checkpoints of tests/golden/families/ from their model.safetensors and config.json, converts
them with make_families.py's converters and runs make_families.py's float64 forward (forward64), whose
`patch` argument replaces chosen heads' outputs z (before the output projection, every position). On it:
- patch: a run with the listed heads' z taken from an unpatched run on `source` (same token types);
- patchHeads: naively, one whole patched forward per head: effects[l*H + h] = metric(corrupted run with
  head (l, h)'s z from the clean run) - metric(corrupted run), metric = logits[at][answer] - logits[at][wrong];
- dla (decoders): TransformerLens's apply_ln_to_stack at the final norm. Llama's is an RMSNorm: a part c
  at `at` contributes (c / s) . (w * (W_U[answer] - W_U[wrong])), s = sqrt(mean(x^2) + eps) of the whole
  final residual x at `at` (no centring; a LayerNorm would centre each part). BERT normalises after every
  layer: it has no such sum, and HeadLab refuses it (the tests check the refusal).
Checks before writing: the unpatched forward against make_families.py's float32 Hugging Face-style one
(1e-4), a patch from the run itself changing nothing, and the attributions of every piece of the residual
(embeddings, heads, MLPs) summing to the logit difference (1e-9).

Writes causal-llama-gqa.json and causal-bert.json next to this file, in causal-gpt2-f32.json's format
(README.md) with token types (`tokenTypes`) and the metric's position (`at`) where they apply.

Run with Debian's Python (torch 1.13): /usr/bin/python3 tests/golden/findings/causal_families.py
Deterministic: fixed seeds, one thread; a few seconds.
"""

import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILIES = os.path.normpath(os.path.join(HERE, "..", "families"))
sys.dont_write_bytecode = True  # no __pycache__ beside the fixtures
sys.path.insert(0, FAMILIES)
import make_families as mf  # noqa: E402  (converters, forward64, the float32 Hugging Face-style forwards)

torch.set_num_threads(1)
SEED = 35


def rounded(t, digits=9):
    return [float(f"{v:.{digits}g}") for v in t.reshape(-1).tolist()]


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, separators=(",", ":"))
        f.write("\n")


def load(folder):
    """config, stored tensors (float64), the canonical float64 model and the family's converter name."""
    config = json.load(open(os.path.join(FAMILIES, folder, "config.json")))
    stored = mf.mp.read_safetensors(os.path.join(FAMILIES, folder, "model.safetensors"))
    arch = config["model_type"]
    m = mf.canonical_bert(stored, config) if arch == "bert" else mf.canonical_llama_like(stored, config, arch)
    return config, stored, m


def forward(m, ids, types=None, patch=None):
    return mf.forward64(m, ids, types=types, patch=patch)


def metric(logits, at, answer, wrong):
    return (logits[at, answer] - logits[at, wrong]).item()


def patched_logits(m, ids, source, heads, types=None):
    z = forward(m, source, types)["heads"]  # [L, T, H, hd]
    return forward(m, ids, types, {(l, h): z[l][:, h] for l, h in heads})["logits"]


def patch_heads_naive(m, clean, corrupted, answer, wrong, at, types=None):
    """One whole patched forward per head."""
    z = forward(m, clean, types)["heads"]
    m_clean = metric(forward(m, clean, types)["logits"], at, answer, wrong)
    m_corr = metric(forward(m, corrupted, types)["logits"], at, answer, wrong)
    L, H = len(m["layers"]), m["heads"]
    eff = torch.zeros(L, H, dtype=torch.float64)
    for li in range(L):
        for h in range(H):
            y = forward(m, corrupted, types, {(li, h): z[li][:, h]})["logits"]
            eff[li, h] = metric(y, at, answer, wrong) - m_corr
    return eff, m_clean, m_corr


def dla_rms(m, ids, answer, wrong, at):
    """Direct logit attribution through a final RMSNorm (scale frozen at the whole residual's)."""
    assert m["causal"] and m["final_norm"]["kind"] == "rms" and m["unembed_bias"] is None
    out = forward(m, ids)
    hd, H = m["head_dim"], m["heads"]
    x = out["resid"][at]
    scale = torch.sqrt((x * x).mean() + m["final_norm"]["eps"])
    direction = (m["unembed"][answer] - m["unembed"][wrong]) * m["final_norm"]["w"]

    def attribute(part):
        return (part / scale) @ direction

    heads = torch.stack([torch.stack([attribute(out["heads"][li][at, h] @ L["wo"][h * hd:(h + 1) * hd])
                                      for h in range(H)]) for li, L in enumerate(m["layers"])])
    mlps = torch.stack([attribute(out["mlp"][li][at]) for li in range(len(m["layers"]))])
    # Completeness: embeddings, heads and MLPs make up the residual (Llama's projections have no bias).
    embed = m["embed"][ids[at]] * m["embed_scale"]
    total = heads.sum() + mlps.sum() + attribute(embed)
    logit_diff = metric(out["logits"], at, answer, wrong)
    assert abs(total.item() - logit_diff) < 1e-9, f"DLA sums to {total.item()}, not {logit_diff}"
    return heads, mlps, scale.item(), logit_diff


def check_forward(config, stored, m, ids, types=None):
    """The float64 forward against make_families.py's float32 Hugging Face-style one."""
    f = {k: v.float() for k, v in stored.items()}
    arch = config["model_type"]
    y32 = mf.hf_bert32(f, config, ids, types or [0] * len(ids)) if arch == "bert" else \
        mf.hf_llama_like32(f, config, arch, ids)
    diff = (y32.double() - forward(m, ids, types)["logits"]).abs().max().item()
    assert diff < 1e-4, f"float32 Hugging Face-style forward differs by {diff}"
    return diff


def corrupt(clean, positions, pool, gen):
    out = list(clean)
    for p in positions:
        while out[p] == clean[p]:
            out[p] = pool[torch.randint(0, len(pool), (1,), generator=gen).item()]
    return out


def two_tokens(pool, gen):
    a, w = (pool[k] for k in torch.randperm(len(pool), generator=gen)[:2].tolist())
    return a, w


def llama_cases():
    folder = "llama-gqa"
    config, stored, m = load(folder)
    V, L, H = config["vocab_size"], len(m["layers"]), m["heads"]
    gen = torch.Generator().manual_seed(SEED)
    pool = list(range(V - 1))  # every id but <|endoftext|> (the last)
    worst_hf = 0.0
    out = {"checkpoint": f"tests/golden/families/{folder}",
           "shapes": {"layers": L, "heads": H, "kvHeads": m["kv_heads"], "vocab": V, "kind": "decoder"},
           "patch": [], "patchHeads": [], "dla": []}
    # Heads 0 and 1 read key-value head 0, heads 2 and 3 key-value head 1: patches within one group and
    # across groups, in both layers.
    for T, heads in ((12, [[0, 1], [1, 3]]), (7, [[1, 0], [1, 1]]), (16, [[0, 0], [0, 2], [1, 2]])):
        ids = [pool[k] for k in torch.randint(0, len(pool), (T,), generator=gen).tolist()]
        source = [pool[k] for k in torch.randint(0, len(pool), (T,), generator=gen).tolist()]
        worst_hf = max(worst_hf, check_forward(config, stored, m, ids))
        same = patched_logits(m, ids, ids, heads)
        assert (same - forward(m, ids)["logits"]).abs().max() < 1e-12, "a patch from the run itself changed it"
        logits = patched_logits(m, ids, source, heads)
        out["patch"].append({"ids": ids, "source": source, "heads": heads, "logits": rounded(logits)})
    # patchHeads: the metric at the last position (a decoder's), and once at an earlier one (rows after it
    # never reach it); the first difference at position 2, and once at 0 (nothing shared before it).
    for T, diffs, at in ((10, (2, 7), 9), (16, (0, 9), 12), (14, (4, 5), 13)):
        clean = [pool[k] for k in torch.randint(0, len(pool), (T,), generator=gen).tolist()]
        corrupted = corrupt(clean, diffs, pool, gen)
        answer, wrong = two_tokens(pool, gen)
        eff, m_clean, m_corr = patch_heads_naive(m, clean, corrupted, answer, wrong, at)
        case = {"clean": clean, "corrupted": corrupted, "answer": answer, "wrong": wrong, "at": at,
                "metricClean": m_clean, "metricCorrupted": m_corr, "effects": rounded(eff)}
        out["patchHeads"].append(case)
        heads, mlps, scale, diff = dla_rms(m, clean, answer, wrong, at)
        out["dla"].append({"ids": clean, "answer": answer, "wrong": wrong, "at": at, "scale": scale,
                           "logitDiff": diff, "heads": rounded(heads), "mlps": rounded(mlps)})
    out["float32HfMaxAbsDiff"] = worst_hf
    return out


def bert_cases():
    folder = "bert"
    config, stored, m = load(folder)
    V, L, H = config["vocab_size"], len(m["layers"]), m["heads"]
    gen = torch.Generator().manual_seed(SEED + 1)
    tok = json.load(open(os.path.join(FAMILIES, folder, "tokenizer.json")))["model"]["vocab"]
    cls, sep, mask = tok["[CLS]"], tok["[SEP]"], tok["[MASK]"]
    pool = [i for i in range(V) if i >= 5]  # past [PAD] [UNK] [CLS] [SEP] [MASK]
    worst_hf = 0.0

    def text(n):
        return [pool[k] for k in torch.randint(0, len(pool), (n,), generator=gen).tolist()]

    out = {"checkpoint": f"tests/golden/families/{folder}",
           "shapes": {"layers": L, "heads": H, "kvHeads": m["kv_heads"], "vocab": V, "kind": "encoder"},
           "patch": [], "patchHeads": [], "dla": []}
    # [CLS] A [SEP] (types 0), and [CLS] A [SEP] B [SEP] with B's types 1 (a pair).
    single = lambda n: ([cls] + text(n) + [sep], None)  # noqa: E731

    def pair(a, b):
        ids = [cls] + text(a) + [sep] + text(b) + [sep]
        return ids, [0] * (a + 2) + [1] * (b + 1)

    for (ids, types), (source, _), heads in ((single(10), single(10), [[0, 1], [1, 3]]),
                                             (single(5), single(5), [[1, 0], [1, 1], [0, 2]]),
                                             (pair(6, 5), pair(6, 5), [[0, 0], [1, 2]])):
        worst_hf = max(worst_hf, check_forward(config, stored, m, ids, types))
        same = patched_logits(m, ids, ids, heads, types)
        assert (same - forward(m, ids, types)["logits"]).abs().max() < 1e-12, "a patch from the run itself changed it"
        logits = patched_logits(m, ids, source, heads, types)
        case = {"ids": ids, "source": source, "heads": heads, "logits": rounded(logits)}
        if types:
            case["tokenTypes"] = types
            # The source run has the same token types: without them the answer is another.
            other = patched_logits(m, ids, source, heads)
            assert (other - logits).abs().max() > 0.05
        out["patch"].append(case)
    # patchHeads: the metric at a [MASK] (an encoder's guess), corrupted at two other positions; once in a
    # pair, where both runs have the pair's token types.
    for (ids, types), at, diffs in ((single(12), 5, (2, 9)), (single(8), 8, (1, 4)), (pair(7, 6), 11, (3, 13))):
        ids[at] = mask
        corrupted = corrupt(ids, diffs, pool, gen)
        answer, wrong = two_tokens(pool, gen)
        eff, m_clean, m_corr = patch_heads_naive(m, ids, corrupted, answer, wrong, at, types)
        case = {"clean": ids, "corrupted": corrupted, "answer": answer, "wrong": wrong, "at": at,
                "metricClean": m_clean, "metricCorrupted": m_corr, "effects": rounded(eff)}
        if types:
            case["tokenTypes"] = types
            plain, _, _ = patch_heads_naive(m, ids, corrupted, answer, wrong, at)
            assert (plain - eff).abs().max() > 0.05 * eff.abs().max(), "token types do not matter here"
        out["patchHeads"].append(case)
    out["float32HfMaxAbsDiff"] = worst_hf
    return out


def main():
    for name, make in (("llama-gqa", llama_cases), ("bert", bert_cases)):
        out = make()
        write_json(os.path.join(HERE, f"causal-{name}.json"), out)
        eff = [max(abs(x) for x in c["effects"]) for c in out["patchHeads"]]
        print(f"{name}: {len(out['patch'])} patch, {len(out['patchHeads'])} patchHeads, {len(out['dla'])} dla cases; "
              f"largest effect per case {', '.join(f'{e:.3f}' for e in eff)}; "
              f"float64 vs float32 HF-style logits {out['float32HfMaxAbsDiff']:.2e}")


if __name__ == "__main__":
    main()
