import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export default {
  mode: 'production',
  context: here,
  entry: './src/main.js',
  // An ES module bundle, loaded with <script type="module">: webpack finds its chunks and the .wasm
  // files from import.meta.url. (A classic bundle guesses its folder from the last <script> of the
  // page when it is loaded as a module, and then asks for its chunks in the wrong folder:
  // ChunkLoadError. Set output.publicPath if you keep a classic bundle.)
  experiments: { outputModule: true },
  output: { module: true, path: path.join(here, 'dist'), filename: 'main.js', clean: true },
  // webpack's size hint (244 KiB) is for scripts: the .wasm modules and the trained models (.hlm) are
  // larger by nature and each is fetched only when a page uses it, so they are left out of the check;
  // the elements' largest shared chunk (about 260 KiB) loads when the page first shows an element.
  performance: { assetFilter: (file) => !/\.(wasm|hlm)$/.test(file), maxAssetSize: 320 * 1024 },
};
