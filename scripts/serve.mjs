// Static server for the demo site: `node scripts/serve.mjs [--port 8080] [--root web] [--csp]`.
// Prints the URL. --port 0 picks a free port. Used by `npm start` and the browser tests.
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sirv from 'sirv';

export const STRICT_CSP =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Starts serving `root` on 127.0.0.1. Resolves to { url, close }.
 * With `csp`, every response carries the strict Content-Security-Policy above.
 */
export function serve({ port = 8080, root = path.join(repo, 'web'), csp = false } = {}) {
  const files = sirv(root, { dev: true, etag: true });
  const server = http.createServer((req, res) => {
    if (csp) res.setHeader('Content-Security-Policy', STRICT_CSP);
    files(req, res, () => {
      res.statusCode = 404;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.end(`Not found: ${req.url}\n`);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: actual } = server.address();
      resolve({ url: `http://127.0.0.1:${actual}/`, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
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
  try {
    const { url } = await serve({ port, root, csp: args.includes('--csp') });
    console.log(`HeadLab demo site: ${url}  (serving ${path.relative(process.cwd(), root) || '.'}; Ctrl+C to stop)`);
  } catch (e) {
    console.error(`serve: cannot listen on 127.0.0.1:${port}: ${e.message}. Try PORT=8081 npm start`);
    process.exit(1);
  }
}
