// A dedicated Worker of the bench page (page.mjs): runs measureFamily there, as a user's page that
// keeps the page responsive runs a model (and as the explorer does, in its Worker). A Worker may
// block (Atomics.wait), where the page's main thread must busy-wait for its pool threads.
import { measureFamily } from './measure-families.mjs';
import { ctx } from './page-context.mjs';

self.onmessage = async ({ data }) => {
  try {
    const result = await measureFamily({ ctx, ...data });
    result.isolated = globalThis.crossOriginIsolated === true;
    self.postMessage({ result });
  } catch (e) {
    self.postMessage({ error: String(e?.message ?? e) });
  }
};
