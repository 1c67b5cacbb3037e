// Chromium Worker for `npm run bench:training`'s language-model part: trains a model with the
// public API (web/lib/headlab.js) and answers { type, config, steps, evalEvery, until } with timings.
import { createHeadlab } from '../../web/lib/headlab.js';

const lab = createHeadlab();

self.onmessage = async (event) => {
  const { type, config, steps, warmup, evalEvery, until } = event.data;
  try {
    const l = await lab;
    const model = await l.createLanguageModel(config);
    if (type === 'speed') {
      model.step(warmup);
      const t0 = performance.now();
      model.step(steps);
      const seconds = (performance.now() - t0) / 1000;
      self.postMessage({ stepsPerSecond: steps / seconds, seconds });
    } else {
      // Phase change: the first evaluation (held-out, 256 sequences) with accuracy >= 0.5, evaluating
      // every evalEvery steps as the demo does; seconds include the evaluations.
      const t0 = performance.now();
      let result = { step: null, seconds: null };
      while (model.steps < until) {
        model.step(evalEvery);
        if (model.evaluate(256).accuracy >= 0.5) {
          result = { step: model.steps, seconds: (performance.now() - t0) / 1000 };
          break;
        }
      }
      self.postMessage(result);
    }
    model.dispose();
  } catch (e) {
    self.postMessage({ error: String(e?.stack ?? e) });
  }
};
