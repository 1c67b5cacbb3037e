// ESLint flat config: `npm run lint` (or `npx eslint .`); scripts/test.mjs runs it as its first stage.
// Rules: ESLint's recommended set, import-x's checks that imports resolve, no import cycles, and
// the rooms' one-way arrows (docs/contributing.md).
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
      'components/', 'components.tmp-*/',  // the package's built elements (npm pack's prepack writes them)
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
      'import-x/no-unresolved': ['error', { ignore: ['^headlab:', '^/', '/gen/'] }],
      'import-x/named': 'error',
      'import-x/no-self-import': 'error',
      // The rooms' arrows point one way (docs/architecture.md): each zone is an arrow that must not exist.
      'import-x/no-restricted-paths': ['error', {
        zones: [
          { target: './web/lib', from: './web/components', message: 'web/lib/ is below the elements: it never imports web/components/.' },
          { target: './web/lib/api', from: './web/lib/teach', message: 'the API (web/lib/api/) never imports the elements\' logic (web/lib/teach/).' },
          { target: './web', from: ['./scripts', './tools', './tests', './bench'], message: 'what is shipped (web/) never imports the repository\'s commands, tools, tests or benchmarks.' },
          { target: './scripts', from: './tests', message: 'scripts/ never imports tests/: move what both need to tools/.' },
          { target: './tests', from: './scripts', message: 'tests/ never imports scripts/: move what both need to tools/.' },
          { target: './tools', from: ['./scripts', './tests', './bench'], message: 'tools/ is what scripts/, tests/ and bench/ share: it imports none of them.' },
        ],
      }],
    },
  },
  {
    // The recipes are projects of their own: `headlab` (and what they import from it) resolves once
    // tests/browser/recipes.test.mjs has installed the tarball into a copy of each.
    files: ['examples/recipes/**'],
    rules: { 'import-x/no-unresolved': ['error', { ignore: ['^headlab(/|$)', '/node_modules/headlab/'] }] },
  },
  {
    // Classic scripts: injected into pages, or loaded by pages with <script src>.
    files: ['tests/engines/capture.js', 'web/lib/headlab-embed.js', 'web/site/page.js'],
    languageOptions: { sourceType: 'script' },
  },
];
