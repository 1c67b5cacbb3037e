// After `npm pack` / `npm publish` (and their --dry-run): the repository's README.md back in place
// of the package's, which scripts/prepack.mjs put there (tools/package-readme.mjs).
import { swapOut } from '../tools/package-readme.mjs';

swapOut();
