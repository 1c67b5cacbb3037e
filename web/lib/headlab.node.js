// HeadLab's entry under Node (the package's "node" export condition): the API of headlab.js,
// with fs.readFile handed to it for reading the .wasm files. headlab.js names no Node built-in,
// so browsers and browser bundles (the "browser" and "default" conditions) never meet one.
import { readFile } from 'node:fs/promises';

globalThis[Symbol.for('headlab.readFile')] ??= readFile;

export * from './headlab.js';
export { default } from './headlab.js';
