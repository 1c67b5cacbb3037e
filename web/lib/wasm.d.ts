// Types of the package's `.wasm` subpath exports (`headlab/wasm/<name>.wasm`), as bundlers that load
// `.wasm` files as assets give them: the emitted file's URL (esbuild `--loader:.wasm=file`, webpack
// `type: 'asset/resource'`). package.json points the exports' "types" condition here.
declare const url: string;
export default url;
