/**
 * The dashboard: a single page served by the daemon at `/`, with its assets under /dashboard/.
 * It is plain ES modules (./assets) on Preact and htm, read from the installed packages, so nothing
 * is fetched from any network and the package ships it as it is. The page and its files need no
 * token (they hold no data); the page signs in by asking for a token and keeps it in the tab's
 * sessionStorage, then calls /api/v1 with `Authorization: Bearer` and opens the stream with the
 * token in a WebSocket subprotocol (browsers cannot set headers there). The token is never in a
 * request URL, so it never reaches a log line or a Referer; a signed-in link (`organism dashboard`)
 * carries it in the fragment, which browsers do not send, and the page removes it from the address
 * bar and the history entry as it starts.
 *
 * Registered before authentication (see http.ts). Each answer carries its own Content-Security-
 * Policy: scripts, styles and connections from this origin only, no inline script, no framing.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Context, Hono } from 'hono';

/** The page's policy: its own files only (`data:` images for the empty favicon). */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer;
}

const ASSETS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'assets');

/**
 * The libraries, as ES modules from their packages. hooks imports the bare name `preact`, which a
 * browser cannot resolve without an import map (an inline script, which the policy refuses), so
 * it is pointed at the served file instead.
 */
function vendorFiles(): Record<string, string> {
  const require = createRequire(import.meta.url);
  const read = (path: string) => readFileSync(path, 'utf8').replace(/\/\/# sourceMappingURL=.*$/m, '');
  return {
    'preact.js': read(require.resolve('preact')),
    'hooks.js': read(require.resolve('preact/hooks')).replace(/from\s*["']preact["']/g, 'from"./preact.js"'),
    // htm's ES module build sits beside the CommonJS one its `require` export names.
    'htm.js': read(join(dirname(require.resolve('htm')), 'htm.module.js')),
    // The overview's graph layout (dagre with graphlib inside, one ES module of no imports).
    'dagre.js': read(join(dirname(require.resolve('@dagrejs/dagre')), 'dagre.esm.js')),
  };
}

/** Every file the page may load, by URL path, read once on first use. */
function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const add = (path: string, text: string | Buffer) => {
    const body = Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8');
    assets.set(path, {
      type: TYPES[extname(path)] ?? 'application/octet-stream',
      body,
      gzip: gzipSync(body),
    });
  };
  const walk = (dir: string, prefix: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name), `${prefix}${entry.name}/`);
      else if (TYPES[extname(entry.name)]) add(`${prefix}${entry.name}`, readFileSync(join(dir, entry.name)));
    }
  };
  if (existsSync(ASSETS_DIR)) walk(ASSETS_DIR, '/dashboard/');
  for (const [name, text] of Object.entries(vendorFiles())) add(`/dashboard/vendor/${name}`, text);
  const page = assets.get('/dashboard/index.html');
  if (page) assets.set('/', page);
  return assets;
}

let cache: Map<string, Asset> | undefined;

/** The dashboard's files: URL path -> content (the bench and tests measure the first load from it). */
export function dashboardAssets(): ReadonlyMap<string, Asset> {
  cache ??= loadAssets();
  return cache;
}

function answer(c: Context, asset: Asset): Response {
  const gzip = /\bgzip\b/.test(c.req.header('accept-encoding') ?? '');
  const headers: Record<string, string> = {
    'content-type': asset.type,
    'content-security-policy': DASHBOARD_CSP,
    vary: 'accept-encoding',
  };
  if (gzip) headers['content-encoding'] = 'gzip';
  return c.body(new Uint8Array(gzip ? asset.gzip : asset.body), 200, headers);
}

/** GET / and GET /dashboard/*: registered before the API's authentication. */
export function dashboardRoutes(app: Hono<any>): void {
  app.get('/', (c) => {
    const page = dashboardAssets().get('/');
    return page ? answer(c, page) : c.text('dashboard assets missing from this build', 500);
  });
  app.get('/dashboard/*', (c) => {
    const asset = dashboardAssets().get(c.req.path);
    if (asset) return answer(c, asset);
    return c.json({ error: { code: 'request.not_found', message: `no dashboard file ${c.req.path}` } }, 404);
  });
}
