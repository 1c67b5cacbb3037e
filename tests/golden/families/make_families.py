#!/usr/bin/env python3
"""Small Hugging Face checkpoints of every model family HeadLab reads, with float64 reference outputs.

Writes, next to this file, one folder per checkpoint in the Hugging Face repository layout (config.json,
tokenizer.json, tokenizer_config.json, model.safetensors or shards + model.safetensors.index.json) and an
expected.json in the format of tests/golden/pretrained/*/expected.json. No `transformers` package: key
names, shapes, dtypes and config keys follow LlamaForCausalLM, Qwen2ForCausalLM, MistralForCausalLM,
GPTNeoXForCausalLM, Phi3ForCausalLM, GemmaForCausalLM and BertForMaskedLM.

The reference (forward64) is one forward over a canonical layout, fed by a converter per family; a second
float32 forward per family follows the stored tensors the way Hugging Face's modules use them, and the two
must agree, so a misreading of a format shows up here rather than in HeadLab's tests.

Run with Debian's Python (torch 1.13): /usr/bin/python3 tests/golden/families/make_families.py [folder ...]
Deterministic: fixed seeds, no dictionary-order or hash dependence.
"""

import json
import math
import os
import re
import sys
import unicodedata

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the pretrained folder
sys.path.insert(0, os.path.join(HERE, "..", "pretrained"))
import make_pretrained as mp  # noqa: E402  (byte-level BPE, safetensors writer and reader, head scores)

SEED = 34
D = 32
N_LAYER = 2
FF = 64
MAX_POS = 64
HEAD_SCORE_N = 6
GREEDY_TOKENS = 8
COURSE = mp.COURSE
TRAINING_TEXT = mp.TRAINING_TEXT
torch.set_num_threads(1)

# ---------------------------------------------------------------------------------------------
# Tokenizers


class ByteLevel(mp.ByteLevelBPE):
    """GPT-2-style byte-level BPE (make_pretrained's), optionally with more added tokens after EOT."""

    def __init__(self, merges, extra_specials=()):
        super().__init__(merges)
        self.extra = list(extra_specials)
        for k, s in enumerate(self.extra):
            self.id_to_token[self.eot_id + 1 + k] = s
        self.size = self.eot_id + 1 + len(self.extra)
        self.bos_in_ids = None

    def tokenizer_json(self):
        j = super().tokenizer_json()
        for k, s in enumerate(self.extra):
            j["added_tokens"].append({"id": self.eot_id + 1 + k, "content": s, "single_word": False,
                                      "lstrip": False, "rstrip": False, "normalized": False, "special": True})
        return j


SP = "\u2581"  # ▁, SentencePiece's word marker


class SentencePieceBPE:
    """Llama-2 / TinyLlama-style tokenizer.json: a BPE model over characters with `byte_fallback`
    (a character outside the vocabulary becomes its UTF-8 bytes as <0xNN> tokens), spaces replaced by ▁
    (and one ▁ prepended when `prefix`, as Llama's normalizer does; Gemma's does not), <s> added in front
    by the post-processor. Vocabulary: the specials, the 256 byte tokens, the characters of the training
    text, then one token per merge."""

    def __init__(self, texts, num_merges, specials, bos, eos, unk, prefix):
        self.specials, self.bos, self.eos, self.unk, self.prefix = specials, bos, eos, unk, prefix
        self.vocab = {}
        for s in specials:
            self.vocab[s] = len(self.vocab)
        for b in range(256):
            self.vocab["<0x%02X>" % b] = len(self.vocab)
        words = {}
        for t in texts:
            for w in t.split(" "):
                w = SP + w
                words[w] = words.get(w, 0) + 1
        for ch in sorted({c for w in words for c in w}):
            self.vocab[ch] = len(self.vocab)
        split = {w: list(w) for w in words}
        self.merges = []
        for _ in range(num_merges):
            counts = {}
            for w, n in words.items():
                s = split[w]
                for a, b in zip(s, s[1:]):
                    counts[(a, b)] = counts.get((a, b), 0) + n
            if not counts:
                break
            best = min(counts, key=lambda p: (-counts[p], p))
            self.merges.append(best)
            for w in words:
                split[w] = mp.merge_pair(split[w], best)
            if best[0] + best[1] not in self.vocab:
                self.vocab[best[0] + best[1]] = len(self.vocab)
        self.ranks = {p: i for i, p in enumerate(self.merges)}
        self.size = len(self.vocab)
        self.id_to_token = {i: t for t, i in self.vocab.items()}
        self.bos_in_ids = self.vocab[bos]

    def encode(self, text):
        """ids and tokens with <s> first, as the post-processor adds it."""
        norm = (SP if self.prefix else "") + text.replace(" ", SP)
        symbols = list(norm)
        while len(symbols) > 1:
            ranked = [self.ranks[p] for p in zip(symbols, symbols[1:]) if p in self.ranks]
            if not ranked:
                break
            symbols = mp.merge_pair(symbols, self.merges[min(ranked)])
        tokens = [self.bos]
        for s in symbols:
            if s in self.vocab:
                tokens.append(s)
            else:
                tokens += ["<0x%02X>" % b for b in s.encode("utf-8")]
        return [self.vocab[t] for t in tokens], tokens

    def decode(self, ids):
        out, buf = [], bytearray()
        for i in ids:
            t = self.id_to_token[i]
            if t in self.specials:
                continue
            if re.fullmatch(r"<0x[0-9A-F]{2}>", t):
                buf.append(int(t[3:5], 16))
                continue
            out.append(buf.decode("utf-8"))
            buf = bytearray()
            out.append(t.replace(SP, " "))
        out.append(buf.decode("utf-8"))
        s = "".join(out)
        return s[1:] if self.prefix and s.startswith(" ") else s

    def tokenizer_json(self):
        added = [{"id": self.vocab[s], "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                  "normalized": False, "special": True} for s in self.specials]
        replace = {"type": "Replace", "pattern": {"String": " "}, "content": SP}
        normalizer = ({"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": SP}, replace]}
                      if self.prefix else replace)
        decoders = [{"type": "Replace", "pattern": {"String": SP}, "content": " "}, {"type": "ByteFallback"},
                    {"type": "Fuse"}]
        if self.prefix:
            decoders.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
        bos_id = self.vocab[self.bos]
        return {
            "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": normalizer, "pre_tokenizer": None,
            "post_processor": {
                "type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": self.bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": self.bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": self.bos, "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {self.bos: {"id": self.bos, "ids": [bos_id], "tokens": [self.bos]}}},
            "decoder": {"type": "Sequence", "decoders": decoders},
            "model": {"type": "BPE", "dropout": None, "unk_token": self.unk, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True,
                      "vocab": self.vocab, "merges": [a + " " + b for a, b in self.merges]},
        }


BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# Words kept out of the WordPiece vocabulary so that they split into pieces.
BERT_SPLIT = {"outside": ["out", "##side"], "because": ["be", "##cause"], "batter": ["bat", "##ter"]}


def bert_punct(c):
    o = ord(c)
    if 33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or 123 <= o <= 126:
        return True
    return unicodedata.category(c).startswith("P")


class WordPiece:
    """bert-base-uncased-style tokenizer.json: BertNormalizer (lowercase, accents stripped), BertPreTokenizer
    (whitespace and punctuation), WordPiece (greedy longest match, `##` continuations), [CLS] A [SEP] and
    [CLS] A [SEP] B [SEP] with token types 0 / 1."""

    def __init__(self, texts):
        self.vocab = {s: i for i, s in enumerate(BERT_SPECIALS)}
        words = set()
        for t in texts:
            words.update(self.pre_tokenize(self.normalize(t)))
        chars = sorted({c for w in words for c in w} | set("abcdefghijklmnopqrstuvwxyz0123456789"))
        entries = chars + ["##" + c for c in chars if c.isalnum()]
        for w in sorted(words):
            entries += BERT_SPLIT.get(w, [w])
        for e in entries:
            if e not in self.vocab:
                self.vocab[e] = len(self.vocab)
        self.size = len(self.vocab)
        self.id_to_token = {i: t for t, i in self.vocab.items()}
        self.bos_in_ids = self.vocab["[CLS]"]
        self.mask_token = "[MASK]"

    @staticmethod
    def normalize(text):
        text = unicodedata.normalize("NFD", text)
        text = "".join(c for c in text if unicodedata.category(c) != "Mn")
        return text.lower()

    @staticmethod
    def pre_tokenize(text):
        out = []
        for w in text.split():
            cur = ""
            for c in w:
                if bert_punct(c):
                    if cur:
                        out.append(cur)
                    out.append(c)
                    cur = ""
                else:
                    cur += c
            if cur:
                out.append(cur)
        return out

    def word_pieces(self, word):
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                sub = ("##" if start else "") + word[start:end]
                if sub in self.vocab:
                    break
                end -= 1
            if end == start:
                return ["[UNK]"]
            pieces.append(("##" if start else "") + word[start:end])
            start = end
        return pieces

    def encode_part(self, text):
        tokens = []
        for k, part in enumerate(text.split("[MASK]")):
            if k > 0:
                tokens.append("[MASK]")
            for w in self.pre_tokenize(self.normalize(part)):
                tokens += self.word_pieces(w)
        return tokens

    def encode(self, text, pair=None):
        """ids, tokens and token types of [CLS] text [SEP] (pair [SEP])."""
        tokens = ["[CLS]"] + self.encode_part(text) + ["[SEP]"]
        types = [0] * len(tokens)
        if pair is not None:
            b = self.encode_part(pair) + ["[SEP]"]
            tokens += b
            types += [1] * len(b)
        return [self.vocab[t] for t in tokens], tokens, types

    def tokenizer_json(self):
        added = [{"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                  "normalized": False, "special": True} for i, s in enumerate(BERT_SPECIALS)]
        cls, sep = self.vocab["[CLS]"], self.vocab["[SEP]"]

        def spec(name, type_id):
            return {"SpecialToken": {"id": name, "type_id": type_id}}

        def seq(name, type_id):
            return {"Sequence": {"id": name, "type_id": type_id}}

        return {
            "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                           "strip_accents": None, "lowercase": True},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "post_processor": {
                "type": "TemplateProcessing",
                "single": [spec("[CLS]", 0), seq("A", 0), spec("[SEP]", 0)],
                "pair": [spec("[CLS]", 0), seq("A", 0), spec("[SEP]", 0), seq("B", 1), spec("[SEP]", 1)],
                "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [cls], "tokens": ["[CLS]"]},
                                   "[SEP]": {"id": "[SEP]", "ids": [sep], "tokens": ["[SEP]"]}}},
            "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                      "max_input_chars_per_word": 100, "vocab": self.vocab},
        }


class RobertaBPE:
    """roberta-base-style tokenizer.json: byte-level BPE with <s> <pad> </s> <unk> first (ids 0-3), the 256
    byte symbols, the merges, then <mask> (an added token with lstrip: it swallows the space before it);
    RobertaProcessing adds <s> ... </s>."""

    SPECIALS = ["<s>", "<pad>", "</s>", "<unk>"]

    def __init__(self, merges):
        self.vocab = {t: i for i, t in enumerate(self.SPECIALS)}
        for b in mp.BYTE_ORDER:
            self.vocab[mp.BYTE_TO_CHAR[b]] = len(self.vocab)
        for a, b in merges:
            if a + b not in self.vocab:
                self.vocab[a + b] = len(self.vocab)
        self.mask_id = len(self.vocab)
        self.size = self.mask_id + 1
        self.merges, self.ranks = merges, {p: i for i, p in enumerate(merges)}
        self.id_to_token = {i: t for t, i in self.vocab.items()}
        self.id_to_token[self.mask_id] = "<mask>"
        self.specials = self.SPECIALS + ["<mask>"]
        self.bos_in_ids = 0
        self.mask_token = "<mask>"

    def bpe(self, word):
        symbols = list(word)
        while len(symbols) > 1:
            ranked = [self.ranks[p] for p in zip(symbols, symbols[1:]) if p in self.ranks]
            if not ranked:
                break
            symbols = mp.merge_pair(symbols, self.merges[min(ranked)])
        return symbols

    def encode(self, text):
        """ids, tokens, token types of <s> text </s>."""
        tokens = ["<s>"]
        parts = text.split("<mask>")
        for k, part in enumerate(parts):
            if k > 0:
                tokens.append("<mask>")
            if k + 1 < len(parts):
                part = part.rstrip()  # <mask> has lstrip
            for word in mp.pre_tokenize(part):
                tokens += self.bpe(word)
        tokens.append("</s>")
        ids = [self.mask_id if t == "<mask>" else self.vocab[t] for t in tokens]
        return ids, tokens, [0] * len(ids)

    def tokenizer_json(self):
        added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                  "normalized": True, "special": True} for i, t in enumerate(self.SPECIALS)]
        added.append({"id": self.mask_id, "content": "<mask>", "single_word": False, "lstrip": True,
                      "rstrip": False, "normalized": False, "special": True})
        byte_level = {"add_prefix_space": False, "trim_offsets": True, "use_regex": True}
        return {
            "version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
            "pre_tokenizer": dict({"type": "ByteLevel"}, **byte_level),
            "post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0],
                               "trim_offsets": True, "add_prefix_space": False},
            "decoder": dict({"type": "ByteLevel"}, **byte_level),
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                      "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
                      "vocab": self.vocab, "merges": [a + " " + b for a, b in self.merges]},
        }


