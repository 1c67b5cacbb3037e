// Writes custom-elements.json and web/components/headlab-components.d.ts from the elements' sources
// (tools/custom-elements.mjs); --check fails when either is stale.
//   node scripts/custom-elements.mjs [--check]
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, MANIFEST, TYPES } from '../tools/custom-elements.mjs';

const repo = path.resolve(path.dirname(MANIFEST));
const { manifest, types } = await describe();
if (process.argv.includes('--check')) {
  for (const [file, text] of [[MANIFEST, manifest], [TYPES, types]]) {
    if ((await readFile(file, 'utf8').catch(() => '')) !== text) {
      console.error(`custom-elements: ${path.relative(repo, file)} is stale: run node scripts/custom-elements.mjs`);
      process.exit(1);
    }
  }
} else {
  await writeFile(MANIFEST, manifest);
  await writeFile(TYPES, types);
  console.log('custom-elements: custom-elements.json and web/components/headlab-components.d.ts written');
}
