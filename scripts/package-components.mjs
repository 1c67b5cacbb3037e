// Builds the elements for the npm package into components/ (tools/package-components.mjs);
// `npm pack` does it too (scripts/prepack.mjs).
//   node scripts/package-components.mjs
import { buildComponents } from '../tools/package-components.mjs';

const { files } = await buildComponents();
console.log(`package-components: components/ written (${files.length} entries)`);