# ---------------------------------------------------------------------------------------------
# Random weights. Scales keep attention far from uniform and logits spread over several units.


class Draw:
    def __init__(self, seed):
        self.gen = torch.Generator().manual_seed(seed)

    def __call__(self, *shape, std=1.0, mean=0.0):
        return mean + torch.randn(*shape, generator=self.gen) * std


def llama_like_state(r, V, H, KV, hd, arch, tied):
    """Tensors of LlamaForCausalLM and its relatives ([out, in] nn.Linear weights, `model.` prefix)."""
    s = [("model.embed_tokens.weight", r(V, D, std=0.5 if arch != "gemma" else 0.35))]
    norm_mean = 0.0 if arch == "gemma" else 1.0  # Gemma stores w for a (1 + w) scale
    for i in range(N_LAYER):
        p = f"model.layers.{i}."
        a = p + "self_attn."
        s.append((p + "input_layernorm.weight", r(D, std=0.2, mean=norm_mean)))
        q, k, v = r(H * hd, D, std=0.35), r(KV * hd, D, std=0.35), r(KV * hd, D, std=0.3)
        if arch == "phi3":
            s.append((a + "qkv_proj.weight", torch.cat([q, k, v])))
        else:
            s += [(a + "q_proj.weight", q), (a + "k_proj.weight", k), (a + "v_proj.weight", v)]
        if arch == "qwen2":
            s += [(a + "q_proj.bias", r(H * hd, std=0.3)), (a + "k_proj.bias", r(KV * hd, std=0.3)),
                  (a + "v_proj.bias", r(KV * hd, std=0.2))]
        s.append((a + "o_proj.weight", r(D, H * hd, std=(H * hd) ** -0.5)))
        s.append((p + "post_attention_layernorm.weight", r(D, std=0.2, mean=norm_mean)))
        g, u = r(FF, D, std=0.4), r(FF, D, std=0.4)
        if arch == "phi3":
            s.append((p + "mlp.gate_up_proj.weight", torch.cat([g, u])))
        else:
            s += [(p + "mlp.gate_proj.weight", g), (p + "mlp.up_proj.weight", u)]
        s.append((p + "mlp.down_proj.weight", r(D, FF, std=FF ** -0.5)))
    s.append(("model.norm.weight", r(D, std=0.2, mean=norm_mean)))
    if not tied:
        s.append(("lm_head.weight", r(V, D, std=0.5)))
    return s


def neox_state(r, V, H):
    """GPTNeoXForCausalLM's tensors: fused query_key_value [3d, d] with rows per head (q, k, v of head 0,
    then of head 1, ...), biases everywhere, separate embed_out, and the rotary inv_freq buffer old Pythia
    files carry (to be ignored)."""
    s = [("gpt_neox.embed_in.weight", r(V, D, std=0.5))]
    hd = D // H
    rot = int(hd * 0.25)
    for i in range(N_LAYER):
        p = f"gpt_neox.layers.{i}."
        s += [
            (p + "input_layernorm.weight", r(D, std=0.2, mean=1.0)), (p + "input_layernorm.bias", r(D, std=0.1)),
            (p + "post_attention_layernorm.weight", r(D, std=0.2, mean=1.0)),
            (p + "post_attention_layernorm.bias", r(D, std=0.1)),
            (p + "attention.rotary_emb.inv_freq", 1.0 / (10000 ** (torch.arange(0, rot, 2).float() / rot))),
            (p + "attention.query_key_value.weight", r(3 * D, D, std=0.3)),
            (p + "attention.query_key_value.bias", r(3 * D, std=0.2)),
            (p + "attention.dense.weight", r(D, D, std=D ** -0.5)), (p + "attention.dense.bias", r(D, std=0.1)),
            (p + "mlp.dense_h_to_4h.weight", r(FF, D, std=D ** -0.5)), (p + "mlp.dense_h_to_4h.bias", r(FF, std=0.2)),
            (p + "mlp.dense_4h_to_h.weight", r(D, FF, std=FF ** -0.5)), (p + "mlp.dense_4h_to_h.bias", r(D, std=0.1)),
        ]
    s += [("gpt_neox.final_layer_norm.weight", r(D, std=0.2, mean=1.0)),
          ("gpt_neox.final_layer_norm.bias", r(D, std=0.1)), ("embed_out.weight", r(V, D, std=0.5))]
    return s


def bert_state(r, V):
    """bert-base-uncased's own names: LayerNorm.gamma / .beta, the pooler and the next-sentence head
    (to be ignored), no cls.predictions.decoder.weight (tied to the word embeddings)."""
    e = "bert.embeddings."
    s = [(e + "word_embeddings.weight", r(V, D, std=0.6)), (e + "position_embeddings.weight", r(MAX_POS, D, std=0.3)),
         (e + "token_type_embeddings.weight", r(2, D, std=0.5)),
         (e + "LayerNorm.gamma", r(D, std=0.2, mean=1.0)), (e + "LayerNorm.beta", r(D, std=0.1))]
    for i in range(N_LAYER):
        p = f"bert.encoder.layer.{i}."
        for n, std in (("query", 0.35), ("key", 0.35), ("value", 0.3)):
            s += [(p + f"attention.self.{n}.weight", r(D, D, std=std)), (p + f"attention.self.{n}.bias", r(D, std=0.2))]
        s += [
            (p + "attention.output.dense.weight", r(D, D, std=D ** -0.5)), (p + "attention.output.dense.bias", r(D, std=0.1)),
            (p + "attention.output.LayerNorm.gamma", r(D, std=0.2, mean=1.0)),
            (p + "attention.output.LayerNorm.beta", r(D, std=0.1)),
            (p + "intermediate.dense.weight", r(FF, D, std=D ** -0.5)), (p + "intermediate.dense.bias", r(FF, std=0.2)),
            (p + "output.dense.weight", r(D, FF, std=FF ** -0.5)), (p + "output.dense.bias", r(D, std=0.1)),
            (p + "output.LayerNorm.gamma", r(D, std=0.2, mean=1.0)), (p + "output.LayerNorm.beta", r(D, std=0.1)),
        ]
    s += [("bert.pooler.dense.weight", r(D, D, std=0.2)), ("bert.pooler.dense.bias", r(D, std=0.1)),
          ("cls.predictions.bias", r(V, std=0.5)),
          ("cls.predictions.transform.dense.weight", r(D, D, std=D ** -0.5 * 1.5)),
          ("cls.predictions.transform.dense.bias", r(D, std=0.1)),
          ("cls.predictions.transform.LayerNorm.gamma", r(D, std=0.2, mean=1.0)),
          ("cls.predictions.transform.LayerNorm.beta", r(D, std=0.1)),
          ("cls.seq_relationship.weight", r(2, D, std=0.2)), ("cls.seq_relationship.bias", r(2, std=0.1))]
    return s


def bert_model_state(r, V):
    """BertModel as sentence-transformers and fine-tunes save it: no bert. prefix, LayerNorm.weight /
    .bias (newer transformers' spelling), the pooler kept, no masked-LM or next-sentence head."""
    out = []
    for n, t in bert_state(r, V):
        if n.startswith("cls."):
            continue
        n = n[len("bert."):]
        n = re.sub(r"LayerNorm\.gamma$", "LayerNorm.weight", re.sub(r"LayerNorm\.beta$", "LayerNorm.bias", n))
        out.append((n, t))
    return out


