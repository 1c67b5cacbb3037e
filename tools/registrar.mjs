// headlab-components.js (the registrar) is bundled on its own, with the little it imports statically
// inside: its dynamic imports of the elements and of the API stay files of the build that splits the
// rest (entries/<name>.js → elementFile(name), shared/lab/lab-entry.js → headlab-lab.js), so a
// page's first request for an element's code does not wait for a shared chunk.
// Used by scripts/bundle.mjs (the site) and tools/package-components.mjs (the npm package).

/** An esbuild plugin: the registrar's dynamic imports as external files next to it. */
export function registrarExternals(elementFile) {
  return {
    name: 'headlab-registrar-externals',
    setup(b) {
      b.onResolve({ filter: /^\.\/(entries\/[\w-]+|shared\/lab\/lab-entry)\.js$/ }, (args) => {
        if (args.kind !== 'dynamic-import') return null;
        const element = /^\.\/entries\/([\w-]+)\.js$/.exec(args.path);
        return { path: element ? `./${elementFile(element[1])}` : './headlab-lab.js', external: true };
      });
    },
  };
}
