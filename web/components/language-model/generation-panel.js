// "Continue this text", the generation panel of <headlab-language-model>: a prompt,
// the temperature and the number of new tokens; the model's continuation is shown as
// text, and a prompt it cannot read is explained in learner words (wordProblem).

import { el, uid, setText } from '../shared/render/dom.js';
import { option } from '../shared/elements/training-element.js';
import { fmt } from '../../lib/teach/format.js';

export const GENERATION_CSS = `
.gen-out { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace; overflow-wrap: anywhere; min-height: 1.5em; }
.gen-out .more { font-weight: 700; color: var(--hl-accent); }
`;

/**
 * The API's message about text it cannot read, in learner words: { text, known } (plain text;
 * `known` lists the words of the task when the problem is a word it does not know).
 */
export function wordProblem(message, vocabulary) {
  const unknown = /unknown word "((?:[^"\\]|\\.)*)"(?: at word (\d+))?/.exec(message);
  if (unknown) {
    const word = unknown[1].replace(/\\(.)/g, '$1');
    const words = vocabulary.filter((w) => /\w/.test(w) && !w.startsWith('<'));
    const marks = vocabulary.filter((w) => !/\w/.test(w)).map((w) => `“${w}”`);
    return {
      text: `The model does not know “${word}”${unknown[2] ? ` (word ${unknown[2]})` : ''}: it only learned the words of its task.`,
      known: `It knows: ${words.join(' ')}${marks.length ? `, and ${marks.join(' ')}` : ''}.`,
    };
  }
  const long = /has (\d+) words;.*at most (\d+) words/.exec(message);
  if (long) return { text: `That is ${long[1]} words; this model reads at most ${long[2]}. Shorten it.`, known: '' };
  return { text: `The model cannot read that: ${message.replace(/^LanguageModel\.\w+: /, '')}`, known: '' };
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
   */
  constructor({ generate, vocabulary }) {
    Object.assign(this, { generate, vocabulary });
    this.promptInput = el('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', class: 'mono', dataset: { testid: 'lm-prompt' } });
    this.tempInput = el('input', { type: 'range', min: 0, max: 2, step: 0.1, value: 0.5, dataset: { testid: 'lm-temperature' } });
    this.tempOut = el('output', {}, '0.5');
    this.tempInput.addEventListener('input', () => { this.tempOut.textContent = fmt(Number(this.tempInput.value), 1); });
    this.lengthSelect = el('select', { dataset: { testid: 'lm-length' } }, [4, 8, 12].map((n) => option(n)));
    this.lengthSelect.value = '8';
    this.out = el('p', { class: 'gen-out', 'aria-live': 'polite', dataset: { testid: 'lm-generated' } });
    this.error = el('p', { class: 'text-error', 'aria-live': 'polite' });
    const button = el('button', { type: 'button', class: 'btn btn--primary', dataset: { action: 'generate' },
      on: { click: () => this.run() } }, 'Continue this text');
    this.promptInput.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); this.run(); } });
    this.element = el('section', { class: 'part' }, el('h3', {}, 'Continue this text'),
      el('p', { class: 'small muted explain' }, 'The model picks one next token at a time from its predicted probabilities. At temperature 0 it always takes the most likely one; higher temperatures flatten the choice, so less likely tokens come up too.'),
      el('div', { class: 'textbox' }, field('Text to continue', this.promptInput)),
      el('div', { class: 'toolbar' }, field('Temperature', this.tempInput), this.tempOut, field('New tokens', this.lengthSelect), button),
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
      showProblem(this.error, wordProblem(String(e?.message ?? e), this.vocabulary()));
    }
  }
}