def roberta_state(r, V):
    """RobertaForMaskedLM's tensors: BERT's layout with LayerNorm.weight / .bias, max_position_embeddings + 2
    position rows (positions start at padding_idx + 1 = 2), one token type row, a pooler (ignored), lm_head
    with its own bias and no lm_head.decoder.weight (tied)."""
    e = "roberta.embeddings."
    s = [(e + "word_embeddings.weight", r(V, D, std=0.6)), (e + "position_embeddings.weight", r(MAX_POS + 2, D, std=0.3)),
         (e + "token_type_embeddings.weight", r(1, D, std=0.3)),
         (e + "LayerNorm.weight", r(D, std=0.2, mean=1.0)), (e + "LayerNorm.bias", r(D, std=0.1))]
    for i in range(N_LAYER):
        p = f"roberta.encoder.layer.{i}."
        for n, std in (("query", 0.35), ("key", 0.35), ("value", 0.3)):
            s += [(p + f"attention.self.{n}.weight", r(D, D, std=std)), (p + f"attention.self.{n}.bias", r(D, std=0.2))]
        s += [
            (p + "attention.output.dense.weight", r(D, D, std=D ** -0.5)), (p + "attention.output.dense.bias", r(D, std=0.1)),
            (p + "attention.output.LayerNorm.weight", r(D, std=0.2, mean=1.0)),
            (p + "attention.output.LayerNorm.bias", r(D, std=0.1)),
            (p + "intermediate.dense.weight", r(FF, D, std=D ** -0.5)), (p + "intermediate.dense.bias", r(FF, std=0.2)),
            (p + "output.dense.weight", r(D, FF, std=FF ** -0.5)), (p + "output.dense.bias", r(D, std=0.1)),
            (p + "output.LayerNorm.weight", r(D, std=0.2, mean=1.0)), (p + "output.LayerNorm.bias", r(D, std=0.1)),
        ]
    s += [("roberta.pooler.dense.weight", r(D, D, std=0.2)), ("roberta.pooler.dense.bias", r(D, std=0.1)),
          ("lm_head.bias", r(V, std=0.5)), ("lm_head.dense.weight", r(D, D, std=D ** -0.5 * 1.5)),
          ("lm_head.dense.bias", r(D, std=0.1)), ("lm_head.layer_norm.weight", r(D, std=0.2, mean=1.0)),
          ("lm_head.layer_norm.bias", r(D, std=0.1))]
    return s


def distilbert_state(r, V):
    """DistilBertForMaskedLM's tensors: q_lin / k_lin / v_lin / out_lin, sa_layer_norm, ffn.lin1 / lin2,
    output_layer_norm, vocab_transform, vocab_layer_norm, vocab_projector.bias (its weight tied, absent);
    no token types."""
    e = "distilbert.embeddings."
    s = [(e + "word_embeddings.weight", r(V, D, std=0.6)), (e + "position_embeddings.weight", r(MAX_POS, D, std=0.3)),
         (e + "LayerNorm.weight", r(D, std=0.2, mean=1.0)), (e + "LayerNorm.bias", r(D, std=0.1))]
    for i in range(N_LAYER):
        p = f"distilbert.transformer.layer.{i}."
        for n, std in (("q_lin", 0.35), ("k_lin", 0.35), ("v_lin", 0.3), ("out_lin", D ** -0.5)):
            s += [(p + f"attention.{n}.weight", r(D, D, std=std)), (p + f"attention.{n}.bias", r(D, std=0.1))]
        s += [
            (p + "sa_layer_norm.weight", r(D, std=0.2, mean=1.0)), (p + "sa_layer_norm.bias", r(D, std=0.1)),
            (p + "ffn.lin1.weight", r(FF, D, std=D ** -0.5)), (p + "ffn.lin1.bias", r(FF, std=0.2)),
            (p + "ffn.lin2.weight", r(D, FF, std=FF ** -0.5)), (p + "ffn.lin2.bias", r(D, std=0.1)),
            (p + "output_layer_norm.weight", r(D, std=0.2, mean=1.0)), (p + "output_layer_norm.bias", r(D, std=0.1)),
        ]
    s += [("vocab_transform.weight", r(D, D, std=D ** -0.5 * 1.5)), ("vocab_transform.bias", r(D, std=0.1)),
          ("vocab_layer_norm.weight", r(D, std=0.2, mean=1.0)), ("vocab_layer_norm.bias", r(D, std=0.1)),
          ("vocab_projector.bias", r(V, std=0.5))]
    return s


# ---------------------------------------------------------------------------------------------
# The float64 reference: one forward over a canonical layout. y = x @ W + b with W [in, out]; query head h
# in columns h*hd .. (h+1)*hd - 1 of wq, key-value head g likewise in wk / wv; query head h reads key-value
# head h // (H / KV). Norms: {"kind": "layer" | "rms" | "rms1p", "w", "b", "eps"}.


def norm64(x, n):
    if n["kind"] == "layer":
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return (x - mu) / torch.sqrt(var + n["eps"]) * n["w"] + n["b"]
    scale = n["w"] + 1 if n["kind"] == "rms1p" else n["w"]
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + n["eps"]) * scale


def act64(x, kind):
    if kind == "silu":
        return x / (1 + torch.exp(-x))
    if kind == "gelu_tanh":
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    if kind == "gelu_erf":
        return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))
    raise ValueError(kind)


