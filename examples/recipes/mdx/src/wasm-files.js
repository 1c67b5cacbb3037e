// esbuild does not follow new URL('…', import.meta.url): import the .wasm files the app uses as
// URLs (the "file" loader in build.mjs emits each) and tell createHeadlab where they are.
// headlab_train* are loaded by trainers and language models; headlab_pretrained* by loadPretrained.
import core from 'headlab/wasm/headlab_core.wasm';
import coreScalar from 'headlab/wasm/headlab_core_scalar.wasm';
import train from 'headlab/wasm/headlab_train.wasm';
import trainScalar from 'headlab/wasm/headlab_train_scalar.wasm';

const urls = {
  'headlab_core.wasm': core, 'headlab_core_scalar.wasm': coreScalar,
  'headlab_train.wasm': train, 'headlab_train_scalar.wasm': trainScalar,
};

export function locateFile(file) {
  return new URL(urls[file] ?? file, import.meta.url).href;
}
