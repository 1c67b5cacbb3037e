export default {
  worker: { format: 'es' },                 // HeadLab's Workers load the WebAssembly glue with import()
  optimizeDeps: { exclude: ['headlab'] },   // `vite` (dev): keep the .wasm files next to the module
};
