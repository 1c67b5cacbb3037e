// "Load model" for <headlab-language-model>: a button with a hidden <input type=file>
// behind it (the button takes the focus and the keys; the input is out of the Tab
// order), and a refused file's reason from the API, in words.

import { el } from '../shared/render/dom.js';

/** The API's limit on a saved language model (web/lib/api/language-model.js). */
export const MAX_MODEL_BYTES = 64 * 2 ** 20;

/**
 * @param {object} o
 * @param {(action: string, label: string, click: () => void) => HTMLButtonElement} o.button  the element's button maker
 * @param {(file: File) => void} o.onFile  the file the learner chose
 * @param {Function} o.t  the element's message function
 * @returns {{button: HTMLButtonElement, input: HTMLInputElement}}
 */
export function loadModelButton({ button, onFile, t }) {
  const input = el('input', { type: 'file', accept: '.hlm,application/octet-stream', hidden: true, tabindex: '-1', dataset: { testid: 'lm-model-file' } });
  input.addEventListener('change', () => {
    const file = input.files?.[0];
    input.value = '';  // the same file can be chosen again
    if (file) onFile(file);
  });
  return { button: button('load-model', t('lm.loadModel'), () => input.click()), input };
}

/**
 * Why a file was not loaded: the API's message without its call prefix (in English; in another
 * language led by what it means), then what a model file is. `e.said` is a message already in words.
 */
export function fileProblem(e, t) {
  if (e?.said) return `${e.said} ${t('lm.file.what')}`;
  const detail = String(e?.message ?? e).replace(/^loadLanguageModel: bytes: (load: )?/, '');
  const what = t('lm.file.what');
  if (t.lang === 'en') return `${detail.charAt(0).toUpperCase()}${detail.slice(1)}. ${what}`;
  const kind = /^magic:/.test(detail) ? 'lm.file.notModel' : /damaged/.test(detail) ? 'lm.file.damaged' : /no data/.test(detail) ? 'lm.file.empty' : '';
  return `${kind ? `${t(kind)} ` : ''}${t('lm.file.details', { detail })} ${what}`;
}
