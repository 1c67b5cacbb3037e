// A stand-in for the Hugging Face hub, for the pretrained-model tests: serves the checkpoints of
// tests/golden/pretrained/ (or any folder) on 127.0.0.1 at the hub's URLs,
//   /<org>/<name>/resolve/<revision>/<file>   (revision URL-encoded: refs%2Fpr%2F1)
// as the hub does: Content-Length on every file, safetensors files redirected (302) to a CDN URL
// (the hub redirects LFS files to its CDN), 404 for files a repository lacks, CORS headers, and
// `Connection: close` (Node's fetch and a keep-alive socket do not mix in one test process).
// Faults on demand: `cut` (send part of a file, then drop the connection), `stall` (send part,
// then wait until the client goes away), `lie` (a Content-Length larger than the file), `chunked`
// (no Content-Length at all).
// Also serves static files from `staticRoot` at /static/… (a page for the browser test).
import http from 'node:http';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Repositories from a folder: each sub-folder `name` becomes `<org>/<name>` at revision 'main'.
 * @returns {Map<string, Map<string, Map<string, Buffer>>>} repo → revision → file → bytes
 */
export function reposFromFolder(root, org = 'headlab-test') {
  const repos = new Map();
  for (const name of readdirSync(root)) {
    const dir = path.join(root, name);
    if (!statSync(dir).isDirectory()) continue;
    const files = new Map();
    for (const f of readdirSync(dir)) files.set(f, readFileSync(path.join(dir, f)));
    repos.set(`${org}/${name}`, new Map([['main', files]]));
  }
  return repos;
}

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };

/**
 * Starts the stand-in. `repos` as reposFromFolder returns (add or change entries freely before
 * requests are made). Returns { url, requests, faults, close() }: `requests` lists every request
 * ({ method, path }), `faults` maps "<org>/<name>/<file>" to { cut: n } | { stall: n } | { lie: n } | { chunked: true }.
 */
export async function startHub({ repos, staticRoot = null } = {}) {
  const requests = [];
  const faults = new Map();
  const sockets = new Set();
  const cdn = new Map();  // token → { key, bytes }
  let nextToken = 1;

  function send(req, res, key, bytes, type) {
    const fault = faults.get(key);
    const headers = { 'Content-Type': type, 'Content-Length': String(fault?.lie ?? bytes.length), 'Connection': 'close',
      'Access-Control-Allow-Origin': '*', 'Cache-Control': 'no-cache' };
    if (fault?.chunked) {
      // No Content-Length: the body comes in chunks (as from a server that compresses on the fly).
      delete headers['Content-Length'];
      res.writeHead(200, headers);
      if (req.method === 'HEAD') return res.end();
      for (let at = 0; at < bytes.length; at += 16384) res.write(bytes.subarray(at, at + 16384));
      return res.end();
    }
    res.writeHead(200, headers);
    if (req.method === 'HEAD') return res.end();
    if (fault?.cut !== undefined) {
      res.write(bytes.subarray(0, fault.cut), () => setTimeout(() => res.socket?.destroy(), 20));
      return undefined;
    }
    if (fault?.stall !== undefined) {
      res.write(bytes.subarray(0, fault.stall));
      return undefined;  // the rest never comes; the client cancels
    }
    return res.end(bytes);
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    requests.push({ method: req.method, path: url.pathname });
    const notFound = () => {
      res.writeHead(404, { 'Content-Type': 'text/plain', 'Connection': 'close', 'Access-Control-Allow-Origin': '*' });
      res.end(req.method === 'HEAD' ? undefined : 'Entry not found');
    };
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Methods': 'GET, HEAD', 'Connection': 'close' });
      return res.end();
    }
    if (staticRoot && url.pathname.startsWith('/static/')) {
      const file = path.join(staticRoot, decodeURIComponent(url.pathname.slice('/static/'.length)));
      if (!file.startsWith(staticRoot)) return notFound();
      try {
        const bytes = readFileSync(file);
        return send(req, res, '', bytes, TYPES[path.extname(file)] ?? 'application/octet-stream');
      } catch {
        return notFound();
      }
    }
    const c = url.pathname.match(/^\/cdn\/(\d+)$/);
    if (c) {
      const hit = cdn.get(Number(c[1]));
      return hit ? send(req, res, hit.key, hit.bytes, 'application/octet-stream') : notFound();
    }
    const m = url.pathname.match(/^\/([^/]+)\/([^/]+)\/resolve\/([^/]+)\/([^/]+)$/);
    if (!m) return notFound();
    const [, org, name, rev, file] = m.map(decodeURIComponent);
    const bytes = repos.get(`${org}/${name}`)?.get(rev)?.get(file);
    if (!bytes) return notFound();
    const key = `${org}/${name}/${file}`;
    if (file.endsWith('.safetensors') || file.endsWith('.bin')) {
      const token = nextToken++;
      cdn.set(token, { key, bytes });
      res.writeHead(302, { Location: `/cdn/${token}`, 'Connection': 'close', 'Access-Control-Allow-Origin': '*', 'Content-Length': '0' });
      return res.end();
    }
    return send(req, res, key, bytes, file.endsWith('.json') ? 'application/json' : 'application/octet-stream');
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    faults,
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

// `node tests/js/hub-server.mjs [folder] [port]`: serve a folder of checkpoints by hand.
if (import.meta.url === `file://${process.argv[1]}`) {
  const root = path.resolve(process.argv[2] ?? 'tests/golden/pretrained');
  const hub = await startHub({ repos: reposFromFolder(root) });
  console.log(`hub stand-in for ${root} at ${hub.url}/headlab-test/<name>/resolve/main/<file>`);
}
