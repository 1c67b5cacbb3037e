// The module Worker of tests/browser/pretrained-threads.test.mjs: loads a fixture checkpoint from its
// folder URL with the `threads` asked for, runs it, disposes it and posts what the test compares.
// A Worker, as docs/pretrained.md advises: there a call may wait for its threads (Atomics.wait).
import { createHeadlab } from '../../web/lib/headlab.js';

self.onmessage = async ({ data: { folder, threads, ids, ablate } }) => {
  try {
    const lab = await createHeadlab();
    const model = await lab.loadPretrained(folder, { threads, cache: false });
    const live = lab.liveWorkerCount();
    const r = await model.run(ids, { attention: true, allLogits: true, ablate });
    const lens = await model.logitLens(ids, { topK: 3 });
    const gen = await model.generate(ids.slice(0, 3), { maxTokens: 4, seed: 5 });
    const out = {
      threads: model.threads, note: model.threadsNote, live, logits: r.logits, attention: r.attention, lens: lens.layers,
      gen: Array.from(gen.ids),
    };
    model.dispose();
    out.after = lab.liveWorkerCount();
    self.postMessage(out);
  } catch (e) {
    self.postMessage({ error: `${e.name}: ${e.message}` });
  }
};
