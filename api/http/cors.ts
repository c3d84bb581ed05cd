/**
 * CORS for browser apps on other origins, off unless an allow-list is configured (`CORS_ALLOWED_ORIGINS`).
 * Every call sends `Authorization`, so browsers preflight: the preflight is answered here, before auth.
 * An allowed origin may send the headers the official clients send (`x-stainless-*`, Anthropic's `x-api-key` and `anthropic-*`), `Idempotency-Key`
 * and the simulation headers, and may read the gateway's response headers. Only paths under `prefix`
 * (`/v1`) are covered; other routes keep their own policy.
 */
import type Koa from 'koa';
import { PermissionDeniedError } from '../../core/errors';

const ALLOWED_HEADERS = ['authorization', 'content-type', 'idempotency-key', 'x-request-id', 'openai-organization', 'openai-project', 'x-api-key'];
const ALLOWED_HEADER_PREFIXES = ['x-stainless-', 'x-simulate-', 'anthropic-'];
export const EXPOSED_HEADERS = [
  'x-request-id', 'x-credits-used', 'x-model-used', 'x-fallback-from', 'x-fallback-depth', 'x-idempotent-replayed',
  'x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests', 'retry-after', 'server-timing',
];
const METHODS = 'GET, POST, PUT, DELETE, OPTIONS';
/** How long a browser may reuse a preflight answer. */
const MAX_AGE_SECONDS = 600;

export function corsMiddleware(opts: { origins: string[]; prefix: string }): Koa.Middleware {
  const anyOrigin = opts.origins.includes('*');
  const allowed = (origin: string) => anyOrigin || opts.origins.includes(origin);
  return async (ctx, next) => {
    const origin = ctx.get('origin');
    if (opts.origins.length === 0 || !origin || !(ctx.path === opts.prefix || ctx.path.startsWith(`${opts.prefix}/`))) {
      await next();
      return;
    }
    ctx.vary('Origin');
    const preflight = ctx.method === 'OPTIONS' && ctx.get('access-control-request-method') !== '';
    if (!allowed(origin)) {
      if (preflight) throw new PermissionDeniedError(`Origin '${origin}' may not call this API from a browser.`, { code: 'cors_origin_not_allowed' });
      await next();
      return;
    }
    ctx.set('access-control-allow-origin', anyOrigin ? '*' : origin);
    if (!preflight) {
      ctx.set('access-control-expose-headers', EXPOSED_HEADERS.join(', '));
      await next();
      return;
    }
    const requested = ctx.get('access-control-request-headers').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean);
    const refused = requested.find((h) => !ALLOWED_HEADERS.includes(h) && !ALLOWED_HEADER_PREFIXES.some((p) => h.startsWith(p)));
    if (refused) throw new PermissionDeniedError(`Header '${refused}' may not be sent to this API from a browser.`, { code: 'cors_header_not_allowed' });
    ctx.set('access-control-allow-methods', METHODS);
    ctx.set('access-control-allow-headers', requested.join(', ') || ALLOWED_HEADERS.join(', '));
    ctx.set('access-control-max-age', String(MAX_AGE_SECONDS));
    ctx.status = 204;
  };
}
