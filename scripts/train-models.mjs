// `npm run train:models` — trains the language models the site ships (the `pretrained` attribute of
// <headlab-language-model>) with fixed seeds, through the public API, and writes them into
// web/models/ with a manifest (web/models/models.json) of what each one scored on held-out data.
// Deterministic: the same build retrains the same bytes (tests/js/shipped-models.test.mjs checks
// one). What is shipped and how it is trained is tools/shipped-models.mjs. Nothing in these files
// is made by hand.
//
//   node scripts/train-models.mjs [--only NAME]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHIPPED, trainShipped } from '../tools/shipped-models.mjs';
import { createHeadlab } from '../web/lib/headlab.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(repo, 'web/models');

const round = (x) => (typeof x === 'number' ? Math.round(x * 1e4) / 1e4 : x);
const roundAll = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, round(v)]));

async function main() {
  const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;
  const lab = await createHeadlab();
  const manifestPath = path.join(dir, 'models.json');
  const manifest = fs.existsSync(manifestPath) ? JSON.parse(fs.readFileSync(manifestPath, 'utf8')) : { models: [] };
  fs.mkdirSync(dir, { recursive: true });
  for (const entry of SHIPPED) {
    if (only && entry.file !== only) continue;
    console.error(`training ${entry.file} (${JSON.stringify(entry.config)})`);
    const r = await trainShipped(lab, entry, console.error);
    fs.writeFileSync(path.join(dir, entry.file), r.bytes);
    const row = {
      file: entry.file, bytes: r.bytes.length, seed: entry.config.seed, steps: r.steps, config: r.config,
      headlab: lab.info().version, flavour: lab.flavour,
      evaluation: roundAll(r.evaluation),
      heads: r.heads.map(roundAll),
    };
    manifest.models = [...manifest.models.filter((m) => m.file !== entry.file), row]
      .sort((a, b) => SHIPPED.findIndex((s) => s.file === a.file) - SHIPPED.findIndex((s) => s.file === b.file));
    console.error(`  ${entry.file}: ${r.bytes.length} bytes in ${r.seconds.toFixed(1)} s; accuracy ${r.evaluation.accuracy.toFixed(3)}; ` +
      `labels ${r.heads.filter((h) => h.label).map((h) => `L${h.layer + 1}H${h.head + 1} ${h.label}`).join(', ') || 'none'}`);
  }
  fs.writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  console.error(`written: ${path.relative(repo, dir)}/`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
