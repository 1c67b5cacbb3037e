// The syntax-heads check (issue 35; web/lib/api/syntax.js): the grammar's sentences and dependencies through
// the module, and the scoring against answers known by construction — a fake model whose heads attend where
// the test puts them (to each dependent's true head word, to the previous word), with words split into
// several tokens and special tokens around the text — then real checkpoints' tokenizers (byte-level BPE,
// SentencePiece-style, WordPiece) splitting every grammar sentence at its words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHeadlab } from '../../web/lib/headlab.js';
import { SYNTAX_RELATIONS, wordSpans } from '../../web/lib/api/syntax.js';
import { fixtureObjects, toArrayBuffer } from './pretrained-helpers.mjs';

const lab = await createHeadlab();
const DETERMINERS = new Set(['the', 'a', 'this', 'two', 'these', 'some']);
const PRONOUNS = new Set(['he', 'she', 'it', 'they']);

test('syntaxSentences: the grammar\'s words and dependencies, the same for the same seed, errors naming the argument', async () => {
  const a = await lab.findings.syntaxSentences({ n: 30, seed: 4 });
  const b = await lab.findings.syntaxSentences({ n: 30, seed: 4 });
  const c = await lab.findings.syntaxSentences({ n: 30, seed: 5 });
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
  assert.equal(a.length, 30);
  const count = Object.fromEntries(SYNTAX_RELATIONS.map((r) => [r, 0]));
  for (const s of a) {
    assert.equal(s.text, s.words.join(' '));
    assert.equal(s.words.at(-1), '.');
    assert.equal(s.words.indexOf('.'), s.words.length - 1, 'one sentence each');
    assert.ok(!s.words.includes('<s>') && !s.words.includes('<pad>'));
    for (const arc of s.arcs) {
      count[arc.relation]++;
      assert.ok(arc.dependent >= 0 && arc.dependent < s.words.length && arc.head >= 0 && arc.head < s.words.length);
      if (arc.relation === 'determiner') {
        assert.ok(DETERMINERS.has(s.words[arc.dependent]), `${s.words[arc.dependent]} is a determiner`);
        assert.ok(arc.head > arc.dependent);
      }
      if (arc.relation === 'coreference') assert.ok(PRONOUNS.has(s.words[arc.dependent]));
    }
  }
  for (const r of SYNTAX_RELATIONS) assert.ok(count[r] > 0, `some ${r} arcs in 30 sentences`);
  await assert.rejects(lab.findings.syntaxSentences({ n: 0 }), (e) => e instanceof RangeError && /syntaxSentences: n/.test(e.message));
  await assert.rejects(lab.findings.syntaxSentences({ n: 2, seeds: 1 }), (e) => e instanceof TypeError && /seeds/.test(e.message));
  await assert.rejects(lab.findings.syntaxSentences(), /expected an options object/);
});

/**
 * A fake model: [CLS] before and [SEP] after the text; a word of more than 4 letters is two tokens.
 * Layer 0 head 0 attends from every token of a dependent to the first token of its head word; head 1 from
 * every token to the previous word's tokens (evenly); layer 1's heads attend to [CLS] only.
 */
function fakeModel(sentences) {
  const vocab = new Map([['[CLS]', 0], ['[SEP]', 1]]);
  const id = (t) => { if (!vocab.has(t)) vocab.set(t, vocab.size); return vocab.get(t); };
  const pieces = (w) => (w.length > 4 ? [w.slice(0, 3), `##${w.slice(3)}`] : [w]);
  const texts = new Map();  // a tokenization's ids → its text, so run() takes either, as a model's does
  const tokenize = (text) => {
    const words = text.split(' ').filter(Boolean);
    const ids = Int32Array.from([0, ...words.flatMap((w) => pieces(w).map(id)), 1]);
    texts.set(ids.join(','), text);
    return { ids };
  };
  const arcsOf = new Map(sentences.map((s) => [s.text, s.arcs]));
  const L = 2, H = 2;
  return {
    info: { numLayers: L, numHeads: H },
    tokenize,
    async run(textOrIds, { attention }) {
      assert.equal(attention, true);
      const text = typeof textOrIds === 'string' ? textOrIds : texts.get(Array.from(textOrIds).join(','));
      const words = text.split(' ');
      const ids = tokenize(text).ids;
      const T = ids.length;
      const first = [];  // each word's first token
      let t = 1;
      for (const w of words) { first.push(t); t += pieces(w).length; }
      const wordOf = (q) => { let k = -1; first.forEach((f, i) => { if (q >= f) k = i; }); return q === 0 || q === T - 1 ? -1 : k; };
      const A = new Float32Array(L * H * T * T);
      const set = (l, h, q, k, v) => { A[((l * H + h) * T + q) * T + k] += v; };
      const headOf = new Map(arcsOf.get(text).map((a) => [a.dependent, a.head]));
      for (let q = 0; q < T; q++) {
        const w = wordOf(q);
        if (w >= 0 && headOf.has(w)) set(0, 0, q, first[headOf.get(w)], 1); else set(0, 0, q, 0, 1);
        if (w >= 1) {
          const n = pieces(words[w - 1]).length;
          for (let i = 0; i < n; i++) set(0, 1, q, first[w - 1] + i, 1 / n);
        } else set(0, 1, q, 0, 1);
        set(1, 0, q, 0, 1);
        set(1, 1, q, 0, 1);
      }
      return { ids, attention: A };
    },
  };
}

