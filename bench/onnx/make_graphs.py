#!/usr/bin/python3
"""Writes the ONNX graphs that bench/engines/ort.mjs runs.

Every weight is a graph INPUT, not an initializer, so the files stay a few
hundred bytes and can be committed; the benchmark feeds the same seeded arrays
to every engine. The sequence length is a symbolic dimension "T".

  mha_fused_d{D}_h{H}.onnx   X [1,T,D], Wq, Wk, Wv [D,D], Wo [D,D] -> Y [1,T,D]
                             MatMul projections, com.microsoft.MultiHeadAttention
                             (ORT's fused op), MatMul output projection
  mha_plain_d{D}_h{H}.onnx   the same with plain ops: Reshape/Transpose, MatMul,
                             Softmax (the fallback when the fused op is missing)
  attn_fused_d{D}_h{H}.onnx  Q, K, V [1,T,D] (head i in columns i*dk..) -> O [1,T,D]
  attn_plain_d{D}_h{H}.onnx  attention only, plain ops

Run with Debian's python3-onnx:  /usr/bin/python3 bench/onnx/make_graphs.py
"""
import math
import os

import onnx
from onnx import TensorProto, checker, helper

OPSET = 17
SHAPES = [(256, 4), (512, 8), (768, 12)]
HERE = os.path.dirname(os.path.abspath(__file__))


def seq_input(name, d):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, "T", d])


def weight_input(name, rows, cols):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, [rows, cols])


def int64s(name, values):
    return helper.make_tensor(name, TensorProto.INT64, [len(values)], values)


def attention_fused(nodes, q, k, v, out, h):
    nodes.append(helper.make_node("MultiHeadAttention", [q, k, v], [out],
                                  domain="com.microsoft", num_heads=h))


def attention_plain(nodes, inits, q, k, v, out, d, h):
    """softmax(Q_i K_i^T / sqrt(dk)) V_i for every head, concatenated: [1,T,d]."""
    dk = d // h
    inits.append(int64s("heads_shape", [1, -1, h, dk]))   # [1,T,d] -> [1,T,h,dk]
    inits.append(int64s("concat_shape", [1, -1, d]))      # [1,T,h,dk] -> [1,T,d]
    inits.append(helper.make_tensor("scale", TensorProto.FLOAT, [], [1.0 / math.sqrt(dk)]))
    for name in (q, k, v):
        nodes.append(helper.make_node("Reshape", [name, "heads_shape"], [name + "_4d"]))
    nodes.append(helper.make_node("Transpose", [q + "_4d"], ["q_h"], perm=[0, 2, 1, 3]))   # [1,h,T,dk]
    nodes.append(helper.make_node("Transpose", [k + "_4d"], ["k_hT"], perm=[0, 2, 3, 1]))  # [1,h,dk,T]
    nodes.append(helper.make_node("Transpose", [v + "_4d"], ["v_h"], perm=[0, 2, 1, 3]))   # [1,h,T,dk]
    nodes.append(helper.make_node("Mul", ["q_h", "scale"], ["q_scaled"]))
    nodes.append(helper.make_node("MatMul", ["q_scaled", "k_hT"], ["scores"]))             # [1,h,T,T]
    nodes.append(helper.make_node("Softmax", ["scores"], ["probs"], axis=-1))
    nodes.append(helper.make_node("MatMul", ["probs", "v_h"], ["heads"]))                  # [1,h,T,dk]
    nodes.append(helper.make_node("Transpose", ["heads"], ["heads_t"], perm=[0, 2, 1, 3]))  # [1,T,h,dk]
    nodes.append(helper.make_node("Reshape", ["heads_t", "concat_shape"], [out]))


def make_model(kind, fused, d, h):
    nodes, inits = [], []
    if kind == "mha":
        inputs = [seq_input("X", d)] + [weight_input(w, d, d) for w in ("Wq", "Wk", "Wv", "Wo")]
        for w, p in (("Wq", "Q"), ("Wk", "K"), ("Wv", "V")):
            nodes.append(helper.make_node("MatMul", ["X", w], [p]))
        if fused:
            attention_fused(nodes, "Q", "K", "V", "concat", h)
        else:
            attention_plain(nodes, inits, "Q", "K", "V", "concat", d, h)
        nodes.append(helper.make_node("MatMul", ["concat", "Wo"], ["Y"]))
        outputs = [seq_input("Y", d)]
    else:
        inputs = [seq_input(n, d) for n in ("Q", "K", "V")]
        if fused:
            attention_fused(nodes, "Q", "K", "V", "O", h)
        else:
            attention_plain(nodes, inits, "Q", "K", "V", "O", d, h)
        outputs = [seq_input("O", d)]
    title = f"{kind}_{'fused' if fused else 'plain'}_d{d}_h{h}"
    graph = helper.make_graph(nodes, title, inputs, outputs, initializer=inits)
    opsets = [helper.make_opsetid("", OPSET)]
    if fused:
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    model = helper.make_model(graph, opset_imports=opsets, producer_name="headlab-bench")
    model.ir_version = 8
    if not fused:
        checker.check_model(model)  # the checker does not know com.microsoft ops
    return title, model


def main():
    for d, h in SHAPES:
        for kind in ("mha", "attn"):
            for fused in (True, False):
                title, model = make_model(kind, fused, d, h)
                path = os.path.join(HERE, title + ".onnx")
                onnx.save(model, path)
                print(f"{os.path.relpath(path)}  {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
