// "Every head on your own text", a panel of <headlab-language-model>: a box for a
// sequence (Enter or the button draws every head on it), the task's hint, and, when
// the model cannot read it, the API's reason in learner words (generation-panel.js's
// wordProblem), as text.

import { el, uid, setText } from '../shared/render/dom.js';
import { wordProblem, showProblem } from './generation-panel.js';

export class TextPanel {
  /**
   * @param {object} o
   * @param {(text: string) => void} o.onShow  draw every head on the text (the element's showText)
   * @param {(action: string, label: string, click: () => void) => HTMLButtonElement} o.button  the element's button maker
   * @param {Function} o.t  the element's message function
   */
  constructor({ onShow, button, t }) {
    this.t = t;
    this.input = el('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', class: 'mono', id: uid('txt'), dataset: { testid: 'lm-text' } });
    this.label = el('label', { for: this.input.id }, t('lm.box.induction'));
    this.error = el('p', { class: 'text-error', 'aria-live': 'polite', dataset: { testid: 'lm-text-error' } });
    this.hint = el('p', { class: 'small muted', id: uid('hint') });
    this.input.setAttribute('aria-describedby', this.hint.id);
    this.input.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); onShow(this.input.value); } });
    this.element = el('section', { class: 'part' }, el('h3', {}, t('lm.text.title')),
      el('div', { class: 'textbox' }, this.label, this.input, button('show-text', t('lm.text.show'), () => onShow(this.input.value))),
      this.error, this.hint);
  }

  /** A new model: its example in the box, the label and hint of its task, no error. */
  reset(example, task) {
    this.input.value = example;
    setText(this.label, this.t(`lm.box.${task}`));
    setText(this.hint, this.t(`lm.hint.${task}`));
    this.accepted();
  }

  accepted() {
    setText(this.error, '');
    this.input.removeAttribute('aria-invalid');
  }

  /** The API refused the text with `message`: said in learner words (the task's `vocabulary` listed when a word is unknown). */
  refused(message, vocabulary) {
    showProblem(this.error, wordProblem(message, vocabulary, this.t));
    this.input.setAttribute('aria-invalid', 'true');
  }
}
