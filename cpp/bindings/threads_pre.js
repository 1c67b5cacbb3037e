// --pre-js of the threaded module (inside its factory). Under Node, Emscripten's glue for
// threads calls require() and reads __dirname, which an ES module lacks: give it both here,
// from process.getBuiltinModule (Node 20.16+), so nothing is set on the global object
// (_scriptDir is the glue's import.meta.url; the build's minifier cannot parse import.meta). In a
// pthread's Worker, headlab_core_threads.worker.js (CommonJS) has put require on the global.
var require = typeof process == 'object' && process.versions && process.versions.node
  ? globalThis.require || process.getBuiltinModule('module').createRequire(_scriptDir)
  : undefined;
var __dirname = require ? require('path').dirname(require('url').fileURLToPath(_scriptDir)) : '';
// The glue's Node branch also sets global.Worker (worker_threads' Worker) and creates its
// thread Workers with `new Worker`: both land on these instead of on Node's global object.
var global = require ? {} : undefined;
var Worker = require ? require('worker_threads').Worker : globalThis.Worker;
