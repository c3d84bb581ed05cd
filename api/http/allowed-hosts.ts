/**
 * DNS rebinding: a page of another site can point its own host name at the gateway's address, and the
 * browser then sends it requests as same-origin ones, naming that host in `Host`. Only the host names the
 * gateway answers for (config/env.ts `allowedHosts`: ALLOWED_HOSTS, PUBLIC_URL's host, the listen address,
 * the loopback names) get through; any other is answered 421 before anything else is read.
 */
import type Koa from 'koa';
import { normalizeHostName } from '../../config/env';
import { MisdirectedRequestError } from '../../core/errors';

export function allowedHostsMiddleware(allowed: readonly string[]): Koa.Middleware {
  const names = new Set(allowed.map(normalizeHostName));
  return async (ctx, next) => {
    const host = normalizeHostName(ctx.hostname);
    if (!names.has(host)) {
      throw new MisdirectedRequestError(
        `This server does not answer for the host '${ctx.hostname.slice(0, 253)}'. Use its own address (the operator lists others in ALLOWED_HOSTS).`,
        { code: 'host_not_allowed' },
      );
    }
    await next();
  };
}
