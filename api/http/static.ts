/**
 * The web app: vite's build output served from the same process. Files under /assets are content-hashed
 * and cached for a year; any other GET that is not the API (/v1, /api, /health, the probes) gets index.html, so the
 * app's own routes (/settings/keys, /verify?token=...) load on a refresh or from an e-mail link.
 *
 * Every page carries a Content-Security-Policy without inline scripts or styles (vite emits the app, its CSS
 * and the ALTCHA widget's worker as files under /assets) and `Referrer-Policy: no-referrer`, so the token
 * in a verification, reset or invitation link never leaves in a Referer header.
 *
 * Text files (the app's JS, CSS, HTML, SVG) go out compressed, brotli or gzip as the browser accepts: each file is
 * compressed once, on its first request, and kept in memory for as long as it is unchanged on disk.
 */
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type Koa from 'koa';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon', '.json': 'application/json', '.woff2': 'font/woff2', '.txt': 'text/plain; charset=utf-8',
};

/** What the app's pages may load: only our own files, workers and API, media it made itself (blob:, data:), and no frames. */
export const APP_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "worker-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Types worth compressing; images and fonts are compressed already. */
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt']);

type Encoding = 'br' | 'gzip';

/** The encoding to send for an Accept-Encoding header: brotli where accepted, else gzip, else none (q=0 refuses one). */
export function chooseEncoding(acceptEncoding: string | undefined): Encoding | null {
  const accepted = new Set<string>();
  for (const part of (acceptEncoding ?? '').toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (name && !(q && Number(q.slice(2)) === 0)) accepted.add(name.trim());
  }
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip') || accepted.has('*')) return 'gzip';
  return null;
}

/** Compressed bytes by file, encoding and version on disk (the app's files are few and change only on a deploy). */
const compressedFiles = new Map<string, { version: string; bytes: Promise<Buffer> }>();
const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/** Compressed off the event loop (zlib's thread pool): the app's main script takes about a second at this quality. */
function compressedFile(file: string, stat: fs.Stats, encoding: Encoding): Promise<Buffer> {
  const key = `${encoding}:${file}`;
  const version = `${stat.size}:${stat.mtimeMs}`;
  const cached = compressedFiles.get(key);
  if (cached?.version === version) return cached.bytes;
  const bytes = fs.promises.readFile(file).then((raw) => encoding === 'br'
    ? brotli(raw, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 10, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length } })
    : gzip(raw, { level: 9 }));
  bytes.catch(() => compressedFiles.delete(key));
  compressedFiles.set(key, { version, bytes });
  return bytes;
}

/** Compresses the app's text files ahead of their first request, in the background. */
function warmCompressed(root: string): void {
  const files = [path.join(root, 'index.html'), ...fs.readdirSync(path.join(root, 'assets'), { withFileTypes: true })
    .filter((entry) => entry.isFile()).map((entry) => path.join(root, 'assets', entry.name))];
  for (const file of files.filter((f) => COMPRESSIBLE.has(path.extname(f)))) {
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (stat) for (const encoding of ['br', 'gzip'] as const) compressedFile(file, stat, encoding).catch(() => undefined);
  }
}

/** Paths the server answers itself (API, operators' endpoints), never the app's index. */
const API_PATHS = /^\/(v1|api|health|healthz|livez|readyz|codec|metrics)(\/|$)/;

export function webAppMiddleware(webDir: string): Koa.Middleware {
  const root = path.resolve(webDir);
  if (fs.existsSync(path.join(root, 'assets'))) warmCompressed(root);
  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || API_PATHS.test(ctx.path)) return next();
    const index = path.join(root, 'index.html');
    if (!fs.existsSync(index)) return next();
    let decoded: string;
    try {
      decoded = decodeURIComponent(ctx.path);
    } catch {
      return next(); // not a path any file of the app has
    }
    if (decoded.includes('\0')) return next();
    const requested = path.resolve(root, `.${decoded}`);
    const isFile = requested.startsWith(`${root}${path.sep}`) && fs.statSync(requested, { throwIfNoEntry: false })?.isFile();
    const file = isFile ? requested : index;
    if (!isFile && path.extname(ctx.path)) return next(); // a missing asset is a 404, not the app
    ctx.type = TYPES[path.extname(file)] ?? 'application/octet-stream';
    ctx.set('cache-control', file.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
    ctx.set('x-content-type-options', 'nosniff');
    if (file === index) {
      ctx.set('x-frame-options', 'DENY');
      ctx.set('content-security-policy', APP_CONTENT_SECURITY_POLICY);
      ctx.set('referrer-policy', 'no-referrer');
    }
    const encoding = COMPRESSIBLE.has(path.extname(file)) ? chooseEncoding(ctx.get('accept-encoding')) : null;
    if (COMPRESSIBLE.has(path.extname(file))) ctx.vary('Accept-Encoding');
    if (encoding) {
      ctx.set('content-encoding', encoding);
      ctx.body = await compressedFile(file, fs.statSync(file), encoding);
      return;
    }
    ctx.body = fs.createReadStream(file);
  };
}
