// Static server for the demo site:
//   node scripts/serve.mjs [--port 8080] [--root web] [--csp] [--cors] [--no-isolation]
// Prints the URL. --port 0 picks a free port. Used by `npm start`; the server itself is
// tools/serve.mjs, which the browser tests and benchmarks import.
// From the command line the pages are cross-origin isolated (COOP/COEP, see ISOLATION_HEADERS in
// tools/serve.mjs) unless --no-isolation is given or HEADLAB_ISOLATION=0 is set.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../tools/serve.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const args = process.argv.slice(2);
const value = (flag, fallback) => {
  const i = args.indexOf(flag);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
const port = Number(value('--port', process.env.PORT ?? 8080));
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`serve: --port must be an integer 0..65535, got ${value('--port', process.env.PORT)}`);
  process.exit(2);
}
const root = path.resolve(value('--root', path.join(repo, 'web')));
const isolate = !args.includes('--no-isolation') && !['0', 'false', 'no', 'off'].includes(String(process.env.HEADLAB_ISOLATION ?? '').toLowerCase());
try {
  const { url } = await serve({ port, root, csp: args.includes('--csp'), cors: args.includes('--cors'), isolate });
  const how = isolate ? 'cross-origin isolated: COOP/COEP sent; --no-isolation or HEADLAB_ISOLATION=0 to turn off' : 'not cross-origin isolated';
  console.log(`HeadLab demo site: ${url}  (serving ${path.relative(process.cwd(), root) || '.'}; ${how}; Ctrl+C to stop)`);
} catch (e) {
  console.error(`serve: cannot listen on 127.0.0.1:${port}: ${e.message}. Try PORT=8081 npm start`);
  process.exit(1);
}
