#!/usr/bin/env python3
"""Writes the seed corpus of tests/fuzz/fuzz_safetensors.cpp: tiny GPT-2 and GPT-Neo
checkpoints (1 layer, d 4, 2 heads, d_ff 8, vocabulary 5, context 4) as the fuzzer reads
them: one byte choosing the architecture (0 GPT-2, 1 GPT-Neo), then a safetensors file.
Variants: float32 with the transformer. prefix and mask buffers, float16 without, bfloat16,
an unpadded header, and one file cut inside its data. Standard library only:
  python3 tests/fuzz/make_safetensors_seeds.py"""
import json
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, 'corpus', 'safetensors')
D, F, V, N = 4, 8, 5, 4


def shapes(neo):
    s = {'wte.weight': [V, D], 'wpe.weight': [N, D], 'ln_f.weight': [D], 'ln_f.bias': [D]}
    h = 'h.0.'
    for n in ['ln_1', 'ln_2']:
        s[h + n + '.weight'] = [D]
        s[h + n + '.bias'] = [D]
    s[h + 'mlp.c_fc.bias'] = [F]
    s[h + 'mlp.c_proj.bias'] = [D]
    if neo:
        a = h + 'attn.attention.'
        for n in ['q_proj', 'k_proj', 'v_proj', 'out_proj']:
            s[a + n + '.weight'] = [D, D]
        s[a + 'out_proj.bias'] = [D]
        s[h + 'mlp.c_fc.weight'] = [F, D]
        s[h + 'mlp.c_proj.weight'] = [D, F]
    else:
        s[h + 'attn.c_attn.weight'] = [D, 3 * D]
        s[h + 'attn.c_attn.bias'] = [3 * D]
        s[h + 'attn.c_proj.weight'] = [D, D]
        s[h + 'attn.c_proj.bias'] = [D]
        s[h + 'mlp.c_fc.weight'] = [D, F]
        s[h + 'mlp.c_proj.weight'] = [F, D]
    return s


def encode(values, dtype):
    if dtype == 'F32':
        return struct.pack('<%df' % len(values), *values)
    if dtype == 'F16':
        return struct.pack('<%de' % len(values), *values)
    return b''.join(struct.pack('<f', v)[2:] for v in values)  # bfloat16: the high half


def safetensors(tensors, pad=True):
    header, data = {'__metadata__': {'format': 'pt'}}, b''
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {'dtype': dtype, 'shape': shape, 'data_offsets': [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(',', ':')).encode()
    if pad:
        text += b' ' * (-len(text) % 8)
    return struct.pack('<Q', len(text)) + text + data


def seed(neo, dtype, prefix, buffers, pad=True, rng=None):
    tensors = {}
    for name, shape in shapes(neo).items():
        n = 1
        for s in shape:
            n *= s
        values = [round(rng.uniform(-1, 1), 3) for _ in range(n)]
        tensors[('transformer.' if prefix else '') + name] = (dtype, shape, encode(values, dtype))
    if buffers:
        a = ('transformer.' if prefix else '') + ('h.0.attn.attention.' if neo else 'h.0.attn.')
        tensors[a + 'bias'] = ('BOOL', [1, 1, N, N], bytes(N * N))
        tensors[a + 'masked_bias'] = ('F32', [], encode([-1e4], 'F32'))
    return bytes([1 if neo else 0]) + safetensors(tensors, pad)


def main():
    rng = random.Random(1)
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    seeds = {
        'gpt2-f32-prefix-buffers': seed(False, 'F32', True, True, rng=rng),
        'gpt2-f16': seed(False, 'F16', False, False, rng=rng),
        'gpt2-bf16-unpadded': seed(False, 'BF16', False, False, pad=False, rng=rng),
        'neo-f32-buffers': seed(True, 'F32', True, True, rng=rng),
        'neo-bf16': seed(True, 'BF16', False, False, rng=rng),
    }
    seeds['gpt2-cut'] = seeds['gpt2-f16'][:-7]
    for i, (name, data) in enumerate(seeds.items()):
        with open(os.path.join(OUT, 'seed-%d-%s.st' % (i, name)), 'wb') as f:
            f.write(data)


if __name__ == '__main__':
    main()