test('syntaxHeads: a head that attends to the true head word finds every arc, the previous-word head scores the offset −1 share', async () => {
  const sentences = await lab.findings.syntaxSentences({ n: 40, seed: 1 });
  const progress = [];
  const r = await lab.findings.syntaxHeads({ model: fakeModel(sentences), sentences, onProgress: (p) => progress.push(p.done) });
  assert.equal(r.sentences, 40);
  assert.equal(r.skipped, 0);
  assert.deepEqual(r.shape, [2, 2]);
  assert.deepEqual(progress, [...Array(40).keys()].map((i) => i + 1));
  for (const rel of r.relations) {
    // The answers, counted here from the arcs alone.
    const arcs = sentences.flatMap((s) => s.arcs.filter((a) => a.relation === rel.relation));
    // A word that depends on two words (a subject of two verbs) can point at one only: the fake head picks the last arc's.
    const truth = sentences.flatMap((s) => {
      const headOf = new Map(s.arcs.map((a) => [a.dependent, a.head]));
      return s.arcs.filter((a) => a.relation === rel.relation && headOf.get(a.dependent) === a.head);
    }).length / arcs.length;
    assert.ok(truth > 0.9, `${rel.relation}: most words depend on one word`);
    const previous = arcs.filter((a) => a.head === a.dependent - 1).length / arcs.length;
    const offsets = new Map();
    for (const a of arcs) offsets.set(a.head - a.dependent, (offsets.get(a.head - a.dependent) ?? 0) + 1);
    const bestShare = Math.max(...offsets.values()) / arcs.length;
    assert.equal(rel.arcs, arcs.length);
    assert.ok(Math.abs(rel.accuracy[0] - truth) < 1e-12, `${rel.relation}: the truth head ${rel.accuracy[0]} vs ${truth}`);
    assert.ok(Math.abs(rel.accuracy[1] - previous) < 1e-12, `${rel.relation}: previous-word head ${rel.accuracy[1]} vs ${previous}`);
    assert.deepEqual([rel.best.layer, rel.best.head, rel.best.accuracy], [0, 0, rel.accuracy[0]]);
    assert.ok(Math.abs(rel.baseline.accuracy - bestShare) < 1e-12);
    assert.equal(offsets.get(rel.baseline.offset) / arcs.length, rel.baseline.accuracy);
  }
  assert.deepEqual(r.relations.map((x) => x.relation), SYNTAX_RELATIONS);
  await assert.rejects(lab.findings.syntaxHeads({ model: {}, sentences }), /model must be a model from lab.loadPretrained/);
  await assert.rejects(lab.findings.syntaxHeads({ model: fakeModel(sentences), sentences: [] }), /sentences must be a non-empty array/);
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(lab.findings.syntaxHeads({ model: fakeModel(sentences), sentences, signal: ac.signal }), (e) => e.name === 'AbortError');
});

test('real tokenizers split the grammar\'s sentences at their words: byte-level BPE, SentencePiece-style with <s>, WordPiece with [CLS] … [SEP]', async () => {
  const sentences = await lab.findings.syntaxSentences({ n: 12, seed: 2 });
  const family = (name) => {
    const dir = new URL(`../golden/families/${name}/`, import.meta.url);
    const json = (f) => JSON.parse(readFileSync(new URL(f, dir), 'utf8'));
    return { config: json('config.json'), tokenizer: json('tokenizer.json'), weights: toArrayBuffer(readFileSync(new URL('model.safetensors', dir))) };
  };
  for (const [name, source] of [['gpt2-f32', fixtureObjects('gpt2-f32')], ['llama-gqa', family('llama-gqa')], ['bert', family('bert')]]) {
    const model = await lab.loadPretrained(source);
    try {
      for (const s of sentences) {
        const ids = Array.from(model.tokenize(s.text).ids);
        const spans = wordSpans(model, s.words, ids);
        assert.ok(spans, `${name}: ${s.text}`);
        // The spans tile the text's tokens: consecutive, none empty, specials outside.
        for (let k = 1; k < spans.length; k++) assert.equal(spans[k][0], spans[k - 1][1]);
        const special = new Set(model.tokenize('').ids);
        for (let t = 0; t < ids.length; t++) {
          const inside = t >= spans[0][0] && t < spans.at(-1)[1];
          if (!inside) assert.ok(special.has(ids[t]), `${name}: token ${t} outside the words is special`);
        }
      }
      const r = await lab.findings.syntaxHeads({ model, sentences });
      // The fixtures' context is short (32 positions) and their vocabularies small: long sentences are skipped, counted.
      const tooLong = sentences.filter((s) => model.tokenize(s.text).ids.length > model.info.contextLength).length;
      assert.equal(r.skipped, tooLong, name);
      assert.ok(r.sentences >= 2, `${name}: ${r.sentences} sentences scored`);
      for (const rel of r.relations) assert.ok(rel.accuracy.every((x) => x >= 0 && x <= 1));
    } finally {
      model.dispose();
    }
  }
});
