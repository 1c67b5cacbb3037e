// What <headlab-language-model> says about each task: its title, example sequence,
// prompt and hints, and the explanation above the demo; and where the trained models
// HeadLab ships come from (inside the classic bundle, else next to it).

import { el } from '../shared/render/dom.js';
import { BASE_URL } from '../shared/lab/assets.js';
import embeddedModels from 'headlab:embedded-models';
import { modelUrls } from 'headlab:layout';

/** What each task's example, prompt and hint look like (token text only; the model tokenizes). */
export const TASK_TEXT = {
  induction: {
    title: 'A small language model learns to copy',
    example: 'j 4 e p x 2 m q b k r p x 2 m q b k r 0 w z s',
    prompt: 'c 3 f a 5 w n t c 3 f',
    boxLabel: 'Your sequence',
    hint: 'Tokens a to z and 0 to 5, separated by spaces. Repeat a stretch to see the induction head look back.',
  },
  cricket: {
    title: 'A small language model learns what “it” refers to',
    example: 'virat hit the ball with the bat because it was full',
    prompt: 'smith checked the glove near the pitch because it was',
    boxLabel: 'Your sentence',
    hint: 'Words of the toy commentary, separated by spaces.',
  },
};

/** The explanation of a task's training data and of the heads it gives rise to (paragraphs). */
export function introParagraphs(task) {
  const p = (...parts) => el('p', {}, ...parts);
  return task === 'induction' ? [
    p('Each training sequence is a start token and 23 random tokens, with one stretch of 4 to 10 tokens that repeats right after itself. ',
      'The model only ever learns to predict the next token. Before the repeat nothing can be predicted, so the best it can do is guess; ',
      'inside the second copy, every next token can be read off the first copy, if the model knows where to look.'),
    p(el('strong', {}, 'A previous-token head'), ' attends from each position to the one just before it, so its output there says “the token before me was x”. ',
      el('strong', {}, 'An induction head'), ' attends from the current token to the position right after an earlier copy of that same token, and copies what it finds there: ',
      'having seen “… p x …”, at the next “p” it predicts “x”.'),
    p('An induction head cannot work on its own. To find “the position after the earlier p”, it matches the current token against what a previous-token head ',
      'in the layer below wrote at each position. With one layer there is no layer below, and the trick is out of reach; with two it appears, ',
      'suddenly, after a long plateau (Olsson et al., 2022, “In-context learning and induction heads”). Nobody told the model about copying or about positions: ',
      'both heads come from learning to predict the next token.'),
    p('The induction heads earn their label at the jump. The previous-token heads below them do not yet: at the jump each puts only about 0.2 of its weight ',
      'on the token before, several of them share the job, and their scores keep climbing for hundreds of steps before one reaches the 0.5 a label needs. ',
      'The number and arrow under each head show that climb.'),
  ] : [
    p('Each training sentence is toy cricket commentary such as “virat hit the ball because it was full”. The word after “it was” describes a noun: ',
      'a ball can be full, short or wide; a bat heavy, light or broken; and so on. “It” is always the thing that was hit, watched, checked or grabbed, ',
      'while another noun often sits nearby to mislead.'),
    p(el('strong', {}, 'A coreference head'), ' attends from “it” (or from “was”, where the adjective is predicted) back to the noun that “it” refers to. ',
      'Its output carries which noun that is, and the model can then pick one of that noun’s adjectives.'),
    p('Nobody told the model what “it” means, which noun is the object, or that adjectives belong to nouns: it only learned to predict the next word, ',
      'and a head that links “it” to its noun is what made that prediction good.'),
  ];
}

function decodeBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** A shipped model's bytes: carried inside the classic bundle (file://), else fetched next to the bundle (models/). */
export async function shippedModel(file) {
  if (embeddedModels?.[file]) return decodeBase64(embeddedModels[file]);
  // The npm package names each model with a literal new URL(…, import.meta.url), which bundlers emit.
  const url = (modelUrls?.[file]?.() ?? new URL(`models/${file}`, BASE_URL)).href;
  let response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw new Error(`models/${file} could not be fetched (${e?.message ?? e})`, { cause: e });
  }
  if (!response.ok) throw new Error(`models/${file} could not be fetched (HTTP ${response.status})`);
  return new Uint8Array(await response.arrayBuffer());
}
