// lab.findings.ioiPrompts (issue 35): every template's clean and corrupted prompts tokenise to the same
// length with a byte-level BPE that keeps names whole (tests/golden/findings/ioi-model/tokenizer.json, written
// by make_findings.py, read here with @huggingface/tokenizers); answer and wrong are the clean prompt's two
// names (wrong the repeated one); the corrupted prompt's third name differs from both; seeds reproduce.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Tokenizer } from '@huggingface/tokenizers';
import { createHeadlab } from '../../web/lib/headlab.js';
import { IOI_NAMES, IOI_TEMPLATES, ioiPrompts } from '../../web/lib/api/findings.js';

const json = JSON.parse(readFileSync(new URL('../golden/findings/ioi-model/tokenizer.json', import.meta.url), 'utf8'));
const tokenizer = new Tokenizer(json, {});
const ids = (text) => Array.from(tokenizer.encode(text).ids);
const nameIds = new Map(IOI_NAMES.map((n) => {
  const t = ids(` ${n}`);
  return [t[0], t.length === 1 ? n : null];
}));

test('every name is one token with its leading space', () => {
  for (const n of IOI_NAMES) assert.equal(ids(` ${n}`).length, 1, `" ${n}" is ${ids(` ${n}`).length} tokens`);
});

test('every template: clean and corrupted have the same length, the names are right', () => {
  const prompts = ioiPrompts({ n: 400, seed: 0 });
  const seen = new Set(prompts.map((p) => `${p.template} ${p.order}`));
  for (let t = 0; t < IOI_TEMPLATES.length; t++) {
    for (const order of ['ABBA', 'BABA']) assert.ok(seen.has(`${t} ${order}`), `template ${t} ${order} never drawn`);
  }
  for (const p of prompts) {
    const clean = ids(p.clean);
    const corrupted = ids(p.corrupted);
    const where = `seed 0, template ${p.template}: ${JSON.stringify(p.clean)} / ${JSON.stringify(p.corrupted)}`;
    assert.equal(clean.length, corrupted.length, where);
    const [answer] = ids(p.answer);
    const [wrong] = ids(p.wrong);
    assert.deepEqual([ids(p.answer).length, ids(p.wrong).length], [1, 1], where);
    const names = (seq) => seq.filter((id) => nameIds.get(id));
    // clean: the indirect object once, the subject twice (once in the opening clause, once as the giver)
    const cn = names(clean);
    assert.equal(cn.length, 3, where);
    assert.equal(cn.filter((id) => id === answer).length, 1, where);
    assert.equal(cn.filter((id) => id === wrong).length, 2, where);
    assert.equal(cn[2], wrong, where);
    assert.deepEqual(cn.slice(0, 2), p.order === 'ABBA' ? [answer, wrong] : [wrong, answer], where);
    // corrupted: the same tokens except the repeated name, replaced by a third name
    const diff = clean.flatMap((id, i) => (id === corrupted[i] ? [] : [i]));
    assert.equal(diff.length, 1, where);
    const third = corrupted[diff[0]];
    assert.equal(clean[diff[0]], wrong, where);
    assert.ok(nameIds.get(third), where);
    assert.ok(third !== answer && third !== wrong, where);
    assert.deepEqual(p.names, [p.answer.slice(1), p.wrong.slice(1), nameIds.get(third)], where);
    assert.ok(p.clean.startsWith(p.corrupted.slice(0, p.corrupted.indexOf(p.names[2]))), where);
  }
});

test('a seed gives the same set; other seeds give other sets', () => {
  assert.deepEqual(ioiPrompts({ n: 50, seed: 7 }), ioiPrompts({ n: 50, seed: 7 }));
  assert.deepEqual(ioiPrompts({ n: 5 }), ioiPrompts({ n: 5, seed: 0 }));
  const texts = new Set([0, 1, 2, 3, 2 ** 40].map((seed) => ioiPrompts({ n: 20, seed }).map((p) => p.clean).join('|')));
  assert.equal(texts.size, 5);
  const [p] = ioiPrompts({ n: 1, seed: 3 });  // the documented example (findings.js, headlab.d.ts)
  assert.equal(p.clean, 'When Mary and Lisa got a bone at the station, Lisa decided to give it to');
  assert.equal(p.corrupted, 'When Mary and Lisa got a bone at the station, John decided to give it to');
});

test('lab.findings.ioiPrompts is the same generator, and bad arguments are named', async () => {
  const lab = await createHeadlab();
  assert.deepEqual(lab.findings.ioiPrompts({ n: 10, seed: 4 }), ioiPrompts({ n: 10, seed: 4 }));
  const bad = [
    [undefined, TypeError, /findings\.ioiPrompts: expected an options object/],
    [{}, TypeError, /findings\.ioiPrompts: n must be a positive integer, got undefined/],
    [{ n: 0 }, RangeError, /n must be a positive integer, got 0/],
    [{ n: 2.5 }, RangeError, /n must be a positive integer, got 2\.5/],
    [{ n: '3' }, TypeError, /n must be a positive integer, got string "3"/],
    [{ n: 100001 }, RangeError, /n must be at most 100000, got 100001/],
    [{ n: 3, seed: -1 }, RangeError, /seed must be a non-negative integer, got -1/],
    [{ n: 3, seed: 'a' }, TypeError, /seed must be a non-negative integer, got string "a"/],
    [{ n: 3, sead: 1 }, TypeError, /unknown option "sead"; did you mean seed\?/],
  ];
  for (const [options, type, message] of bad) {
    assert.throws(() => lab.findings.ioiPrompts(options), (e) => e instanceof type && message.test(e.message), JSON.stringify(options));
  }
});
