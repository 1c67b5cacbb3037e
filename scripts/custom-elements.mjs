// Writes custom-elements.json, web/components/headlab-components.d.ts and web/components/types/*.d.ts
// (React, Vue, Svelte) from the elements' sources (tools/custom-elements.mjs); --check fails when one is stale.
//   node scripts/custom-elements.mjs [--check]
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, MANIFEST, TYPES, frameworkTypesFile } from '../tools/custom-elements.mjs';

const repo = path.resolve(path.dirname(MANIFEST));
const { manifest, types, frameworks } = await describe();
const files = [[MANIFEST, manifest], [TYPES, types], ...Object.entries(frameworks).map(([f, text]) => [frameworkTypesFile(f), text])];
if (process.argv.includes('--check')) {
  for (const [file, text] of files) {
    if ((await readFile(file, 'utf8').catch(() => '')) !== text) {
      console.error(`custom-elements: ${path.relative(repo, file)} is stale: run node scripts/custom-elements.mjs`);
      process.exit(1);
    }
  }
} else {
  for (const [file, text] of files) {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text);
  }
  console.log(`custom-elements: ${files.map(([f]) => path.relative(repo, f)).join(', ')} written`);
}
