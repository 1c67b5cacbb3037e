#!/usr/bin/python3
"""PyTorch on one thread, the same language model as HeadLab's (cpp/include/headlab/lm.hpp):
token + learned position embeddings; per layer pre-LayerNorm, causal multi-head attention with
biases and W^O, residual, optional MLP (LayerNorm, d -> 4d, tanh-GELU, 4d -> d), residual; final
LayerNorm, untied unembedding; cross-entropy on every next token; Adam.

Prints one JSON line: {"stepsPerSecond", "steps", "seconds", "torch"}. Batches are drawn once before
timing (a pool of 16, cycled), so only the model's step is timed (HeadLab's steps include drawing
their batch, which is cheap next to the model).

    /usr/bin/python3 bench/training/torch_lm.py --vocab 33 --seq 24 --layers 2 --heads 4 --d 32 \
        [--mlp] --batch 64 --steps 600 --warmup 50
"""
import argparse
import json
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--vocab", type=int, default=33)
p.add_argument("--seq", type=int, default=24)
p.add_argument("--layers", type=int, default=2)
p.add_argument("--heads", type=int, default=4)
p.add_argument("--d", type=int, default=32)
p.add_argument("--mlp", action="store_true")
p.add_argument("--batch", type=int, default=64)
p.add_argument("--steps", type=int, default=600)
p.add_argument("--warmup", type=int, default=50)
p.add_argument("--lr", type=float, default=3e-3)
a = p.parse_args()

torch.set_num_threads(1)
torch.manual_seed(1)
V, T, D, H = a.vocab, a.seq, a.d, a.heads


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D)
        self.attn = nn.MultiheadAttention(D, H, batch_first=True)
        if a.mlp:
            self.ln2 = nn.LayerNorm(D)
            self.fc = nn.Linear(D, 4 * D)
            self.proj = nn.Linear(4 * D, D)

    def forward(self, x, mask):
        h = self.ln1(x)
        y, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False)
        x = x + y
        if a.mlp:
            x = x + self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))
        return x


class Lm(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.pos = nn.Embedding(T, D)
        self.blocks = nn.ModuleList([Block() for _ in range(a.layers)])
        self.lnf = nn.LayerNorm(D)
        self.un = nn.Linear(D, V)
        self.register_buffer("mask", torch.triu(torch.ones(T, T, dtype=torch.bool), 1))

    def forward(self, t):
        x = self.tok(t) + self.pos(torch.arange(T))[None]
        for b in self.blocks:
            x = b(x, self.mask)
        return self.un(self.lnf(x))


m = Lm()
opt = torch.optim.Adam(m.parameters(), lr=a.lr)
pool = []
for _ in range(16):
    x = torch.randint(0, V, (a.batch, T))
    pool.append((x, torch.cat([x[:, 1:], torch.full((a.batch, 1), -1)], 1)))


def step(i):
    x, y = pool[i % len(pool)]
    loss = F.cross_entropy(m(x).reshape(-1, V), y.reshape(-1), ignore_index=-1)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()


for i in range(a.warmup):
    step(i)
t0 = time.perf_counter()
for i in range(a.steps):
    step(i)
seconds = time.perf_counter() - t0
print(json.dumps({"stepsPerSecond": a.steps / seconds, "steps": a.steps, "seconds": seconds,
                  "torch": torch.__version__}))
