// "Continue this text", the generation panel of <headlab-language-model>: a prompt,
// the temperature and the number of new tokens; the model's continuation is shown as
// text, and a prompt it cannot read is explained in learner words (wordProblem).

import { el, uid, setText } from '../shared/render/dom.js';
import { option } from '../shared/elements/training-element.js';
import { fixed } from '../../lib/i18n/index.js';

export const GENERATION_CSS = `
.gen-out { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace; overflow-wrap: anywhere; min-height: 1.5em; }
.gen-out .more { font-weight: 700; color: var(--hl-accent); }
`;

/**
 * The API's message about text it cannot read, in learner words (the element's `t`): { text, known }
 * (plain text; `known` lists the words of the task when the problem is a word it does not know).
 */
export function wordProblem(message, vocabulary, t) {
  const unknown = /unknown word "((?:[^"\\]|\\.)*)"(?: at word (\d+))?/.exec(message);
  if (unknown) {
    const word = unknown[1].replace(/\\(.)/g, '$1');
    const words = vocabulary.filter((w) => /\w/.test(w) && !w.startsWith('<'));
    const marks = vocabulary.filter((w) => !/\w/.test(w)).map((w) => t('lm.word.mark', { word: w }));
    return {
      text: unknown[2] ? t('lm.word.unknownAt', { word, at: unknown[2] }) : t('lm.word.unknown', { word }),
      known: marks.length ? t('lm.word.knowsMarks', { words: words.join(' '), marks: marks.join(' ') }) : t('lm.word.knows', { words: words.join(' ') }),
    };
  }
  const long = /has (\d+) words;.*at most (\d+) words/.exec(message);
  if (long) return { text: t('lm.word.tooLong', { n: long[1], max: long[2] }), known: '' };
  return { text: t('lm.word.cannot', { detail: message.replace(/^LanguageModel\.\w+: /, '') }), known: '' };
}

/** Shows a wordProblem() in `node` (text only). */
export function showProblem(node, problem) {
  node.replaceChildren(problem.text, ...(problem.known ? [' ', el('span', { class: 'known' }, problem.known)] : []));
}

/** A labelled field. */
export function field(label, control) {
  if (!control.id) control.id = uid('f');
  return el('div', { class: 'field' }, el('label', { for: control.id }, label), control);
}

export class GenerationPanel {
  /**
   * @param {object} o
   * @param {(o: {prompt: string}) => Promise<{newTokens: string[]}>} o.generate  the element's generate()
   * @param {() => string[]} o.vocabulary  the task's words, for wordProblem
   * @param {Function} o.t  the element's message function
   */
  constructor({ generate, vocabulary, t }) {
    Object.assign(this, { generate, vocabulary, t });
    this.promptInput = el('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', class: 'mono', dataset: { testid: 'lm-prompt' } });
    this.tempInput = el('input', { type: 'range', min: 0, max: 2, step: 0.1, value: 0.5, dataset: { testid: 'lm-temperature' } });
    this.tempOut = el('output', {}, '0.5');
    this.tempOut.textContent = fixed(t.lang, 0.5, 1);
    this.tempInput.addEventListener('input', () => { this.tempOut.textContent = fixed(t.lang, Number(this.tempInput.value), 1); });
    this.lengthSelect = el('select', { dataset: { testid: 'lm-length' } }, [4, 8, 12].map((n) => option(n)));
    this.lengthSelect.value = '8';
    this.out = el('p', { class: 'gen-out', 'aria-live': 'polite', dataset: { testid: 'lm-generated' } });
    this.error = el('p', { class: 'text-error', 'aria-live': 'polite' });
    const button = el('button', { type: 'button', class: 'btn btn--primary', dataset: { action: 'generate' },
      on: { click: () => this.run() } }, t('lm.gen.title'));
    this.promptInput.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); this.run(); } });
    this.element = el('section', { class: 'part' }, el('h3', {}, t('lm.gen.title')),
      el('p', { class: 'small muted explain' }, t('lm.gen.explain')),
      el('div', { class: 'textbox' }, field(t('lm.gen.prompt'), this.promptInput)),
      el('div', { class: 'toolbar' }, field(t('lm.gen.temperature'), this.tempInput), this.tempOut, field(t('lm.gen.newTokens'), this.lengthSelect), button),
      this.error, this.out);
  }

  /** A new model: the task's prompt (unless the learner typed one for this task), no output. */
  reset(task, prompt) {
    if (!this.promptInput.value || this._task !== task) this.promptInput.value = prompt;
    this._task = task;
    setText(this.out, '');
  }

  async run() {
    setText(this.error, '');
    try {
      const prompt = this.promptInput.value.trim();
      const result = await this.generate({ prompt });
      this.out.replaceChildren(el('span', {}, prompt), ' ', el('span', { class: 'more', dataset: { testid: 'lm-generated-new' } }, result.newTokens.join(' ')));
    } catch (e) {
      showProblem(this.error, wordProblem(String(e?.message ?? e), this.vocabulary(), this.t));
    }
  }
}
