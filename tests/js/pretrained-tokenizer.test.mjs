// The pretrained fixtures' tokenizer.json against @huggingface/tokenizers: every case text in each
// fixture's expected.json (ids written by make_pretrained.py's own BPE encoder) must encode to the same
// ids with the npm library and decode back to the text.
// Regenerate the fixtures with `/usr/bin/python3 tests/golden/pretrained/make_pretrained.py`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { Tokenizer } from '@huggingface/tokenizers';

const root = new URL('../golden/pretrained/', import.meta.url);
const folders = readdirSync(root, { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(new URL(`${e.name}/expected.json`, root)))
  .map((e) => e.name)
  .sort();
const readJson = (folder, file) => JSON.parse(readFileSync(new URL(`${folder}/${file}`, root), 'utf8'));

test('the pretrained fixtures are all there', () => {
  for (const name of ['gpt2-f32', 'gpt2-noprefix-f32', 'gpt2-f16', 'gpt2-bf16', 'gpt2-sharded', 'neo-f32', 'neo-bf16']) {
    assert.ok(folders.includes(name), `tests/golden/pretrained/${name}/expected.json is missing`);
  }
});

for (const folder of folders) {
  test(`${folder}: @huggingface/tokenizers agrees with expected.json`, () => {
    const json = readJson(folder, 'tokenizer.json');
    const config = readJson(folder, 'config.json');
    const expected = readJson(folder, 'expected.json');
    const tokenizer = new Tokenizer(json, {});
    const size = Object.keys(json.model.vocab).length + json.added_tokens.length;
    assert.equal(size, config.vocab_size, 'tokenizer size = config vocab_size');
    assert.equal(tokenizer.token_to_id('<|endoftext|>'), config.bos_token_id, 'bos is <|endoftext|>');
    assert.equal(config.eos_token_id, config.bos_token_id);
    assert.ok(expected.cases.length >= 3);
    for (const c of expected.cases) {
      const got = tokenizer.encode(c.text, { add_special_tokens: false });
      assert.deepEqual(got.ids, c.ids, `${c.name}: ids of ${JSON.stringify(c.text)}`);
      assert.deepEqual(got.tokens, c.tokens, `${c.name}: tokens`);
      assert.deepEqual(tokenizer.encode(c.text).ids, c.ids, `${c.name}: the ByteLevel post-processor adds nothing`);
      assert.equal(tokenizer.decode(c.ids), c.text, `${c.name}: decode`);
      assert.ok(c.ids.every((id) => Number.isInteger(id) && id >= 0 && id < config.vocab_size));
    }
    // A text made only of the learnt words becomes whole-word tokens (the merges are used, not just bytes).
    const course = expected.cases.find((c) => c.name === 'course');
    assert.ok(course.ids.length < course.text.length / 3, `course sentence: ${course.ids.length} tokens`);
    const seq = expected.headScores.sequence;
    assert.equal(seq[0], config.bos_token_id);
    assert.equal(tokenizer.decode(seq).startsWith('<|endoftext|>'), true);
  });
}
