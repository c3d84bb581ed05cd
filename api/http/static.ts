/**
 * The web app: vite's build output served from the same process. Files under /assets are content-hashed
 * and cached for a year; any other GET that is not the API (/v1, /api, /health, the probes) gets index.html, so the
 * app's own routes (/settings/keys, /verify?token=...) load on a refresh or from an e-mail link.
 *
 * Every page carries a Content-Security-Policy without inline scripts or styles (vite emits the app, its CSS
 * and the ALTCHA widget's worker as files under /assets) and `Referrer-Policy: no-referrer`, so the token
 * in a verification, reset or invitation link never leaves in a Referer header.
 */
import fs from 'node:fs';
import path from 'node:path';
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

/** Paths the server answers itself (API, operators' endpoints), never the app's index. */
const API_PATHS = /^\/(v1|api|health|healthz|livez|readyz|codec|metrics)(\/|$)/;

export function webAppMiddleware(webDir: string): Koa.Middleware {
  const root = path.resolve(webDir);
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
    ctx.body = fs.createReadStream(file);
  };
}
