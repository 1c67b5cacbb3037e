// ESLint flat config: `npm run lint` (or `npx eslint .`); scripts/test.mjs runs it as its first stage.
// Rules: ESLint's recommended set, import-x's checks that imports resolve, no import cycles, the
// rooms' one-way arrows, and the layout (@stylistic; `npm run format` fixes it) (docs/contributing.md).
import js from '@eslint/js';
import stylistic from '@stylistic/eslint-plugin';
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
    // The layout, as the code is written: `npm run format` (eslint --fix .) applies every rule but
    // max-len, whose long lines are wrapped by hand. Only rules the tree already (nearly) kept are on,
    // so the formatter never rewrites code wholesale (Prettier would change ~13,900 of 30,200 lines).
    // Not deprecated ones: object-curly-spacing and array-bracket-spacing warn on every run, and their
    // successor list-style also forces one item per line in any wrapped list.
    ignores: [
      'web/lib/teach/choosing-h-table.js',                  // written by scripts/choosing-h-table.mjs
      'web/components/shared/elements/reserved-heights.js', // written by scripts/element-heights.mjs
    ],
    plugins: { '@stylistic': stylistic },
    rules: {
      '@stylistic/indent': ['error', 2, { SwitchCase: 1 }],
      '@stylistic/max-len': ['error', {
        code: 140, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true,
      }],
      '@stylistic/semi': ['error', 'always'],
      '@stylistic/semi-spacing': 'error',
      '@stylistic/semi-style': 'error',
      '@stylistic/no-extra-semi': 'error',
      '@stylistic/quotes': ['error', 'single', { avoidEscape: true, allowTemplateLiterals: 'always' }],
      '@stylistic/comma-dangle': ['error', 'always-multiline'],
      '@stylistic/comma-spacing': 'error',
      '@stylistic/comma-style': 'error',
      '@stylistic/brace-style': ['error', '1tbs', { allowSingleLine: true }],
      '@stylistic/operator-linebreak': ['error', 'after', { overrides: { '?': 'before', ':': 'before' } }],
      '@stylistic/arrow-parens': ['error', 'always'],
      '@stylistic/arrow-spacing': 'error',
      '@stylistic/block-spacing': 'error',
      '@stylistic/key-spacing': 'error',
      '@stylistic/keyword-spacing': 'error',
      '@stylistic/space-before-blocks': 'error',
      '@stylistic/space-before-function-paren': ['error', { anonymous: 'always', named: 'never', asyncArrow: 'always' }],
      '@stylistic/space-in-parens': ['error', 'never'],
      '@stylistic/space-infix-ops': 'error',
      '@stylistic/space-unary-ops': 'error',
      '@stylistic/computed-property-spacing': 'error',
      '@stylistic/function-call-spacing': 'error',
      '@stylistic/rest-spread-spacing': 'error',
      '@stylistic/template-curly-spacing': 'error',
      '@stylistic/template-tag-spacing': 'error',
      '@stylistic/generator-star-spacing': ['error', { before: false, after: true }],
      '@stylistic/yield-star-spacing': ['error', 'after'],
      '@stylistic/switch-colon-spacing': 'error',
      '@stylistic/dot-location': ['error', 'property'],
      '@stylistic/no-whitespace-before-property': 'error',
      '@stylistic/new-parens': 'error',
      '@stylistic/no-floating-decimal': 'error',
      '@stylistic/wrap-iife': ['error', 'inside'],
      // Lined-up end-of-line comments are kept; other runs of spaces are not.
      '@stylistic/no-multi-spaces': ['error', { ignoreEOLComments: true }],
      '@stylistic/spaced-comment': ['error', 'always', { markers: ['/'], exceptions: ['-', '*', '='] }],
      '@stylistic/padded-blocks': ['error', 'never'],
      '@stylistic/lines-between-class-members': ['error', 'always', { exceptAfterSingleLine: true }],
      '@stylistic/no-multiple-empty-lines': ['error', { max: 1, maxEOF: 0, maxBOF: 0 }],
      '@stylistic/no-trailing-spaces': 'error',
      '@stylistic/eol-last': 'error',
      '@stylistic/linebreak-style': ['error', 'unix'],
      '@stylistic/no-tabs': 'error',
      '@stylistic/no-mixed-spaces-and-tabs': 'error',
    },
  },
  {
    // The worked example's matrices are written row by row (`[1,0,0,0,  0,0,1,0, …]`), as README.md shows them.
    files: ['examples/api/browser-worker.js', 'examples/api/forward.mjs'],
    rules: { '@stylistic/comma-spacing': 'off', '@stylistic/no-multi-spaces': 'off' },
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
