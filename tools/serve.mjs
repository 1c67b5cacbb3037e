// The static server of the demo site and of the browser tests and benchmarks: serve() and the
// headers it can send. The command line (`npm start`, `node scripts/serve.mjs`) is scripts/serve.mjs.
// serve() isolates the pages (COOP/COEP, see ISOLATION_HEADERS) only when asked, or when
// HEADLAB_ISOLATION=1 is set (so the browser tests can be run against isolated pages).
import { readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sirv from 'sirv';

export const STRICT_CSP =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'";

// What makes a page cross-origin isolated (crossOriginIsolated, SharedArrayBuffer, wasm threads):
// it opens no window it shares a browsing context group with, and embeds only resources that
// opt in. Every file also says any origin may embed it (CORP), so pages elsewhere (isolated or
// not) can still load the module and the components from this server.
export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};
export const CORP_HEADER = ['Cross-Origin-Resource-Policy', 'cross-origin'];

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The HTML file a request names, or null: `dir/` and `dir` mean `dir/index.html`. */
function htmlFile(root, url) {
  let pathname;
  try { pathname = decodeURIComponent(new URL(url, 'http://localhost').pathname); } catch { return null; }
  let file = path.join(root, pathname);
  if (file !== root && !file.startsWith(root + path.sep)) return null;
  try {
    if (statSync(file).isDirectory()) file = path.join(file, 'index.html');
    return file.endsWith('.html') && statSync(file).isFile() ? file : null;
  } catch {
    return null;
  }
}

/**
 * The encodings of `header` (a request's Accept-Encoding) that HeadLab has precompressed copies
 * for, as sirv reads them: 'br, gzip', 'gzip', … or '' (q=0 refuses one; `*` accepts both).
 */
export function acceptedEncodings(header = '') {
  const accepted = new Map();
  for (const part of String(header).split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';').map((x) => x.trim());
    if (!name) continue;
    const q = params.find((p) => p.startsWith('q='));
    const weight = q ? Number(q.slice(2)) : 1;
    accepted.set(name, Number.isFinite(weight) ? weight : 0);
  }
  const ok = (name) => (accepted.has(name) ? accepted.get(name) > 0 : (accepted.get('*') ?? 0) > 0);
  return ['br', 'gzip'].filter(ok).join(', ');
}

/** `html` with `tag` as the first element of <head> (after <meta charset>), or right after the doctype. */
function injectInto(html, tag) {
  const at = /<meta\s+charset[^>]*>/i.exec(html) ?? /<head[^>]*>/i.exec(html) ?? /<!doctype[^>]*>/i.exec(html);
  return at ? html.slice(0, at.index + at[0].length) + tag + html.slice(at.index + at[0].length) : tag + html;
}

/**
 * Starts serving `root` on 127.0.0.1. Resolves to { url, close }.
 * With `csp`, every response carries the strict Content-Security-Policy above.
 * With `inject: { path, script }` (tests), the JavaScript source `script` is served at
 * `path` and every HTML page loads it first, as a same-origin file so the strict CSP allows it.
 * `onResponse({ method, url, status })` is called for every response (tests record HTTP errors).
 * `cors`: true sends `Access-Control-Allow-Origin: *` with every file, so pages on other origins
 * can load the module build; a function of the request's pathname chooses per file (tests).
 * `isolate`: every response carries ISOLATION_HEADERS, so the pages are cross-origin isolated
 * (default: HEADLAB_ISOLATION=1 in the environment).
 * `drop` (tests): a function of the request's pathname, asked on every request; where it returns
 * true the connection is closed with no answer, which a page's fetch sees as the network gone.
 * Every response carries CORP_HEADER either way.
 */
export function serve({ port = 8080, root = path.join(repo, 'web'), csp = false, inject = null, onResponse = null, cors = false, isolate = process.env.HEADLAB_ISOLATION === '1', drop = null } = {}) {
  if (drop !== null && typeof drop !== 'function') throw new TypeError(`serve: drop must be a function of the request's pathname or null, got ${typeof drop}`);
  root = path.resolve(root);
  // Precompressed copies (scripts/bundle.mjs writes <file>.br and <file>.gz) go to clients that
  // accept them, br first, with Content-Encoding, the original's Content-Type and Vary:
  // Accept-Encoding. A range request gets the original: its offsets count the file's own bytes.
  const compressed = sirv(root, { dev: true, etag: true, brotli: true, gzip: true });
  const plain = sirv(root, { dev: true, etag: true });
  const files = (req, res, next) => {
    const encodings = req.headers.range ? '' : acceptedEncodings(req.headers['accept-encoding']);
    if (!encodings) {
      res.setHeader('Vary', 'Accept-Encoding');
      return plain(req, res, next);
    }
    req.headers['accept-encoding'] = encodings;
    return compressed(req, res, next);
  };
  const tag = inject && `<script src="${inject.path}"></script>`;
  const server = http.createServer((req, res) => {
    if (drop?.(new URL(req.url, 'http://localhost').pathname)) return req.socket.destroy();
    if (csp) res.setHeader('Content-Security-Policy', STRICT_CSP);
    if (isolate) for (const [name, value] of Object.entries(ISOLATION_HEADERS)) res.setHeader(name, value);
    res.setHeader(...CORP_HEADER);
    if (cors === true || (typeof cors === 'function' && cors(new URL(req.url, 'http://localhost').pathname))) {
      res.setHeader('Access-Control-Allow-Origin', '*');
    }
    if (onResponse) res.on('finish', () => onResponse({ method: req.method, url: req.url, status: res.statusCode }));
    if (inject) {
      const send = (type, body) => {
        res.setHeader('Content-Type', type);
        res.setHeader('Cache-Control', 'no-store');
        res.setHeader('Content-Length', Buffer.byteLength(body));
        res.end(req.method === 'HEAD' ? undefined : body);
      };
      if (new URL(req.url, 'http://localhost').pathname === inject.path) return send('text/javascript; charset=utf-8', inject.script);
      const file = htmlFile(root, req.url);
      if (file) return send('text/html; charset=utf-8', injectInto(readFileSync(file, 'utf8'), tag));
    }
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
      resolve({ url: `http://127.0.0.1:${actual}/`, close: () => new Promise((r) => { server.close(r); server.closeAllConnections(); }) });
    });
  });
}
