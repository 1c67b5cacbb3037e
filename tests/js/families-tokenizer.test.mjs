// The family fixtures' tokenizer.json against @huggingface/tokenizers: every case text in each folder's
// expected.json (ids written by make_families.py's own encoders: byte-level BPE, SentencePiece-style BPE
// with byte fallback, WordPiece) must encode to the same ids with the npm library and decode back.
// Regenerate the fixtures with `/usr/bin/python3 tests/golden/families/make_families.py`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { Tokenizer } from '@huggingface/tokenizers';

const root = new URL('../golden/families/', import.meta.url);
const folders = readdirSync(root, { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(new URL(`${e.name}/expected.json`, root)))
  .map((e) => e.name)
  .sort();
const readJson = (folder, file) => JSON.parse(readFileSync(new URL(`${folder}/${file}`, root), 'utf8'));

// What WordPiece's decoder gives back for an uncased text: accents stripped, lower case.
const uncased = (text) => text.normalize('NFD').replace(/\p{Mn}/gu, '').toLowerCase();

test('the family fixtures are all there', () => {
  for (const name of ['llama-gqa', 'llama-sp-bf16', 'llama-sp-bf16-sharded', 'qwen2',
    'mistral-window', 'pythia', 'pythia-step1000', 'phi3', 'gemma', 'bert', 'roberta', 'distilbert']) {
    assert.ok(folders.includes(name), `tests/golden/families/${name}/expected.json is missing`);
  }
});

for (const folder of folders) {
  test(`${folder}: @huggingface/tokenizers agrees with expected.json`, () => {
    const json = readJson(folder, 'tokenizer.json');
    const config = readJson(folder, 'config.json');
    const expected = readJson(folder, 'expected.json');
    const tokenizer = new Tokenizer(json, readJson(folder, 'tokenizer_config.json'));
    const kind = json.model.type === 'WordPiece' ? 'wordpiece'
      : json.model.byte_fallback ? 'sentencepiece'
        : json.post_processor.type === 'RobertaProcessing' ? 'roberta' : 'bytelevel';
    const size = tokenizer.get_vocab(true).size;
    assert.equal(size, expected.shapes.tokenizerVocab);
    assert.ok(size <= config.vocab_size, 'config vocab_size covers the tokenizer (it may be padded past it)');
    assert.equal(expected.shapes.vocab, config.vocab_size);
    assert.ok(expected.cases.length >= (expected.shapes.kind === 'encoder' ? 2 : 3));
    for (const c of expected.cases) {
      const got = c.pair === undefined
        ? tokenizer.encode(c.text, { return_token_type_ids: true })
        : tokenizer.encode(c.text, { text_pair: c.pair, return_token_type_ids: true });
      assert.deepEqual(got.ids, c.ids, `${c.name}: ids of ${JSON.stringify(c.text)}`);
      assert.deepEqual(got.tokens, c.tokens, `${c.name}: tokens`);
      assert.ok(c.ids.every((id) => Number.isInteger(id) && id >= 0 && id < size));
      // Byte-level texts hold their special token; the others' <s> / [CLS] come from the post-processor.
      const decoded = tokenizer.decode(c.ids, { skip_special_tokens: kind !== 'bytelevel' });
      if (kind === 'wordpiece') {
        assert.deepEqual(got.token_type_ids, c.tokenTypes, `${c.name}: token types`);
        if (c.pair === undefined) assert.equal(decoded, uncased(c.text), `${c.name}: decode`);
      } else {
        assert.equal(decoded, c.text, `${c.name}: decode`);
      }
      if (kind === 'bytelevel') {
        assert.deepEqual(tokenizer.encode(c.text, { add_special_tokens: false }).ids, c.ids, 'nothing added');
      }
    }
    if (kind === 'sentencepiece') {
      // The fallback case holds characters outside the vocabulary: they must come out as <0xNN> bytes.
      const fb = expected.cases.find((c) => c.name === 'byte-fallback');
      assert.ok(fb.tokens.includes('<0xF0>') && fb.tokens.includes('<0x9F>'), 'the emoji falls back to bytes');
      assert.equal(fb.ids[0], config.bos_token_id, 'the post-processor puts bos first');
    }
    if (kind === 'wordpiece') {
      assert.ok(expected.cases.some((c) => c.tokens.some((t) => t.startsWith('##'))), '## continuations');
    }
    if (expected.shapes.kind === 'encoder' && expected.shapes.hidden === undefined) {  // bert-model has no head to fill with
      const mask = tokenizer.token_to_id(readJson(folder, 'tokenizer_config.json').mask_token ?? '[MASK]');
      assert.ok(expected.fill.length >= 2);
      for (const f of expected.fill) {
        assert.deepEqual(tokenizer.encode(f.text).ids, f.ids, `fill ${JSON.stringify(f.text)}`);
        assert.deepEqual(f.positions, f.ids.flatMap((id, i) => (id === mask ? [i] : [])));
        assert.ok(f.positions.length >= 1 && f.top.every((t) => t.length === 5));
      }
    }
    const course = expected.cases.find((c) => c.name === 'course');
    assert.ok(course.ids.length < course.text.length / 2.5, `course sentence: ${course.ids.length} tokens (merges used)`);
  });
}
