// The english task through the public API (issue 24): headScores' relation scores and labels,
// baselines, the english accuracies of evaluate, and relations(text) against arcs written by hand
// for hand-written sentences (positions count the start token as 0), with errors naming the word.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHeadlab } from '../../web/lib/headlab.js';
import lmMessages from '../../web/lib/i18n/catalogues/language-model.js';
import { scoresCSV } from '../../web/components/language-model/head-grid.js';

const lab = await createHeadlab();
const SMALL = { task: 'english', numLayers: 1, numHeads: 2, dModel: 16, batchSize: 8, seed: 3 };
const RELATIONS = ['agreement', 'selection', 'coreference', 'induction', 'previousToken'];

async function withModel(options, fn) {
  const lm = await lab.createLanguageModel(options);
  try {
    return await fn(lm);
  } finally {
    lm.dispose();
  }
}

test('languageTasks(): every task has an example, written in its own vocabulary', async () => {
  for (const task of await lab.languageTasks()) {
    assert.equal(typeof task.example, 'string', `${task.name}: example`);
    for (const word of task.example.split(' ')) assert.ok(task.vocabulary.includes(word), `${task.name}: "${word}" is in the vocabulary`);
  }
});

const pairs = (arcs, relation) => arcs.filter((a) => a.relation === relation).map((a) => [a.query, a.target]);

test('relations(text): the grammar\'s arcs of hand-written sentences, as written out by hand', async () => {
  await withModel(SMALL, (lm) => {
    // 0 <s> 1 the 2 keys 3 to 4 the 5 old 6 cabinet 7 are 8 on 9 the 10 table 11 .
    const r = lm.relations('the keys to the old cabinet are on the table .');
    assert.equal(r.tokens[0], '<s>');
    assert.equal(r.tokens[7], 'are');
    assert.deepEqual(pairs(r.arcs, 'agreement'), [[6, 2]]);
    const a = r.arcs.find((x) => x.relation === 'agreement');
    assert.deepEqual(a, { relation: 'agreement', query: 6, target: 2, label: 'verb → subject · syntax', answer: 'are', foil: 'is', attractor: true });
    assert.deepEqual(pairs(r.arcs, 'previousToken'), Array.from({ length: 11 }, (_, i) => [i + 1, i]));
    // 0 <s> 1 virat 2 hit 3 the 4 ball 5 because 6 it 7 was 8 full 9 and 10 outside 11 off 12 .
    const c = lm.relations(['virat', 'hit', 'the', 'ball', 'because', 'it', 'was', 'full', 'and', 'outside', 'off', '.']);
    assert.deepEqual(pairs(c.arcs, 'selection'), [[3, 2]]);
    assert.deepEqual(pairs(c.arcs, 'coreference'), [[7, 4]]);
    const coref = c.arcs.find((x) => x.relation === 'coreference');
    assert.equal(coref.answer, 'full');
    assert.equal(coref.class, 'cricket');
    assert.equal(coref.label, 'pronoun → antecedent · entities');
    // 0 <s> 1 anna 2 berg 3 met 4 tom 5 lind 6 . 7 later 8 anna 9 berg 10 smiled 11 .
    const n = lm.relations('<s> anna berg met tom lind . later anna berg smiled .');
    assert.deepEqual(pairs(n.arcs, 'induction'), [[8, 2]]);
    assert.equal(n.arcs.find((x) => x.relation === 'induction').answer, 'berg');
  });
});

test('one convention for arrows: the API\'s labels (arcs, head scores, CSV) point as the page\'s headings do, from the word that looks to the word it looks at', async () => {
  // The page's headings (lm.rel.name.*), lower-cased, are the label before its " · kind".
  const heading = (relation) => lmMessages.en[`lm.rel.name.${relation}`].toLowerCase();
  // The word each side of the arrow names, at the arc's ends: query first, target second.
  const roles = {
    agreement: ['verb', 'subject'], selection: ['object', 'verb'], coreference: ['pronoun', 'antecedent'],
    induction: ['repeat', 'earlier copy'], previousToken: ['word', 'previous word'],
  };
  await withModel(SMALL, (lm) => {
    // The hand-written sentences of the test above, one after the other: every relation has arcs.
    const text = '<s> anna berg met tom lind . later anna berg smiled . the keys to the old cabinet are on the table . ' +
      'virat hit the ball because it was full and outside off .';
    const r = lm.relations(text);
    assert.deepEqual([...new Set(r.arcs.map((a) => a.relation))].sort(), [...RELATIONS].sort(), 'every relation has an arc here');
    for (const a of r.arcs) {
      const [arrow, kind] = a.label.split(' · ');
      assert.ok(kind, a.label);
      assert.equal(arrow, heading(a.relation), `${a.relation}: "${a.label}" against the page's "${lmMessages.en[`lm.rel.name.${a.relation}`]}"`);
      assert.deepEqual(arrow.split(' → '), roles[a.relation], `${a.relation}: ${a.label}`);
    }
    // The arcs themselves go that way: the verb's side looks at the subject, "was" at the antecedent.
    const at = (relation) => r.arcs.find((a) => a.relation === relation);
    assert.deepEqual([r.tokens[at('agreement').query + 1], r.tokens[at('agreement').target]], ['are', 'keys']);
    assert.deepEqual([r.tokens[at('selection').query + 1], r.tokens[at('selection').target]], ['ball', 'hit']);
    assert.deepEqual([r.tokens[at('coreference').query], r.tokens[at('coreference').target]], ['was', 'ball']);
    assert.ok(at('induction').query > at('induction').target && at('previousToken').query === at('previousToken').target + 1);
  });
  // The shipped model's labelled heads, and the CSV the page exports of them, carry the same strings.
  const shipped = await lab.loadLanguageModel(new Uint8Array(readFileSync(new URL('../../web/models/english.hlm', import.meta.url))));
  try {
    const heads = shipped.headScores(200);
    const labelled = heads.filter((h) => h.label !== null);
    assert.ok(labelled.length >= 2, `labelled heads: ${labelled.length}`);
    for (const h of labelled) assert.equal(h.label.split(' · ')[0], heading(h.relation), `layer ${h.layer + 1} head ${h.head + 1}: ${h.label}`);
    const rows = scoresCSV({ scores: heads, enabled: heads.map(() => true) }).trim().split('\r\n').slice(1);
    rows.forEach((row, i) => assert.equal(row.split(',')[2], heads[i].label ?? ''));
    console.log(`labels of the shipped english model: ${[...new Set(labelled.map((h) => h.label))].join('; ')}`);
  } finally {
    shipped.dispose();
  }
});

