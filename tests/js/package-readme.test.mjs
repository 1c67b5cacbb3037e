// tools/package-readme.mjs: the tarball's README.md is docs/package-readme.md with its links to
// files the tarball lacks pointed at the repository (tests/browser/recipes.test.mjs checks the
// tarball itself).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageReadme, repositoryUrl } from '../../tools/package-readme.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const source = 'See [the API](docs/api.md), [a part](docs/api.md#multi-core), [all](docs/), [changes](CHANGELOG.md), [npm](https://www.npmjs.com/) and [below](#install).\n';

test('links to docs/ point to the repository named by package.json, others stay', () => {
  const pkg = { files: ['CHANGELOG.md'], repository: { type: 'git', url: 'git+https://example.org/course/headlab.git' } };
  assert.equal(packageReadme({ source, pkg }),
    'See [the API](https://example.org/course/headlab/blob/HEAD/docs/api.md), [a part](https://example.org/course/headlab/blob/HEAD/docs/api.md#multi-core), ' +
    '[all](https://example.org/course/headlab/blob/HEAD/docs/), [changes](CHANGELOG.md), [npm](https://www.npmjs.com/) and [below](#install).\n');
});

test('without a repository, such a link becomes the file\'s path in the repository, not a dead link', () => {
  assert.equal(packageReadme({ source, pkg: { files: ['CHANGELOG.md'] } }),
    'See the API (`docs/api.md` in the repository), a part (`docs/api.md#multi-core` in the repository), all (`docs/` in the repository), ' +
    '[changes](CHANGELOG.md), [npm](https://www.npmjs.com/) and [below](#install).\n');
});

test('repository shorthands and git URLs become web addresses', () => {
  assert.equal(repositoryUrl({ repository: 'course/headlab' }), 'https://github.com/course/headlab');
  assert.equal(repositoryUrl({ repository: 'github:course/headlab' }), 'https://github.com/course/headlab');
  assert.equal(repositoryUrl({ repository: { url: 'git+https://example.org/x/y.git' } }), 'https://example.org/x/y');
  assert.equal(repositoryUrl({}), null);
});

// Issue 32: the installed README's links into docs/ led nowhere. The project has no public home to
// name yet (an invented repository address would send readers to someone else's), so the user's docs
// ship in the tarball: every link of the real package README names a file the tarball holds.
test('every link of the package README names a file the tarball holds', () => {
  const pkg = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8'));
  const links = [...packageReadme({ pkg }).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((l) => !l.startsWith('#') && !/^https?:/.test(l));
  assert.ok(links.filter((l) => l.startsWith('docs/')).length >= 5, `links into docs/: ${links.join(', ')}`);
  for (const link of links) {
    const file = link.replace(/#.*$/, '');
    assert.ok(existsSync(path.join(repo, file)), `${link}: ${file} exists`);
    assert.ok(pkg.files.includes(file) || /^(README|LICENSE)/.test(file), `${link} is shipped in the tarball`);
  }
  assert.equal(repositoryUrl(pkg), null, 'no repository address is invented');
});
