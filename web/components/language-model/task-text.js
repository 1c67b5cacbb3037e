// What <headlab-language-model> shows of each task: its example sequence and prompt,
// and the explanation above the demo (from the catalogue, catalogues/language-model.js);
// and where the trained models HeadLab ships come from (inside the classic bundle, else
// next to it).

import { el } from '../shared/render/dom.js';
import { shippedModelUrl } from '../shared/lab/model-urls.js';
import embeddedModels from 'headlab:embedded-models';

/** Each task's example sequence and generation prompt (token text only, in the task's own words; the model tokenizes). */
export const TASK_TEXT = {
  induction: { example: 'j 4 e p x 2 m q b k r p x 2 m q b k r 0 w z s', prompt: 'c 3 f a 5 w n t c 3 f' },
  cricket: { example: 'virat hit the ball with the bat because it was full', prompt: 'smith checked the glove near the pitch because it was' },
  // Every relation of the grammar once: agreement across "near the king", selection (eat → food),
  // coreference with two candidates, a repeated two-word name, and the previous word everywhere.
  english: { example: 'the girls near the king eat the cake . anna berg met tom and she was happy . later anna berg smiled .',
    prompt: 'the keys to the old cabinet' },
};

/** Paragraphs of the catalogue's lm.intro.<task>.<n> messages; **text** is bold (the catalogue is ours, and goes in as text). */
export function introParagraphs(task, t) {
  const out = [];
  for (let n = 1; t.has(`lm.intro.${task}.${n}`); n++) {
    out.push(el('p', {}, t(`lm.intro.${task}.${n}`).split('**').map((part, k) => (k % 2 ? el('strong', {}, part) : part))));
  }
  return out;
}

function decodeBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** What shippedModel says of a model the page opened from disk does not carry (the element says it in the learner's language). */
export const NOT_EMBEDDED = 'not inside this single-file page, and a page opened from disk (file://) cannot fetch it: open the page over http(s)';

/** A shipped model's bytes: carried inside the classic bundle (file://), else fetched next to the bundle (models/). */
export async function shippedModel(file) {
  if (embeddedModels?.[file]) return decodeBase64(embeddedModels[file]);
  // A page opened from disk cannot fetch: the classic bundle carries only the smaller models (english.hlm is not one).
  if (globalThis.location?.protocol === 'file:') throw new Error(NOT_EMBEDDED);
  const url = shippedModelUrl(file);
  let response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw new Error(`models/${file} could not be fetched (${e?.message ?? e})`, { cause: e });
  }
  if (!response.ok) throw new Error(`models/${file} could not be fetched (HTTP ${response.status})`);
  return new Uint8Array(await response.arrayBuffer());
}

/** An example's tokens as a short sentence: special tokens dropped, at most 13 words and "…". */
export function clipText(tokens) {
  const words = tokens.filter((w) => !w.startsWith('<'));
  return words.length > 14 ? `${words.slice(0, 13).join(' ')} …` : words.join(' ');
}
