// Where the bundle lives, so fonts, the wasm file and the Worker script are
// found next to it wherever dist/ is copied. In the module build this is
// import.meta.url; the classic (file://) build defines it from document.currentScript.
// (Through a variable: bundlers that emit the files of `new URL('<literal>', import.meta.url)`
// would take './' for a file; the files themselves are named literally where they are loaded.)
const here = import.meta.url;
export const BASE_URL = new URL('./', here).href;

/** True when the page was opened from the file system. */
export const FROM_FILE = typeof location !== 'undefined' && location.protocol === 'file:';