def rope_freqs64(theta, dims, scaling):
    """Rotation frequency of each pair (i, i + dims/2), i < dims/2; `llama3` scaling from its definition:
    wavelengths under original/high_freq_factor keep their frequency, those over original/low_freq_factor
    are divided by factor, those between are interpolated by (original/wavelength - low)/(high - low)."""
    out = []
    for i in range(dims // 2):
        f = theta ** (-2.0 * i / dims)
        if scaling is not None:
            assert scaling["rope_type"] == "llama3"
            wl = 2 * math.pi / f
            orig = scaling["original_max_position_embeddings"]
            lo, hi, fac = scaling["low_freq_factor"], scaling["high_freq_factor"], scaling["factor"]
            if wl > orig / lo:
                f = f / fac
            elif wl >= orig / hi:
                s = (orig / wl - lo) / (hi - lo)
                f = (1 - s) * f / fac + s * f
        out.append(f)
    return torch.tensor(out, dtype=torch.float64)


def rotate64(x, freqs):
    """x [T, heads, hd]: rotates the first 2*len(freqs) dims of each head, pairing i with i + len(freqs)."""
    T = x.shape[0]
    half = len(freqs)
    ang = torch.arange(T, dtype=torch.float64).view(T, 1, 1) * freqs.view(1, 1, half)
    c, s = torch.cos(ang), torch.sin(ang)
    a, b = x[..., :half], x[..., half:2 * half]
    return torch.cat([a * c - b * s, b * c + a * s, x[..., 2 * half:]], dim=-1)


def forward64(m, ids, ablate=(), types=None, patch=None):
    """Returns a dict: logits [T, V]; attention [L, H, T, T]; lens [L, T, V] (decoders; the residual after
    block l through the final norm and the unembedding); heads [L, T, H, hd], each head's output before the
    output projection (after ablation and patching); mlp [L, T, d], each MLP's output as added to the
    residual (pre-norm blocks); resid [T, d], the residual before the final norm or head. patch:
    {(layer, head): z [T, hd]} replaces those heads' outputs (activation patching, ../findings/)."""
    T = len(ids)
    H, KV, hd = m["heads"], m["kv_heads"], m["head_dim"]
    x = m["embed"][torch.tensor(ids)] * m["embed_scale"]
    if m["pos_embed"] is not None:
        x = x + m["pos_embed"][m["pos_offset"]:m["pos_offset"] + T]
    if m["type_embed"] is not None:
        x = x + m["type_embed"][torch.tensor(types if types is not None else [0] * T)]
    if m["emb_norm"] is not None:
        x = norm64(x, m["emb_norm"])
    i = torch.arange(T).view(T, 1)
    j = torch.arange(T).view(1, T)
    attn, lens, heads, mlps = [], [], [], []
    for li, L in enumerate(m["layers"]):
        allowed = (j <= i) if m["causal"] else torch.ones(T, T, dtype=torch.bool)
        if L["window"]:
            allowed = allowed & (j > i - L["window"])
        h = x if m["post_norm"] else norm64(x, L["norm1"])
        q = (h @ L["wq"] + L["bq"]).view(T, H, hd)
        k = (h @ L["wk"] + L["bk"]).view(T, KV, hd)
        v = (h @ L["wv"] + L["bv"]).view(T, KV, hd)
        if m["rope"] is not None:
            q, k = rotate64(q, m["rope"]), rotate64(k, m["rope"])
        group = torch.arange(H) // (H // KV)
        s = torch.einsum("thd,uhd->htu", q, k[:, group]) * m["scale"]
        a = torch.softmax(s.masked_fill(~allowed, float("-inf")), dim=-1)
        z = torch.einsum("htu,uhd->thd", a, v[:, group]).clone()
        for (al, ah) in ablate:
            if al == li:
                z[:, ah, :] = 0
        for (pl, ph), src in (patch or {}).items():
            if pl == li:
                z[:, ph, :] = src
        attn_out = z.reshape(T, H * hd) @ L["wo"] + L["bo"]
        if m["post_norm"]:
            x = norm64(x + attn_out, L["norm1"])
            mo = mlp64(x, L)
            x = norm64(x + mo, L["norm2"])
        elif m["parallel"]:
            mo = mlp64(norm64(x, L["norm2"]), L)
            x = x + attn_out + mo
        else:
            x = x + attn_out
            mo = mlp64(norm64(x, L["norm2"]), L)
            x = x + mo
        attn.append(a)
        heads.append(z)
        mlps.append(mo)
        if m["causal"]:
            lens.append(unembed64(m, x))
    out = {"attention": torch.stack(attn), "heads": torch.stack(heads), "mlp": torch.stack(mlps), "resid": x}
    if m["causal"]:
        out["lens"] = torch.stack(lens)
        out["logits"] = lens[-1]
    else:
        hd_ = m["mlm"]
        if hd_ is None:  # no head (BertModel): the last hidden state is the output
            out["logits"] = None
            return out
        y = norm64(act64(x @ hd_["w"] + hd_["b"], m["act"]), hd_["norm"])
        out["logits"] = y @ m["unembed"].T + m["unembed_bias"]
    return out


def mlp64(h, L):
    if L["w_gate"] is not None:
        return (act64(h @ L["w_gate"], L["act"]) * (h @ L["w_up"])) @ L["w_down"]
    return act64(h @ L["w_up"] + L["b_up"], L["act"]) @ L["w_down"] + L["b_down"]


def unembed64(m, x):
    y = norm64(x, m["final_norm"]) @ m["unembed"].T
    return y if m["unembed_bias"] is None else y + m["unembed_bias"]


def model64(**kw):
    m = {"embed_scale": 1.0, "pos_embed": None, "pos_offset": 0, "type_embed": None, "emb_norm": None,
         "rope": None, "causal": True, "post_norm": False, "parallel": False, "final_norm": None,
         "unembed_bias": None, "mlm": None, "act": None}
    m.update(kw)
    return m


ACT = {"silu": "silu", "gelu": "gelu_erf", "gelu_pytorch_tanh": "gelu_tanh", "gelu_new": "gelu_tanh"}


def canonical_llama_like(w, c, arch):
    """Llama, Mistral, Qwen2, Phi3, Gemma: w = stored name -> float64."""
    H, KV = c["num_attention_heads"], c["num_key_value_heads"]
    hd = c.get("head_dim") or c["hidden_size"] // H
    act = ACT[c.get("hidden_activation") or c["hidden_act"]]
    kind = "rms1p" if arch == "gemma" else "rms"
    eps = c["rms_norm_eps"]
    window = c.get("sliding_window") or 0
    if arch == "qwen2" and not c["use_sliding_window"]:
        window = 0
    zero_q, zero_kv = torch.zeros(H * hd, dtype=torch.float64), torch.zeros(KV * hd, dtype=torch.float64)
    layers = []
    for li in range(c["num_hidden_layers"]):
        p = f"model.layers.{li}."
        a = p + "self_attn."
        if arch == "phi3":
            qkv = w[a + "qkv_proj.weight"]
            wq, wk, wv = qkv[:H * hd], qkv[H * hd:(H + KV) * hd], qkv[(H + KV) * hd:]
            gu = w[p + "mlp.gate_up_proj.weight"]
            ff = gu.shape[0] // 2
            wg, wu = gu[:ff], gu[ff:]
        else:
            wq, wk, wv = w[a + "q_proj.weight"], w[a + "k_proj.weight"], w[a + "v_proj.weight"]
            wg, wu = w[p + "mlp.gate_proj.weight"], w[p + "mlp.up_proj.weight"]
        layers.append({
            "norm1": {"kind": kind, "w": w[p + "input_layernorm.weight"], "eps": eps},
            "norm2": {"kind": kind, "w": w[p + "post_attention_layernorm.weight"], "eps": eps},
            "wq": wq.T, "wk": wk.T, "wv": wv.T,
            "bq": w.get(a + "q_proj.bias", zero_q), "bk": w.get(a + "k_proj.bias", zero_kv),
            "bv": w.get(a + "v_proj.bias", zero_kv),
            "wo": w[a + "o_proj.weight"].T, "bo": 0.0,
            "w_gate": wg.T, "w_up": wu.T, "w_down": w[p + "mlp.down_proj.weight"].T, "act": act,
            "window": window,
        })
    embed = w["model.embed_tokens.weight"]
    scale = 1.0
    if arch == "gemma":  # Hugging Face multiplies by sqrt(hidden_size) rounded to the weights' dtype
        scale = float(torch.tensor(c["hidden_size"] ** 0.5, dtype=DTYPES[c["torch_dtype"]]))
    tied = c.get("tie_word_embeddings", True)
    return model64(embed=embed, embed_scale=scale, heads=H, kv_heads=KV, head_dim=hd, scale=hd ** -0.5,
                   rope=rope_freqs64(c["rope_theta"], hd, c.get("rope_scaling")), layers=layers,
                   final_norm={"kind": kind, "w": w["model.norm.weight"], "eps": eps},
                   unembed=embed if tied else w["lm_head.weight"])


def canonical_neox(w, c):
    H = c["num_attention_heads"]
    hd = c["hidden_size"] // H
    eps = c["layer_norm_eps"]
    layers = []
    for li in range(c["num_hidden_layers"]):
        p = f"gpt_neox.layers.{li}."
        qkv = w[p + "attention.query_key_value.weight"].view(H, 3, hd, -1)  # rows: head, (q|k|v), dim
        qkv_b = w[p + "attention.query_key_value.bias"].view(H, 3, hd)
        part = lambda t, k: t[:, k].reshape(H * hd, -1)  # noqa: E731
        layers.append({
            "norm1": {"kind": "layer", "w": w[p + "input_layernorm.weight"], "b": w[p + "input_layernorm.bias"], "eps": eps},
            "norm2": {"kind": "layer", "w": w[p + "post_attention_layernorm.weight"],
                      "b": w[p + "post_attention_layernorm.bias"], "eps": eps},
            "wq": part(qkv, 0).T, "wk": part(qkv, 1).T, "wv": part(qkv, 2).T,
            "bq": qkv_b[:, 0].reshape(-1), "bk": qkv_b[:, 1].reshape(-1), "bv": qkv_b[:, 2].reshape(-1),
            "wo": w[p + "attention.dense.weight"].T, "bo": w[p + "attention.dense.bias"],
            "w_gate": None, "w_up": w[p + "mlp.dense_h_to_4h.weight"].T, "b_up": w[p + "mlp.dense_h_to_4h.bias"],
            "w_down": w[p + "mlp.dense_4h_to_h.weight"].T, "b_down": w[p + "mlp.dense_4h_to_h.bias"],
            "act": ACT[c["hidden_act"]], "window": 0,
        })
    rot = int(hd * c["rotary_pct"])
    return model64(embed=w["gpt_neox.embed_in.weight"], heads=H, kv_heads=H, head_dim=hd, scale=hd ** -0.5,
                   rope=rope_freqs64(c["rotary_emb_base"], rot, None), layers=layers,
                   parallel=c["use_parallel_residual"],
                   final_norm={"kind": "layer", "w": w["gpt_neox.final_layer_norm.weight"],
                               "b": w["gpt_neox.final_layer_norm.bias"], "eps": eps},
                   unembed=w["embed_out.weight"])


def canonical_bert(w, c, head=True):
    H = c["num_attention_heads"]
    hd = c["hidden_size"] // H
    eps = c["layer_norm_eps"]
    ln = lambda p: {"kind": "layer", "w": w[p + ".gamma"], "b": w[p + ".beta"], "eps": eps}  # noqa: E731
    layers = []
    for li in range(c["num_hidden_layers"]):
        p = f"bert.encoder.layer.{li}."
        s = p + "attention.self."
        layers.append({
            "norm1": ln(p + "attention.output.LayerNorm"), "norm2": ln(p + "output.LayerNorm"),
            "wq": w[s + "query.weight"].T, "wk": w[s + "key.weight"].T, "wv": w[s + "value.weight"].T,
            "bq": w[s + "query.bias"], "bk": w[s + "key.bias"], "bv": w[s + "value.bias"],
            "wo": w[p + "attention.output.dense.weight"].T, "bo": w[p + "attention.output.dense.bias"],
            "w_gate": None, "w_up": w[p + "intermediate.dense.weight"].T, "b_up": w[p + "intermediate.dense.bias"],
            "w_down": w[p + "output.dense.weight"].T, "b_down": w[p + "output.dense.bias"],
            "act": ACT[c["hidden_act"]], "window": 0,
        })
    e = "bert.embeddings."
    t = "cls.predictions.transform."
    return model64(embed=w[e + "word_embeddings.weight"], pos_embed=w[e + "position_embeddings.weight"],
                   type_embed=w[e + "token_type_embeddings.weight"], emb_norm=ln(e + "LayerNorm"),
                   heads=H, kv_heads=H, head_dim=hd, scale=hd ** -0.5, layers=layers, causal=False,
                   post_norm=True, act=ACT[c["hidden_act"]],
                   mlm={"w": w[t + "dense.weight"].T, "b": w[t + "dense.bias"], "norm": ln(t + "LayerNorm")} if head else None,
                   unembed=w[e + "word_embeddings.weight"], unembed_bias=w["cls.predictions.bias"] if head else None)


def as_bert_names(w):
    """BertModel's names (no prefix, LayerNorm.weight / .bias) as BertForMaskedLM's own file has them."""
    out = {}
    for k, v in w.items():
        k = re.sub(r"LayerNorm\.weight$", "LayerNorm.gamma", re.sub(r"LayerNorm\.bias$", "LayerNorm.beta", k))
        out["bert." + k] = v
    return out


def canonical_roberta(w, c):
    H = c["num_attention_heads"]
    hd = c["hidden_size"] // H
    eps = c["layer_norm_eps"]
    ln = lambda p: {"kind": "layer", "w": w[p + ".weight"], "b": w[p + ".bias"], "eps": eps}  # noqa: E731
    layers = []
    for li in range(c["num_hidden_layers"]):
        p = f"roberta.encoder.layer.{li}."
        s = p + "attention.self."
        layers.append({
            "norm1": ln(p + "attention.output.LayerNorm"), "norm2": ln(p + "output.LayerNorm"),
            "wq": w[s + "query.weight"].T, "wk": w[s + "key.weight"].T, "wv": w[s + "value.weight"].T,
            "bq": w[s + "query.bias"], "bk": w[s + "key.bias"], "bv": w[s + "value.bias"],
            "wo": w[p + "attention.output.dense.weight"].T, "bo": w[p + "attention.output.dense.bias"],
            "w_gate": None, "w_up": w[p + "intermediate.dense.weight"].T, "b_up": w[p + "intermediate.dense.bias"],
            "w_down": w[p + "output.dense.weight"].T, "b_down": w[p + "output.dense.bias"],
            "act": ACT[c["hidden_act"]], "window": 0,
        })
    e = "roberta.embeddings."
    return model64(embed=w[e + "word_embeddings.weight"], pos_embed=w[e + "position_embeddings.weight"],
                   pos_offset=c["pad_token_id"] + 1, type_embed=w[e + "token_type_embeddings.weight"],
                   emb_norm=ln(e + "LayerNorm"), heads=H, kv_heads=H, head_dim=hd, scale=hd ** -0.5, layers=layers,
                   causal=False, post_norm=True, act=ACT[c["hidden_act"]],
                   mlm={"w": w["lm_head.dense.weight"].T, "b": w["lm_head.dense.bias"], "norm": ln("lm_head.layer_norm")},
                   unembed=w[e + "word_embeddings.weight"], unembed_bias=w["lm_head.bias"])


def canonical_distilbert(w, c):
    H = c["n_heads"]
    hd = c["dim"] // H
    eps = 1e-12  # DistilBERT's LayerNorms are built with eps 1e-12; its config has no key for it
    ln = lambda p: {"kind": "layer", "w": w[p + ".weight"], "b": w[p + ".bias"], "eps": eps}  # noqa: E731
    layers = []
    for li in range(c["n_layers"]):
        p = f"distilbert.transformer.layer.{li}."
        a = p + "attention."
        layers.append({
            "norm1": ln(p + "sa_layer_norm"), "norm2": ln(p + "output_layer_norm"),
            "wq": w[a + "q_lin.weight"].T, "wk": w[a + "k_lin.weight"].T, "wv": w[a + "v_lin.weight"].T,
            "bq": w[a + "q_lin.bias"], "bk": w[a + "k_lin.bias"], "bv": w[a + "v_lin.bias"],
            "wo": w[a + "out_lin.weight"].T, "bo": w[a + "out_lin.bias"],
            "w_gate": None, "w_up": w[p + "ffn.lin1.weight"].T, "b_up": w[p + "ffn.lin1.bias"],
            "w_down": w[p + "ffn.lin2.weight"].T, "b_down": w[p + "ffn.lin2.bias"],
            "act": ACT[c["activation"]], "window": 0,
        })
    e = "distilbert.embeddings."
    return model64(embed=w[e + "word_embeddings.weight"], pos_embed=w[e + "position_embeddings.weight"],
                   emb_norm=ln(e + "LayerNorm"), heads=H, kv_heads=H, head_dim=hd, scale=hd ** -0.5, layers=layers,
                   causal=False, post_norm=True, act=ACT[c["activation"]],
                   mlm={"w": w["vocab_transform.weight"].T, "b": w["vocab_transform.bias"], "norm": ln("vocab_layer_norm")},
                   unembed=w[e + "word_embeddings.weight"], unembed_bias=w["vocab_projector.bias"])


# ---------------------------------------------------------------------------------------------
# Second forward, float32, following the stored tensors the way Hugging Face's modules use them
# (nn.Linear on [out, in], view-split heads, rotate_half over cat(freqs, freqs), repeat_kv, masks with
# finfo.min). It checks the converters above; nothing here feeds expected.json.

HF_ACT = {"silu": F.silu, "gelu": F.gelu, "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh")}