test('relations(text): text outside the language is an Error naming the word and where parsing stops', async () => {
  await withModel(SMALL, (lm) => {
    assert.throws(() => lm.relations('the dog run .'), (e) => e instanceof Error && /LanguageModel\.relations/.test(e.message) &&
      /word 3 \('run'\)/.test(e.message) && /does not agree/.test(e.message) &&
      e.code === 'grammar' && e.params.position === 3 && e.params.word === 'run' && e.params.stops === false);
    // A last sentence without its "." (as learners type it) is read with one.
    assert.deepEqual(lm.relations('the dog runs'), lm.relations('the dog runs .'));
    assert.deepEqual(lm.relations('the keys to the old cabinet are on the table').arcs, lm.relations('the keys to the old cabinet are on the table .').arcs);
    assert.throws(() => lm.relations('the dog'), /LanguageModel\.relations/);
    assert.throws(() => lm.relations('the dog xyz .'), (e) => e instanceof RangeError && /unknown word "xyz" at word 3/.test(e.message));
  });
  const cricket = await lab.createLanguageModel({ task: 'cricket', numLayers: 1, numHeads: 2, dModel: 8, batchSize: 8 });
  try {
    assert.throws(() => cricket.relations('virat hit the ball'), /only the english task .* task is cricket/);
    assert.throws(() => cricket.baselines(), /LanguageModel\.baselines: only the english task/);
  } finally {
    cricket.dispose();
  }
});

test('headScores, baselines and evaluate carry the five relations; labels name relation and kind', async () => {
  await withModel(SMALL, (lm) => {
    lm.step(2);
    const report = lm.headReport(40);
    assert.equal(report.threshold, 0.3);
    assert.equal(report.heads.length, 2);
    for (const h of report.heads) {
      for (const k of RELATIONS) assert.ok(h[k] >= 0 && h[k] <= 1, `${k}: ${h[k]}`);
      const best = RELATIONS.filter((k) => h[k] >= 0.3).sort((x, y) => h[y] - h[x])[0] ?? null;
      assert.equal(h.relation, best);
      if (best === null) assert.equal(h.label, null);
      else assert.match(h.label, / → .* · (syntax|semantics|entities|long range|local context)$/);
    }
    const b = lm.baselines(200);
    assert.deepEqual(Object.keys(b), RELATIONS);
    for (const k of RELATIONS) {
      assert.equal(b[k].best, Math.max(b[k].fixedOffset, b[k].lastNoun));
      assert.ok(b[k].arcs > 0);
    }
    // Position alone: the language keeps every relation but the previous token under 0.3 (english.hpp).
    for (const k of RELATIONS.slice(0, 4)) assert.ok(b[k].best <= 0.3, `${k} baseline ${b[k].best}`);
    assert.equal(b.previousToken.fixedOffset, 1);
    assert.equal(b.previousToken.offset, 1);
    const e = lm.evaluate(60);
    for (const k of ['agreementAccuracy', 'agreementAccuracyAttractor', 'agreementAccuracyNoAttractor', 'selectionAccuracy', 'coreferenceAccuracy']) {
      assert.ok(e[k] >= 0 && e[k] <= 1, `${k}: ${e[k]}`);
    }
    assert.equal(e.accuracy, e.agreementAccuracy);
    assert.ok(e.arcs.agreement > e.arcs.attractor && e.arcs.attractor > 0);
    // The shares are of whole arcs.
    const close = (x, y) => Math.abs(x - y) < 1e-3;  // float32 shares
    assert.ok(close(e.agreementAccuracy * e.arcs.agreement, Math.round(e.agreementAccuracy * e.arcs.agreement)));
    // The same sequences on every call, and save/load keeps them.
    const again = lm.headScores(40);
    assert.deepEqual(again, report.heads);
  });
});
