// "Heads checked against the grammar", a panel of <headlab-language-model> for the english
// task: for the sentence in the text box, each relation the grammar finds in it (agreement ·
// syntax, selection · semantics, coreference · entities, induction · long range, previous
// token · local context) with its true arc beside the attention row, at that arc's query, of
// the head that scores best on the relation; what the head and position alone put on this
// sentence's arcs (the verdict), then the held-out averages, labelled as such.
// The numbers come from the controller's relations request (lm-session.js relationsReply),
// sliced by web/lib/teach/lm-relations.js. Words go in as text, never as HTML.

import { el, setText } from '../shared/render/dom.js';
import { fixed } from '../../lib/i18n/index.js';
import { relationRows } from '../../lib/teach/lm-relations.js';
import { wordProblem, showProblem } from './generation-panel.js';

export const RELATIONS_CSS = `
.relations[hidden] { display: none; }
.rel { border-top: 1px solid var(--hl-border); padding: 0.5rem 0 0.3rem; }
.rel h4 { margin: 0 0 0.2rem; font-size: 1rem; }
.rel h4 .kind { color: var(--hl-accent); font-weight: 600; }
.rel p { margin: 0.2rem 0; }
.rel-arc { margin: 0.3rem 0; }
.rel-row { display: flex; flex-wrap: wrap; gap: 0.2rem; list-style: none; padding: 0; margin: 0.25rem 0; }
.rel-row li { display: inline-flex; flex-direction: column; align-items: center; min-width: 2.2rem; padding: 0.1rem 0.3rem; border-radius: 4px;
  border: 1px solid var(--hl-border); font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.85rem;
  background: color-mix(in srgb, var(--hl-accent) calc(var(--w) * 60%), transparent); }
.rel-row li small { font-size: 0.7rem; font-variant-numeric: tabular-nums; }
.rel-row li.target { border: 2px solid var(--hl-ok); font-weight: 700; }
.rel-row li.query { border-style: dashed; }
.rel-verdict strong { color: var(--hl-ok); }
.rel-error { color: var(--hl-error); font-weight: 600; overflow-wrap: anywhere; }
.rel-error:empty { display: none; }
.rel-error .known { display: block; color: var(--hl-muted); font-weight: 400; font-size: 0.875rem; }
`;

/** A sampled text: at most this many words, and this many tries at one with a relation beyond the previous word. */
const SAMPLE_TOKENS = 30;
const SAMPLE_TRIES = 5;

/** Gap between two refreshes while training (ms): attention changes every step, the view need not. */
const LIVE_GAP_MS = 2000;

export class RelationsView {
  /**
   * @param {object} o
   * @param {(text: string) => Promise<object>} o.relations  the controller's relations(text)
   * @param {() => string[]} o.vocabulary  the task's words, for wordProblem
   * @param {(o: {prompt: string, maxTokens: number, temperature: number}) => Promise<{newTokens: string[]}>} o.generate
   *   the controller's generate
   * @param {(text: string) => Promise<void>} o.showText  the element's showText (the text box, every head and this view)
   * @param {Function} o.t  the element's message function
   */
  constructor({ relations, vocabulary, generate, showText, t }) {
    Object.assign(this, { relations, vocabulary, generate, showText, t });
    this.list = el('div', { dataset: { testid: 'lm-relations-list' } });
    this.error = el('p', { class: 'rel-error', 'aria-live': 'polite', dataset: { testid: 'lm-relations-error' } });
    const intro = [];
    for (let n = 1; t.has(`lm.rel.intro.${n}`); n++) intro.push(el('p', {}, t(`lm.rel.intro.${n}`)));
    this.element = el('section', { class: 'part relations', hidden: true, dataset: { testid: 'lm-relations' } },
      el('h3', {}, t('lm.rel.title')), el('div', { class: 'explain' }, intro),
      el('div', { class: 'toolbar' }, el('button', { type: 'button', class: 'btn', dataset: { action: 'sample-sentence' },
        on: { click: () => this.sample().catch(() => {}) } }, t('lm.rel.sample'))),
      this.error, this.list);
    this.text = null;
    this.shownStep = -1;
  }

  /** A new model: shown (and drawn on `text`) for the english task only. */
  reset(english, text) {
    this.english = english;
    this.element.hidden = !english;
    this.shownStep = -1;
    if (english) this.show(text);
  }