def rotate_half(x):
    x1, x2 = x[..., :x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def hf_inv_freq(base, dim, scaling):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    if scaling is None:
        return inv_freq
    factor, lo, hi = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    old = scaling["original_max_position_embeddings"]
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > old / lo, inv_freq / factor, inv_freq)
    smooth = (old / wavelen - lo) / (hi - lo)
    smoothed = (1 - smooth) * inv_freq_llama / factor + smooth * inv_freq_llama
    is_medium = ~(wavelen < old / hi) * ~(wavelen > old / lo)
    return torch.where(is_medium, smoothed, inv_freq_llama)


def hf_cos_sin(inv_freq, T):
    freqs = (inv_freq[:, None] @ torch.arange(T).float()[None, :]).transpose(0, 1)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos()[None], emb.sin()[None]


def hf_mask(T, window, causal=True):
    keep = torch.tril(torch.ones(T, T, dtype=torch.bool)) if causal else torch.ones(T, T, dtype=torch.bool)
    if window:
        keep = keep & (torch.arange(T)[None, :] > torch.arange(T)[:, None] - window)
    return torch.where(keep, torch.tensor(0.0), torch.tensor(torch.finfo(torch.float32).min))


def hf_llama_like32(f, c, arch, ids):
    H, KV = c["num_attention_heads"], c["num_key_value_heads"]
    hd = c.get("head_dim") or c["hidden_size"] // H
    T = len(ids)
    eps = c["rms_norm_eps"]

    def rms(x, wt):
        var = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(var + eps)
        return x * (1.0 + wt) if arch == "gemma" else wt * x

    act = HF_ACT[c.get("hidden_activation") or c["hidden_act"]]
    x = F.embedding(torch.tensor(ids), f["model.embed_tokens.weight"])
    if arch == "gemma":
        # the weights' dtype (bfloat16 here): HF's hidden states are in it, these are widened
        x = x * torch.tensor(c["hidden_size"] ** 0.5, dtype=DTYPES[c["torch_dtype"]]).float()
    cos, sin = hf_cos_sin(hf_inv_freq(c["rope_theta"], hd, c.get("rope_scaling")), T)
    use_window = arch == "mistral" or (arch == "qwen2" and c["use_sliding_window"])
    mask = hf_mask(T, c["sliding_window"] if use_window else 0)
    for li in range(c["num_hidden_layers"]):
        p = f"model.layers.{li}."
        a = p + "self_attn."
        h = rms(x, f[p + "input_layernorm.weight"])
        if arch == "phi3":
            qkv = F.linear(h, f[a + "qkv_proj.weight"])
            q, k, v = qkv[..., :H * hd], qkv[..., H * hd:(H + KV) * hd], qkv[..., (H + KV) * hd:]
        else:
            q = F.linear(h, f[a + "q_proj.weight"], f.get(a + "q_proj.bias"))
            k = F.linear(h, f[a + "k_proj.weight"], f.get(a + "k_proj.bias"))
            v = F.linear(h, f[a + "v_proj.weight"], f.get(a + "v_proj.bias"))
        q = q.view(T, H, hd).transpose(0, 1)
        k = k.view(T, KV, hd).transpose(0, 1)
        v = v.view(T, KV, hd).transpose(0, 1)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k = k[:, None].expand(KV, H // KV, T, hd).reshape(H, T, hd)  # repeat_kv
        v = v[:, None].expand(KV, H // KV, T, hd).reshape(H, T, hd)
        s = torch.matmul(q, k.transpose(1, 2)) * hd ** -0.5 + mask
        o = torch.matmul(F.softmax(s, dim=-1, dtype=torch.float32), v).transpose(0, 1).reshape(T, H * hd)
        x = x + F.linear(o, f[a + "o_proj.weight"])
        h = rms(x, f[p + "post_attention_layernorm.weight"])
        if arch == "phi3":
            gate, up = F.linear(h, f[p + "mlp.gate_up_proj.weight"]).chunk(2, dim=-1)
            x = x + F.linear(up * act(gate), f[p + "mlp.down_proj.weight"])
        else:
            x = x + F.linear(act(F.linear(h, f[p + "mlp.gate_proj.weight"])) * F.linear(h, f[p + "mlp.up_proj.weight"]),
                             f[p + "mlp.down_proj.weight"])
    x = rms(x, f["model.norm.weight"])
    return F.linear(x, f.get("lm_head.weight", f["model.embed_tokens.weight"]))


def hf_neox32(f, c, ids):
    H = c["num_attention_heads"]
    hs = c["hidden_size"] // H
    rot = int(hs * c["rotary_pct"])
    T = len(ids)
    eps = c["layer_norm_eps"]
    x = F.embedding(torch.tensor(ids), f["gpt_neox.embed_in.weight"])
    cos, sin = hf_cos_sin(1.0 / (c["rotary_emb_base"] ** (torch.arange(0, rot, 2).float() / rot)), T)
    mask = hf_mask(T, 0)
    for li in range(c["num_hidden_layers"]):
        p = f"gpt_neox.layers.{li}."
        ln1 = F.layer_norm(x, (c["hidden_size"],), f[p + "input_layernorm.weight"], f[p + "input_layernorm.bias"], eps)
        qkv = F.linear(ln1, f[p + "attention.query_key_value.weight"], f[p + "attention.query_key_value.bias"])
        qkv = qkv.view(T, H, 3 * hs)
        q = qkv[..., :hs].permute(1, 0, 2)
        k = qkv[..., hs:2 * hs].permute(1, 0, 2)
        v = qkv[..., 2 * hs:].permute(1, 0, 2)
        qr, kr = q[..., :rot], k[..., :rot]
        q = torch.cat((qr * cos + rotate_half(qr) * sin, q[..., rot:]), dim=-1)
        k = torch.cat((kr * cos + rotate_half(kr) * sin, k[..., rot:]), dim=-1)
        s = torch.baddbmm(torch.zeros(H, T, T), q, k.transpose(1, 2), beta=1.0, alpha=hs ** -0.5) + mask
        o = torch.matmul(F.softmax(s, -1), v).permute(1, 0, 2).reshape(T, H * hs)
        attn_out = F.linear(o, f[p + "attention.dense.weight"], f[p + "attention.dense.bias"])
        ln2 = F.layer_norm(x, (c["hidden_size"],), f[p + "post_attention_layernorm.weight"],
                           f[p + "post_attention_layernorm.bias"], eps)
        mlp = F.linear(F.gelu(F.linear(ln2, f[p + "mlp.dense_h_to_4h.weight"], f[p + "mlp.dense_h_to_4h.bias"])),
                       f[p + "mlp.dense_4h_to_h.weight"], f[p + "mlp.dense_4h_to_h.bias"])
        assert c["use_parallel_residual"]
        x = mlp + attn_out + x
    x = F.layer_norm(x, (c["hidden_size"],), f["gpt_neox.final_layer_norm.weight"],
                     f["gpt_neox.final_layer_norm.bias"], eps)
    return F.linear(x, f["embed_out.weight"])


def hf_bert32(f, c, ids, types, head=True):
    # Hugging Face renames gamma -> weight and beta -> bias on load.
    f = {re.sub(r"LayerNorm\.gamma$", "LayerNorm.weight", re.sub(r"LayerNorm\.beta$", "LayerNorm.bias", k)): v
         for k, v in f.items()}
    H = c["num_attention_heads"]
    hs = c["hidden_size"] // H
    T = len(ids)
    d = (c["hidden_size"],)
    eps = c["layer_norm_eps"]
    e = "bert.embeddings."
    x = (F.embedding(torch.tensor(ids), f[e + "word_embeddings.weight"])
         + F.embedding(torch.tensor(types), f[e + "token_type_embeddings.weight"])
         + F.embedding(torch.arange(T), f[e + "position_embeddings.weight"]))
    x = F.layer_norm(x, d, f[e + "LayerNorm.weight"], f[e + "LayerNorm.bias"], eps)
    for li in range(c["num_hidden_layers"]):
        p = f"bert.encoder.layer.{li}."
        s = p + "attention.self."
        q, k, v = (F.linear(x, f[s + n + ".weight"], f[s + n + ".bias"]).view(T, H, hs).permute(1, 0, 2)
                   for n in ("query", "key", "value"))
        sc = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hs)
        ctx = torch.matmul(F.softmax(sc, dim=-1), v).permute(1, 0, 2).reshape(T, H * hs)
        a = F.layer_norm(F.linear(ctx, f[p + "attention.output.dense.weight"], f[p + "attention.output.dense.bias"]) + x,
                         d, f[p + "attention.output.LayerNorm.weight"], f[p + "attention.output.LayerNorm.bias"], eps)
        inter = F.gelu(F.linear(a, f[p + "intermediate.dense.weight"], f[p + "intermediate.dense.bias"]))
        x = F.layer_norm(F.linear(inter, f[p + "output.dense.weight"], f[p + "output.dense.bias"]) + a,
                         d, f[p + "output.LayerNorm.weight"], f[p + "output.LayerNorm.bias"], eps)
    if not head:
        return x  # BertModel's last_hidden_state
    t = "cls.predictions.transform."
    y = F.gelu(F.linear(x, f[t + "dense.weight"], f[t + "dense.bias"]))
    y = F.layer_norm(y, d, f[t + "LayerNorm.weight"], f[t + "LayerNorm.bias"], eps)
    return F.linear(y, f[e + "word_embeddings.weight"], f["cls.predictions.bias"])


def hf_roberta32(f, c, ids):
    # create_position_ids_from_input_ids: cumulative count of non-padding tokens, plus padding_idx
    pad = c["pad_token_id"]
    ids_t = torch.tensor(ids)
    mask = ids_t.ne(pad).int()
    positions = (torch.cumsum(mask, dim=0).type_as(mask) * mask).long() + pad
    renamed = {k.replace("roberta.", "bert.", 1): v for k, v in f.items()}
    renamed = {re.sub(r"LayerNorm\.weight$", "LayerNorm.gamma", re.sub(r"LayerNorm\.bias$", "LayerNorm.beta", k)): v
               for k, v in renamed.items()}
    shifted = dict(renamed)
    shifted["bert.embeddings.position_embeddings.weight"] = renamed["bert.embeddings.position_embeddings.weight"][positions]
    shifted["cls.predictions.transform.dense.weight"] = f["lm_head.dense.weight"]
    shifted["cls.predictions.transform.dense.bias"] = f["lm_head.dense.bias"]
    shifted["cls.predictions.transform.LayerNorm.gamma"] = f["lm_head.layer_norm.weight"]
    shifted["cls.predictions.transform.LayerNorm.beta"] = f["lm_head.layer_norm.bias"]
    shifted["cls.predictions.bias"] = f["lm_head.bias"]
    # position rows already gathered: BERT's module then reads rows 0..T-1 of the gathered table
    return hf_bert32(shifted, c, ids, [0] * len(ids))


def hf_distilbert32(f, c, ids):
    H, dim = c["n_heads"], c["dim"]
    dh = dim // H
    T = len(ids)
    e = "distilbert.embeddings."
    x = F.embedding(torch.tensor(ids), f[e + "word_embeddings.weight"]) + F.embedding(torch.arange(T), f[e + "position_embeddings.weight"])
    x = F.layer_norm(x, (dim,), f[e + "LayerNorm.weight"], f[e + "LayerNorm.bias"], 1e-12)
    for li in range(c["n_layers"]):
        p = f"distilbert.transformer.layer.{li}."
        a = p + "attention."
        shape = lambda t: t.view(T, H, dh).transpose(0, 1)  # noqa: E731
        q = shape(F.linear(x, f[a + "q_lin.weight"], f[a + "q_lin.bias"])) / math.sqrt(dh)
        k = shape(F.linear(x, f[a + "k_lin.weight"], f[a + "k_lin.bias"]))
        v = shape(F.linear(x, f[a + "v_lin.weight"], f[a + "v_lin.bias"]))
        ctx = torch.matmul(F.softmax(torch.matmul(q, k.transpose(1, 2)), dim=-1), v).transpose(0, 1).reshape(T, dim)
        sa = F.layer_norm(F.linear(ctx, f[a + "out_lin.weight"], f[a + "out_lin.bias"]) + x, (dim,),
                          f[p + "sa_layer_norm.weight"], f[p + "sa_layer_norm.bias"], 1e-12)
        ffn = F.linear(F.gelu(F.linear(sa, f[p + "ffn.lin1.weight"], f[p + "ffn.lin1.bias"])),
                       f[p + "ffn.lin2.weight"], f[p + "ffn.lin2.bias"])
        x = F.layer_norm(ffn + sa, (dim,), f[p + "output_layer_norm.weight"], f[p + "output_layer_norm.bias"], 1e-12)
    y = F.gelu(F.linear(x, f["vocab_transform.weight"], f["vocab_transform.bias"]))
    y = F.layer_norm(y, (dim,), f["vocab_layer_norm.weight"], f["vocab_layer_norm.bias"], 1e-12)
    return F.linear(y, f[e + "word_embeddings.weight"], f["vocab_projector.bias"])


# ---------------------------------------------------------------------------------------------
# Families

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def rounded(t):
    """Five decimal places (keeps the folders small): rounding error 5e-6, 20 times under the tightest
    test tolerance (1e-4)."""
    return [round(v, 5) + 0.0 for v in t.flatten().tolist()]


def greedy(m, prompt, count, limit):
    seq = list(prompt)
    margin = math.inf
    for _ in range(count):
        logits = forward64(m, seq)["logits"]
        top = torch.topk(logits[-1], 2)
        margin = min(margin, (top.values[0] - top.values[1]).item())
        seq.append(int(top.indices[0]))
    assert margin > 2e-2, f"greedy continuation too close to a tie ({margin})"  # 10x the 16-bit tolerance
    assert all(t < limit for t in seq), "greedy picked an id past the tokenizer"
    return {"prompt": list(prompt), "next": seq[len(prompt):], "minMargin": float("%.8g" % margin)}


def fill(m, tok, text):
    """Top-5 ids (float64) at each [MASK] of [CLS] text [SEP], with the smallest gap between neighbours
    in the top 6 (so a reader's rounding cannot reorder them)."""
    ids, tokens, types = tok.encode(text)
    logits = forward64(m, ids, types=types)["logits"]
    mask_id = tok.mask_id if isinstance(tok, RobertaBPE) else tok.vocab["[MASK]"]
    positions = [p for p, t in enumerate(ids) if t == mask_id]
    top, margin = [], math.inf
    for p in positions:
        v = torch.topk(logits[p], 6)
        top.append([int(t) for t in v.indices[:5]])
        margin = min(margin, (v.values[:-1] - v.values[1:]).min().item())
    assert margin > 2e-3, f"fill too close to a tie ({margin})"  # 20x the float32 tolerance
    return {"text": text, "ids": ids, "tokens": tokens, "positions": positions, "top": top,
            "minMargin": float("%.8g" % margin)}


class Family:
    """One checkpoint: its config, tensors, tokenizer, cases, and how to read it back."""

    def __init__(self, folder, arch, config, tensors, tok, cases, tokenizer_config, shards=None, fills=()):
        self.folder, self.arch, self.config, self.tensors, self.tok = folder, arch, config, tensors, tok
        self.cases, self.tokenizer_config, self.shards, self.fills = cases, tokenizer_config, shards, fills

    def canonical(self, w):
        if self.arch == "neox":
            return canonical_neox(w, self.config)
        if self.arch == "bert":
            return canonical_bert(w, self.config)
        if self.arch == "bert-model":
            return canonical_bert(as_bert_names(w), self.config, head=False)
        if self.arch == "roberta":
            return canonical_roberta(w, self.config)
        if self.arch == "distilbert":
            return canonical_distilbert(w, self.config)
        return canonical_llama_like(w, self.config, self.arch)

    def hf32(self, w, ids, types):
        f = {k: v.float() for k, v in w.items()}
        if self.arch == "neox":
            return hf_neox32(f, self.config, ids)
        if self.arch == "bert":
            return hf_bert32(f, self.config, ids, types)
        if self.arch == "bert-model":
            return hf_bert32({"bert." + k: v for k, v in f.items()}, self.config, ids, types, head=False)
        if self.arch == "roberta":
            return hf_roberta32(f, self.config, ids)
        if self.arch == "distilbert":
            return hf_distilbert32(f, self.config, ids)
        return hf_llama_like32(f, self.config, self.arch, ids)


def encode_case(tok, text, pair=None):
    if isinstance(tok, WordPiece):
        return tok.encode(text, pair)
    if isinstance(tok, RobertaBPE):
        return tok.encode(text)
    ids, tokens = tok.encode(text)
    assert tok.decode(ids) == text, (text, tok.decode(ids))
    return ids, tokens, [0] * len(ids)


def misreadings(fam, m):
    """Canonical models as a reader that missed this family's quirk would build them; each must move the
    logits far past every tolerance, or the fixture would not test the quirk."""
    c, out = fam.config, {}
    swap = lambda **kw: dict(m, **kw)  # noqa: E731
    if c.get("rope_scaling"):
        out["rope_scaling ignored"] = swap(rope=rope_freqs64(c["rope_theta"], m["head_dim"], None))
    if 1 < m["kv_heads"] < m["heads"]:
        # key-value head g read by query heads g, g + KV, ... instead of the consecutive block
        perm = [(h % m["kv_heads"]) * (m["heads"] // m["kv_heads"]) + h // m["kv_heads"] for h in range(m["heads"])]
        out["query heads grouped round-robin"] = swap(layers=[dict(L, wq=L["wq"].view(-1, m["heads"], m["head_dim"])[:, perm].reshape(L["wq"].shape),
                                                                     bq=L["bq"].view(m["heads"], -1)[perm].reshape(-1)) for L in m["layers"]])
    if any(0 < L["window"] < MAX_POS for L in m["layers"]):
        out["sliding window ignored"] = swap(layers=[dict(L, window=0) for L in m["layers"]])
    if fam.arch == "qwen2":
        out["sliding_window applied though use_sliding_window is false"] = swap(
            layers=[dict(L, window=c["sliding_window"]) for L in m["layers"]])
    if fam.arch == "neox":
        out["rotary over the whole head"] = swap(rope=rope_freqs64(c["rotary_emb_base"], m["head_dim"], None))
        out["sequential residual"] = swap(parallel=False)
    if fam.arch == "gemma":
        out["norm scale w, not 1 + w"] = swap(
            layers=[dict(L, norm1=dict(L["norm1"], kind="rms"), norm2=dict(L["norm2"], kind="rms")) for L in m["layers"]],
            final_norm=dict(m["final_norm"], kind="rms"))
        out["embeddings not scaled"] = swap(embed_scale=1.0)
    if fam.arch in ("bert", "bert-model"):
        out["token types ignored"] = swap(type_embed=None)
    if fam.arch == "roberta":
        out["positions from 0, not padding_idx + 1"] = swap(pos_offset=0)
    return out


def output64(o):
    """What a model gives: its logits, or (no head: BertModel) the last hidden state."""
    return o["resid"] if o["logits"] is None else o["logits"]


def expected_for(fam, stored):
    m = fam.canonical(stored)
    headless = m["mlm"] is None and not m["causal"]
    for what, wrong in misreadings(fam, m).items():
        for name, text, pair, _, _ in fam.cases:
            ids, _, types = encode_case(fam.tok, text, pair)
            if what != "token types ignored" or pair is not None:
                break
        change = (output64(forward64(wrong, ids, types=types)) - output64(forward64(m, ids, types=types))).abs().max()
        print(f"  {fam.folder}: {what} moves the {'hidden state' if headless else 'logits'} by {change.item():.3f}")
        assert change > 0.02, f"{fam.folder}: {what} changes the logits by only {change}"
    tok, c = fam.tok, fam.config
    V = c["vocab_size"]
    worst = 0.0
    cases = []
    for name, text, pair, ablate, with_lens in fam.cases:
        ids, tokens, types = encode_case(tok, text, pair)
        assert len(ids) <= MAX_POS
        out = forward64(m, ids, [tuple(a) for a in ablate], types)
        y = output64(out)
        assert y.shape == (len(ids), c["hidden_size"] if headless else V)
        if not ablate:
            diff = (fam.hf32(stored, ids, types).double() - y).abs().max().item()
            assert diff < 1e-4, f"{fam.folder} {name}: float32 Hugging Face-style forward differs by {diff}"
            worst = max(worst, diff)
        else:
            change = (output64(forward64(m, ids, types=types)) - y).abs().max().item()
            assert change > 0.05, f"ablation changes the output by only {change}"
        case = {"name": name, "text": text, "ids": ids, "tokens": tokens, "ablate": ablate,
                "hidden" if headless else "logits": rounded(y), "attention": rounded(out["attention"])}
        if pair is not None:
            case["pair"] = pair
        if not m["causal"]:
            case["tokenTypes"] = types
        if with_lens:
            case["lens"] = rounded(out["lens"])
        cases.append(case)
    g = torch.Generator().manual_seed(SEED + 1)
    first = tok.bos_in_ids if tok.bos_in_ids is not None else tok.eot_id
    special = set(getattr(tok, "specials", [])) | set(BERT_SPECIALS) | {mp.EOT, "<mask>"}
    pool = [i for i in range(tok.size) if tok.id_to_token[i] not in special]
    r = [pool[k] for k in torch.randint(0, len(pool), (HEAD_SCORE_N,), generator=g).tolist()]
    seq = [first] + r + r
    attention = forward64(m, seq)["attention"]
    H = m["heads"]
    exp = {
        "shapes": {"layers": len(m["layers"]), "heads": H, "kvHeads": m["kv_heads"], "headDim": m["head_dim"],
                   "vocab": V, "tokenizerVocab": tok.size, "kind": "decoder" if m["causal"] else "encoder"},
        "cases": cases,
    }
    if headless:
        exp["shapes"]["hidden"] = c["hidden_size"]
    if m["causal"]:
        exp["greedy"] = greedy(m, cases[0]["ids"], GREEDY_TOKENS, tok.size)
    elif not headless:
        exp["fill"] = [fill(m, tok, t) for t in fam.fills]
    exp["headScores"] = {"n": HEAD_SCORE_N, "sequence": seq, "scores": mp.head_scores(attention, HEAD_SCORE_N),
                         "attention": rounded(attention)}
    assert attention.shape[1] == H
    return exp, worst


def write_family(fam):
    out = os.path.join(HERE, fam.folder)
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        os.remove(os.path.join(out, f))
    mp.write_json(os.path.join(out, "config.json"), fam.config)
    mp.write_json(os.path.join(out, "tokenizer.json"), fam.tok.tokenizer_json(), compact=True)
    mp.write_json(os.path.join(out, "tokenizer_config.json"), fam.tokenizer_config)
    stored = {}
    if fam.shards is None:
        path = os.path.join(out, "model.safetensors")
        mp.write_safetensors(path, fam.tensors, {"format": "pt"})
        stored.update(mp.read_safetensors(path))
    else:
        names = [f"model-{k + 1:05d}-of-{len(fam.shards):05d}.safetensors" for k in range(len(fam.shards))]
        weight_map, total = {}, 0
        for fname, part in zip(names, fam.shards):
            total += mp.write_safetensors(os.path.join(out, fname), part, {"format": "pt"})
            for n, _ in part:
                weight_map[n] = fname
            stored.update(mp.read_safetensors(os.path.join(out, fname)))
        mp.write_json(os.path.join(out, "model.safetensors.index.json"),
                      {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))})
    for n, t in fam.tensors:
        assert torch.equal(stored[n], t.double()), f"{fam.folder}: {n} did not read back"
    params = {k: v for k, v in stored.items() if not k.endswith("rotary_emb.inv_freq")}
    exp, worst = expected_for(fam, params)
    mp.write_json(os.path.join(out, "expected.json"), exp, compact=True)
    size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    print(f"{fam.folder}: {len(fam.tensors)} tensors, {size / 1024:.0f} KiB, "
          f"float64 vs float32 Hugging Face-style max |diff| {worst:.2e}")


def pad_rows(tensors, used):
    """Rows past the tokenizer's last id scaled down, as in a trained model no text ever reaches them
    (they still count: logits cover all vocab_size rows)."""
    out = []
    for n, t in tensors:
        if n.endswith(("embed_tokens.weight", "embed_in.weight", "embed_out.weight", "lm_head.weight")):
            t = t.clone()
            t[used:] *= 0.05
        out.append((n, t))
    return out


def cast(tensors, dtype):
    return [(n, t.to(dtype)) for n, t in tensors]


def base_config(arch_name, model_type, V, dtype, **kw):
    c = {"architectures": [arch_name], "model_type": model_type, "hidden_size": D, "intermediate_size": FF,
         "num_hidden_layers": N_LAYER, "max_position_embeddings": MAX_POS, "initializer_range": 0.02,
         "torch_dtype": dtype, "transformers_version": "4.46.0", "use_cache": True, "vocab_size": V}
    c.update(kw)
    return dict(sorted(c.items()))


EOT_CASE = ("special-digits", mp.EOT + "Virat hit 148!", None, [], False)
FALLBACK_CASE = ("byte-fallback", "Virat hit \U0001F3CF!", None, [], False)
SHORT = "Virat hit the ball."


def decoder_cases(third, lens=False, ablate=((0, 1), (1, 2))):
    """The logit lens only in llama-gqa (it is a property of the engine, not of a family)."""
    return [("course", COURSE, None, [], lens), ("short-ablated", SHORT, None, [list(a) for a in ablate], False), third]


def families():
    bl = ByteLevel(mp.train_bpe(TRAINING_TEXT, 64))
    sp = SentencePieceBPE(TRAINING_TEXT, 48, ["<unk>", "<s>", "</s>"], "<s>", "</s>", "<unk>", prefix=True)
    sp_cfg = {"add_bos_token": True, "add_eos_token": False, "bos_token": "<s>", "eos_token": "</s>",
              "unk_token": "<unk>", "legacy": False, "model_max_length": MAX_POS, "tokenizer_class": "LlamaTokenizer"}
    bl_cfg = {"add_prefix_space": False, "bos_token": mp.EOT, "eos_token": mp.EOT, "unk_token": mp.EOT,
              "model_max_length": MAX_POS, "tokenizer_class": "GPT2Tokenizer"}
    out = {}

    # 1. SmolLM2-like: grouped-query attention, llama3 rope scaling, tied, byte-level BPE.
    V = bl.size
    scaling = {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
               "original_max_position_embeddings": 64, "rope_type": "llama3"}
    llama_cfg = lambda dt: base_config(  # noqa: E731
        "LlamaForCausalLM", "llama", V, dt, attention_bias=False, attention_dropout=0.0, bos_token_id=bl.eot_id,
        eos_token_id=bl.eot_id, head_dim=8, hidden_act="silu", mlp_bias=False, num_attention_heads=4,
        num_key_value_heads=2, pretraining_tp=1, rms_norm_eps=1e-5, rope_scaling=scaling, rope_theta=10000.0,
        tie_word_embeddings=True)
    t = llama_like_state(Draw(SEED), V, 4, 2, 8, "llama", tied=True)
    out["llama-gqa"] = Family("llama-gqa", "llama", llama_cfg("float32"), t, bl, decoder_cases(EOT_CASE, lens=True),
                              bl_cfg)

    # 2. TinyLlama / Llama-2-like: bfloat16, separate lm_head, SentencePiece BPE with byte fallback.
    V = sp.size
    c = base_config("LlamaForCausalLM", "llama", V, "bfloat16", attention_bias=False, attention_dropout=0.0,
                    bos_token_id=1, eos_token_id=2, hidden_act="silu", mlp_bias=False, num_attention_heads=4,
                    num_key_value_heads=4, pretraining_tp=1, rms_norm_eps=1e-5, rope_scaling=None,
                    rope_theta=10000.0, tie_word_embeddings=False)
    t = cast(llama_like_state(Draw(SEED + 2), V, 4, 4, 8, "llama", tied=False), torch.bfloat16)
    out["llama-sp-bf16"] = Family("llama-sp-bf16", "llama", c, t, sp, decoder_cases(FALLBACK_CASE), sp_cfg)
    cut = next(k for k, (n, _) in enumerate(t) if n.startswith("model.layers.1."))
    out["llama-sp-bf16-sharded"] = Family("llama-sp-bf16-sharded", "llama", c, t, sp, decoder_cases(FALLBACK_CASE),
                                          sp_cfg, shards=[t[:cut], t[cut:]])

    # 3. Qwen2: q/k/v biases, vocab_size padded past the tokenizer, tied, sliding window switched off.
    qt = ByteLevel(bl.merges, ["<|im_start|>", "<|im_end|>"])
    V = 384
    assert V > qt.size
    c = base_config("Qwen2ForCausalLM", "qwen2", V, "bfloat16", attention_dropout=0.0, bos_token_id=qt.eot_id,
                    eos_token_id=qt.eot_id, hidden_act="silu", max_window_layers=1, num_attention_heads=4,
                    num_key_value_heads=2, rms_norm_eps=1e-6, rope_scaling=None, rope_theta=1000000.0,
                    sliding_window=4, tie_word_embeddings=True, use_sliding_window=False)
    t = cast(pad_rows(llama_like_state(Draw(SEED + 13), V, 4, 2, 8, "qwen2", tied=True), qt.size), torch.bfloat16)
    qcfg = dict(bl_cfg, tokenizer_class="Qwen2Tokenizer", bos_token=None, unk_token=None, pad_token=mp.EOT)
    out["qwen2"] = Family("qwen2", "qwen2", c, t, qt, decoder_cases(EOT_CASE), qcfg)

    # 4. Mistral: sliding window shorter than every text.
    V = sp.size
    c = base_config("MistralForCausalLM", "mistral", V, "bfloat16", attention_dropout=0.0, bos_token_id=1,
                    eos_token_id=2, head_dim=8, hidden_act="silu", num_attention_heads=4, num_key_value_heads=2,
                    rms_norm_eps=1e-5, rope_theta=10000.0, sliding_window=4, tie_word_embeddings=False)
    t = cast(llama_like_state(Draw(SEED + 14), V, 4, 2, 8, "mistral", tied=False), torch.bfloat16)
    out["mistral-window"] = Family("mistral-window", "mistral", c, t, sp, decoder_cases(FALLBACK_CASE), sp_cfg)

    # 5. Pythia: parallel residual, partial rotary, fused per-head qkv, padded vocab; two revisions.
    V = 352
    assert V > bl.size
    c = base_config("GPTNeoXForCausalLM", "gpt_neox", V, "float16", attention_bias=True, attention_dropout=0.0,
                    bos_token_id=bl.eot_id, eos_token_id=bl.eot_id, hidden_act="gelu", hidden_dropout=0.0,
                    layer_norm_eps=1e-5, num_attention_heads=2, rope_scaling=None, rotary_emb_base=10000,
                    rotary_pct=0.25, tie_word_embeddings=False, use_parallel_residual=True)
    ncfg = dict(bl_cfg, tokenizer_class="GPTNeoXTokenizer")
    out["pythia"] = Family("pythia", "neox", c, cast(pad_rows(neox_state(Draw(SEED + 5), V, 2), bl.size), torch.float16), bl,
                           decoder_cases(EOT_CASE, ablate=((0, 1), (1, 0))), ncfg)
    out["pythia-step1000"] = Family("pythia-step1000", "neox", c, cast(pad_rows(neox_state(Draw(SEED + 6), V, 2), bl.size), torch.float16),
                                    bl, decoder_cases(EOT_CASE, ablate=((0, 1), (1, 0))), ncfg)

    # 6. Phi-3: fused qkv_proj and gate_up_proj.
    V = sp.size
    c = base_config("Phi3ForCausalLM", "phi3", V, "bfloat16", attention_bias=False, attention_dropout=0.0,
                    bos_token_id=1, eos_token_id=2, hidden_act="silu", num_attention_heads=4, num_key_value_heads=2,
                    original_max_position_embeddings=MAX_POS, rms_norm_eps=1e-5, rope_scaling=None,
                    rope_theta=10000.0, sliding_window=2047, tie_word_embeddings=False)
    t = cast(llama_like_state(Draw(SEED + 17), V, 4, 2, 8, "phi3", tied=False), torch.bfloat16)
    out["phi3"] = Family("phi3", "phi3", c, t, sp, decoder_cases(FALLBACK_CASE), sp_cfg)

    # 7. Gemma: (1 + w) RMSNorm, sqrt(hidden) embedding scale, head_dim 16 != 32 / 4, GeGLU (tanh), tied.
    gt = SentencePieceBPE(TRAINING_TEXT, 48, ["<pad>", "<eos>", "<bos>", "<unk>"], "<bos>", "<eos>", "<unk>",
                          prefix=False)
    V = gt.size
    c = base_config("GemmaForCausalLM", "gemma", V, "bfloat16", attention_bias=False, attention_dropout=0.0,
                    bos_token_id=2, eos_token_id=1, pad_token_id=0, head_dim=16, hidden_act="gelu_pytorch_tanh",
                    hidden_activation="gelu_pytorch_tanh", num_attention_heads=4, num_key_value_heads=1,
                    rms_norm_eps=1e-6, rope_scaling=None, rope_theta=10000.0, tie_word_embeddings=True)
    t = cast(llama_like_state(Draw(SEED + 8), V, 4, 1, 16, "gemma", tied=True), torch.bfloat16)
    gcfg = {"add_bos_token": True, "add_eos_token": False, "bos_token": "<bos>", "eos_token": "<eos>",
            "pad_token": "<pad>", "unk_token": "<unk>", "model_max_length": MAX_POS, "tokenizer_class": "GemmaTokenizer"}
    out["gemma"] = Family("gemma", "gemma", c, t, gt, decoder_cases(FALLBACK_CASE), gcfg)

    # 8. BERT (bert-base-uncased's names and tokenizer): masked-LM logits, token types, fill.
    wp = WordPiece(TRAINING_TEXT)
    V = wp.size
    c = base_config("BertForMaskedLM", "bert", V, "float32", attention_probs_dropout_prob=0.1,
                    gradient_checkpointing=False, hidden_act="gelu", hidden_dropout_prob=0.1, layer_norm_eps=1e-12,
                    num_attention_heads=4, pad_token_id=0, position_embedding_type="absolute", type_vocab_size=2)
    bcfg = {"do_lower_case": True, "model_max_length": 512, "tokenizer_class": "BertTokenizer"}
    cases = [("course", COURSE, None, [], False), ("short-ablated", SHORT, None, [[0, 1], [1, 2]], False),
             ("pair", "Virat hit the ball.", "The batters left the Café.", [], False)]
    fills = ["Virat hit the [MASK] because it was full and outside off.",
             "The [MASK] was full and the batter hit it through the [MASK]."]
    out["bert"] = Family("bert", "bert", c, bert_state(Draw(SEED + 9), V), wp, cases, bcfg, fills=fills)
    # BertModel (sentence-transformers, fine-tunes): no head; names without bert., LayerNorm.weight / .bias.
    c = base_config("BertModel", "bert", V, "float32", attention_probs_dropout_prob=0.1,
                    hidden_act="gelu", hidden_dropout_prob=0.1, layer_norm_eps=1e-12,
                    num_attention_heads=4, pad_token_id=0, position_embedding_type="absolute", type_vocab_size=2)
    out["bert-model"] = Family("bert-model", "bert-model", c, bert_model_state(Draw(SEED + 19), V), wp, cases, bcfg)

    # 9. RoBERTa: positions from padding_idx + 1, byte-level BPE with <mask>; DistilBERT: its own names.
    rt = RobertaBPE(bl.merges)
    V = rt.size
    c = base_config("RobertaForMaskedLM", "roberta", V, "float16", attention_probs_dropout_prob=0.1, bos_token_id=0,
                    eos_token_id=2, hidden_act="gelu", hidden_dropout_prob=0.1, layer_norm_eps=1e-5,
                    max_position_embeddings=MAX_POS + 2, num_attention_heads=4, pad_token_id=1,
                    position_embedding_type="absolute", type_vocab_size=1)
    rcfg = {"add_prefix_space": False, "bos_token": "<s>", "cls_token": "<s>", "eos_token": "</s>",
            "mask_token": "<mask>", "pad_token": "<pad>", "sep_token": "</s>", "unk_token": "<unk>",
            "model_max_length": MAX_POS, "tokenizer_class": "RobertaTokenizer"}
    rfills = ["Virat hit the <mask> because it was full and outside off.",
              "The ball was full and the batter hit it through the <mask>."]
    out["roberta"] = Family("roberta", "roberta", c, cast(roberta_state(Draw(SEED + 10), V), torch.float16), rt,
                            cases[:2], rcfg, fills=rfills)
    c = {"activation": "gelu", "architectures": ["DistilBertForMaskedLM"], "attention_dropout": 0.1, "dim": D,
         "dropout": 0.1, "hidden_dim": FF, "initializer_range": 0.02, "max_position_embeddings": MAX_POS,
         "model_type": "distilbert", "n_heads": 4, "n_layers": N_LAYER, "pad_token_id": 0, "qa_dropout": 0.1,
         "seq_classif_dropout": 0.2, "sinusoidal_pos_embds": False, "tie_weights_": True, "torch_dtype": "float16",
         "transformers_version": "4.46.0", "vocab_size": wp.size}
    dcfg = dict(bcfg, tokenizer_class="DistilBertTokenizer")
    out["distilbert"] = Family("distilbert", "distilbert", c, cast(distilbert_state(Draw(SEED + 11), wp.size), torch.float16), wp,
                               cases[:2], dcfg, fills=fills)
    return out


def main():
    fams = families()
    wanted = sys.argv[1:] or list(fams)
    for name in wanted:
        write_family(fams[name])


if __name__ == "__main__":
    main()
