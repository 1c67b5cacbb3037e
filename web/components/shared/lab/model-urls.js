// Where a shipped model file (web/models/*.hlm) is fetched from. The npm package's build names
// each with a literal new URL('./models/<file>', import.meta.url) (headlab:layout's modelUrls),
// which Vite, webpack and esbuild rewrite to the emitted asset; a URL built from a template
// would be left as it is and 404 in a production build. The site's bundles keep the models in
// models/ next to themselves (modelUrls null).

import { BASE_URL } from './assets.js';
import { modelUrls } from 'headlab:layout';

const MODELS_DIR = new URL('models/', BASE_URL).href;

/** The URL of shipped model `file` ('induction.hlm', …). */
export function shippedModelUrl(file) {
  if (modelUrls) {
    const url = modelUrls[file];
    if (!url) throw new RangeError(`HeadLab ships no model file ${JSON.stringify(file)} (known: ${Object.keys(modelUrls).join(', ')})`);
    return url().href;
  }
  return new URL(file, MODELS_DIR).href;
}