  /** Draws the relations of `text`; the API's error (naming the word) when it is not a sentence of the grammar. */
  async show(text, step = -1) {
    if (!this.english) return;
    this.text = text;
    this.shownStep = step;
    const job = (this._job ?? 0) + 1;
    this._job = job;
    this.element.dataset.state = 'loading';
    let rows;
    try {
      rows = relationRows(await this.relations(text));
    } catch (e) {
      if (job !== this._job) return;
      const message = String(e?.message ?? e);
      const grammar = /not a sentence of the english grammar: (.*?)\.? \(positions count/.exec(message);
      const at = e?.code === 'grammar' ? e.params ?? {} : null;
      if (at && Number.isInteger(at.position)) {
        // The element's own words from the error's code: no English from the API in another language.
        setText(this.error, at.stops ? this.t('lm.rel.grammarStops', { position: at.position })
          : this.t('lm.rel.grammarAt', { position: at.position, word: at.word ?? '' }));
      } else if (grammar) setText(this.error, this.t('lm.rel.notGrammar', { detail: grammar[1] }));
      else showProblem(this.error, wordProblem(message, this.vocabulary(), this.t));
      this.list.replaceChildren();
      this.element.dataset.state = 'error';
      return;
    }
    if (job !== this._job) return;
    setText(this.error, '');
    this.list.replaceChildren(...(rows.relations.length ? rows.relations.map((r) => this.relation(r, rows.tokens)) : [el('p', {}, this.t('lm.rel.none'))]));
    this.element.dataset.text = text;  // the text drawn (an attribute value, never markup)
    this.element.dataset.state = 'ready';
    this._at = performance.now();
  }

  /** The model moved on (training, a head switched): drawn again, at most every LIVE_GAP_MS while running. */
  refresh(step, running) {
    if (!this.english || this.text === null || step === this.shownStep || this.element.dataset.state === 'loading') return;
    if (running && performance.now() - (this._at ?? 0) < LIVE_GAP_MS) return;
    this.show(this.text, step).catch(() => {});
  }

  /**
   * The model writes a text from the start token (up to SAMPLE_TOKENS words, cut after its last "."); the first of
   * SAMPLE_TRIES whose grammar holds a relation beyond the previous word (else the last) goes through showText.
   * @returns {Promise<string|null>} the text shown, or null when no sample ended a sentence
   */
  async sample() {
    let chosen = null;
    for (let k = 0; k < SAMPLE_TRIES; k++) {
      const words = (await this.generate({ prompt: '', maxTokens: SAMPLE_TOKENS, temperature: 1 })).newTokens;
      const end = words.lastIndexOf('.');
      if (end < 0) continue;
      chosen = words.slice(0, end + 1).join(' ');
      const rich = await this.relations(chosen).then((r) => r.arcs.some((a) => a.relation !== 'previousToken'), () => false);
      if (rich) break;
    }
    if (chosen !== null) await this.showText(chosen);
    return chosen;
  }

  /** The text box was refused (an unknown word): no relations until a text is accepted. */
  clear() {
    this.text = null;
    this.list.replaceChildren();
    setText(this.error, '');
  }

  relation(r, tokens) {
    const t = this.t;
    const num = (v) => fixed(t.lang, v, 2);
    const who = t('lm.rel.head', { layer: r.head.layer + 1, head: r.head.head + 1 });
    const b = r.baseline;
    const position = b.lastNoun > b.fixedOffset ? t('lm.rel.lastNoun') : t(b.offset < 2 ? `lm.rel.offset${b.offset}` : 'lm.rel.offset', { k: b.offset });
    const beats = r.head.score > b.best;
    const v = r.sentence;
    const fixedHow = t(v.offset < 2 ? `lm.rel.offset${v.offset}` : 'lm.rel.offset', { k: v.offset });
    return el('div', { class: 'rel', dataset: { relation: r.key } },
      el('h4', {}, t(`lm.rel.name.${r.key}`), ' · ', el('span', { class: 'kind' }, t(`lm.rel.kind.${r.key}`))),
      el('p', { class: 'small' }, t(`lm.rel.about.${r.key}`)),
      r.arcs.map((a) => this.arc(a, who, tokens)),
      r.more > 0 ? el('p', { class: 'small muted' }, t('lm.rel.more', { n: r.more })) : null,
      // This sentence first: its own arcs against position alone on them; then the held-out average.
      el('p', { class: 'small rel-verdict', dataset: { testid: 'lm-relation-sentence', verdict: v.verdict } },
        t('lm.rel.sentence', { who, arcs: t.plural('lm.rel.arcs', v.arcs), weight: num(v.head), position: num(v.position), how: fixedHow }), ' ',
        el(v.verdict === 'beats' ? 'strong' : 'span', {}, t(`lm.rel.sentence.${v.verdict}`, { missed: v.missed, arcs: t.plural('lm.rel.arcs', v.arcs) }))),
      el('p', { class: 'small muted', dataset: { testid: 'lm-relation-score' } },
        t(r.head.labelled ? 'lm.rel.scoreLabelled' : r.head.relation ? 'lm.rel.scoreOther' : 'lm.rel.scoreUnlabelled',
          { who, score: num(r.head.score), other: r.head.relation && t(`lm.rel.name.${r.head.relation}`) }), ' ',
        t('lm.rel.baseline', { best: num(b.best), how: position }), ' ',
        t(beats ? 'lm.rel.beats' : 'lm.rel.notBeats')));
  }

  /** One true arc (query word → target word) and the head's attention row at its query, the target marked. */
  arc(a, who, tokens) {
    const t = this.t;
    const num = (v) => fixed(t.lang, v, 2);
    const row = el('ol', { class: 'rel-row', 'aria-label': t('lm.rel.rowAria', { who, word: a.queryWord, at: a.query }) },
      Array.from(a.row, (w, k) => el('li', {
        class: k === a.target ? 'target' : k === a.query ? 'query' : undefined, style: { '--w': String(Math.min(1, Math.max(0, w))) },
        dataset: { position: String(k), weight: String(w) },
      }, el('span', {}, tokens[k]), el('small', {}, num(w)))));
    return el('div', { class: 'rel-arc', dataset: { testid: 'lm-arc', query: String(a.query), target: String(a.target), targetWord: a.targetWord } },
      el('p', {}, t('lm.rel.arc', { query: a.queryWord, at: a.query, target: a.targetWord, to: a.target }),
        a.answer ? ` ${t(a.foil ? 'lm.rel.answerFoil' : 'lm.rel.answer', { answer: a.answer, foil: a.foil })}` : '',
        a.attractor ? ` ${t('lm.rel.attractor')}` : ''),
      row,
      el('p', { class: 'small' }, t('lm.rel.weight', { who, weight: num(a.onTarget), target: a.targetWord }),
        a.peak !== a.target ? ` ${t('lm.rel.peak', { word: tokens[a.peak], weight: num(a.row[a.peak]) })}` : ''));
  }
}
