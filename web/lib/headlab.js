// HeadLab: multi-head attention in WebAssembly SIMD, as an ES module.
// A thin layer over the Embind build: it checks arguments, copies typed arrays
// into one reusable arena in the wasm heap, and copies results out.
// Works in browsers (main thread and Workers) and in Node 20.
//
// This file is the entry; the code is in api/, one module per job:
//   load.js            the wasm modules' flavours, instantiate(), the SIMD probe
//   checks.js          argument checks and the option names of every call
//   memory.js          the heap cap and the arena of one call
//   lab.js             the Headlab class and createHeadlab (cached per flavour)
//   forward.js         the forward pass and AttentionLayer
//   experiments.js     scalingExperiment, headsTrial
//   parallel.js        ParallelLayer: the forward pass in Workers
//   session.js         what Trainer and LanguageModel share
//   trainer.js         createTrainer, loadTrainer, Trainer
//   language-model.js  languageTasks, createLanguageModel, loadLanguageModel, LanguageModel
//   pretrained.js      loadPretrained, PretrainedModel (with pretrained-files.js: where the files
//                      come from; pretrained-config.js: config.json)
// and headlab-files.js, next to this file, names the files loaded by URL.
export { Headlab, createHeadlab, createHeadlab as default } from './api/lab.js';
export { simdSupported } from './api/load.js';
export { AttentionLayer } from './api/forward.js';
export { ParallelLayer } from './api/parallel.js';
export { Trainer } from './api/trainer.js';
export { LanguageModel } from './api/language-model.js';
export { PretrainedModel } from './api/pretrained.js';
