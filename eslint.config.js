// ESLint flat config: `npm run lint` (or `npx eslint .`); scripts/test.mjs runs it as its first stage.
// Rules: ESLint's recommended set, import-x's checks that imports resolve, and no import cycles
// (docs/contributing.md).
import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import globals from 'globals';

// Browser and Node at once: the API (web/lib/) and the elements' logic run in both, guarded by
// `isNode`; test and benchmark files pass functions to pages (page.evaluate) as well.
const everywhere = { ...globals.browser, ...globals.worker, ...globals.node };

export default [
  {
    ignores: [
      'node_modules/', 'build/', 'dist/', 'dist.tmp-*/', 'dist.old-*/',
      'web/lib/gen/',             // Emscripten's generated glue
      'cpp/',                     // the threads build's --pre-js, part of that glue
      'tests/browser/screenshots/',
    ],
  },
  js.configs.recommended,
  {
    plugins: { 'import-x': importX },
    languageOptions: { ecmaVersion: 2024, sourceType: 'module', globals: everywhere },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    settings: { 'import-x/resolver-next': [createNodeResolver()] },
    rules: {
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      'import-x/no-cycle': 'error',
      // headlab:* are the bundle's virtual modules (scripts/bundle.mjs); /lib/… are URLs imported in pages.
      'import-x/no-unresolved': ['error', { ignore: ['^headlab:', '^/'] }],
      'import-x/named': 'error',
      'import-x/no-self-import': 'error',
    },
  },
  {
    // Classic scripts injected into pages.
    files: ['tests/engines/capture.js'],
    languageOptions: { sourceType: 'script' },
  },
];
