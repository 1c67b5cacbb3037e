// The special tokens a tokenizer's post-processor adds around a text (GPT-2: none; Llama: <s> before;
// BERT: [CLS] before and [SEP] after) are those it gives an empty text. Pure functions over ids.

/**
 * `ids` without the specials around them (`specials`: the ids of an empty text), or null when they are
 * not where they belong. The specials that match the start of `ids` lead; the rest must end it.
 * @param {ArrayLike<number>} ids
 * @param {ArrayLike<number>} specials
 * @returns {number[]|null}
 */
export function innerIds(ids, specials) {
  const t = Array.from(ids);
  const s = Array.from(specials);
  let lead = 0;
  while (lead < s.length && lead < t.length && t[lead] === s[lead]) lead++;
  const tail = s.slice(lead);
  if (t.length < lead + tail.length || tail.some((x, i) => t[t.length - tail.length + i] !== x)) return null;
  return t.slice(lead, t.length - tail.length);
}

/**
 * The tokens `word` adds after `prefix` as the tokenizer splits the whole text (a name with its leading
 * space: ' Mary' is 'ĠMary' after GPT-2's prefix and '▁Mary' after Llama's), without specials; null when
 * tokenizing the prefix does not give a prefix of the whole.
 */
export function continuationIds(prefixIds, wholeIds, specials) {
  const base = innerIds(prefixIds, specials);
  const whole = innerIds(wholeIds, specials);
  if (!base || !whole || whole.length < base.length || base.some((x, i) => whole[i] !== x)) return null;
  return whole.slice(base.length);
}
