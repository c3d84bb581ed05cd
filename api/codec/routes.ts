/**
 * The operators' window into encrypted histories: Temporal's remote codec protocol for the Web UI and the
 * `temporal` CLI. `POST /codec/decode` and `POST /codec/encode` take and answer
 * `{"payloads":[{"metadata":{"<key>":"<base64>"},"data":"<base64>"}]}` (protobuf JSON of Payloads).
 *
 * Open only to operators, never to API keys: `Authorization: Bearer <OPERATOR_TOKEN>` (the CLI's
 * `--codec-auth`, a proxy), or the session cookie that signing in at `/codec/session` sets, since the Web UI
 * can send the browser's cookies ("Include cross-origin credentials") but no header of our choosing. Browsers
 * may call it from the configured Web UI origins only.
 */
import Router, { type RouterMiddleware } from '@koa/router';
import type { Payload } from '@temporalio/common';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { AuthenticationError, InvalidRequestError, NotFoundError, PermissionDeniedError } from '../../core/errors';
import { PayloadDecryptionError } from '../../infra/payload-codec';
import { readJsonBody } from '../http/body';
import type { AppDeps, GatewayContext, GatewayState } from '../http/context';

const SESSION_COOKIE = 'gateway_codec_session';
const SESSION_MS = 12 * 3600_000;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

export function codecRouter(deps: AppDeps): Router<GatewayState> {
  const { codec, token } = deps.operators;
  const router = new Router<GatewayState>({ prefix: '/codec' });
  router.use(corsFor(new Set(deps.config.codecCorsOrigins)));

  router.options(['/decode', '/encode'], (ctx) => {
    ctx.set('access-control-allow-methods', 'POST, OPTIONS');
    ctx.set('access-control-allow-headers', 'content-type, x-namespace, authorization');
    ctx.set('access-control-max-age', '600');
    ctx.status = 204;
  });

  for (const direction of ['decode', 'encode'] as const) {
    router.post(`/${direction}`, async (ctx) => {
      requireOperator(ctx, token);
      const namespace = ctx.get('x-namespace');
      if (namespace && namespace !== deps.config.temporalNamespace) {
        throw new InvalidRequestError(`This codec serves the namespace '${deps.config.temporalNamespace}' only, not '${namespace}'.`, { code: 'unknown_namespace' });
      }
      const payloads = payloadsFromJson(await readJsonBody(ctx, deps.config.maxJsonBodyBytes));
      const converted: Payload[] = [];
      for (const [i, payload] of payloads.entries()) {
        try {
          converted.push(...(await codec[direction]([payload])));
        } catch (err) {
          if (!(err instanceof PayloadDecryptionError)) throw err;
          throw new InvalidRequestError(`payloads[${i}]: ${err.message}`, { code: 'undecodable_payload', param: `payloads[${i}]` });
        }
      }
      ctx.body = { payloads: converted.map(payloadToJson) };
    });
  }

  router.get('/session', (ctx) => {
    const until = token === null ? null : sessionExpiry(ctx.cookies.get(SESSION_COOKIE), token);
    htmlPage(ctx, until === null
      ? `<form method="post" action="session"><label>Operator token <input type="password" name="token" autocomplete="off" autofocus></label> <button>Sign in</button></form>`
      : `<p>Signed in until ${new Date(until).toISOString()}.</p>`);
  });

  router.post('/session', async (ctx) => {
    if (!ctx.is('application/x-www-form-urlencoded')) {
      throw new InvalidRequestError('Sign in with the form (application/x-www-form-urlencoded, field `token`).', { code: 'invalid_content_type' });
    }
    const form = new URLSearchParams(await readSmallBody(ctx, 4096));
    const offered = form.get('token') ?? '';
    if (token === null || !sameSecret(offered, token)) throw operatorsOnly();
    const expires = Date.now() + SESSION_MS;
    ctx.cookies.set(SESSION_COOKIE, `${expires}.${sessionMac(token, expires)}`, {
      httpOnly: true, sameSite: 'strict', path: '/codec', maxAge: SESSION_MS, secure: ctx.secure, overwrite: true,
    });
    ctx.status = 303;
    ctx.set('location', 'session');
  });

  return router;
}

/**
 * Browsers may call from the configured Web UI origins (and this page's own, for the sign-in form), with
 * credentials; a call from any other origin is refused before it runs. Non-browser clients send no Origin.
 */
function corsFor(allowed: ReadonlySet<string>): RouterMiddleware<GatewayState> {
  return async (ctx, next) => {
    ctx.vary('origin');
    const origin = ctx.get('origin');
    if (origin) {
      if (!allowed.has(origin) && origin !== ownOrigin(ctx)) {
        throw new PermissionDeniedError(`The origin ${origin} may not call the codec endpoint; list it in CODEC_CORS_ORIGINS.`, { code: 'origin_not_allowed' });
      }
      ctx.set('access-control-allow-origin', origin);
      ctx.set('access-control-allow-credentials', 'true');
    }
    await next();
  };
}

/** This server's own origin (Koa's `ctx.origin` is the request's Origin header). */
function ownOrigin(ctx: GatewayContext): string {
  return `${ctx.protocol}://${ctx.host}`;
}

function requireOperator(ctx: GatewayContext, token: string | null): void {
  if (token === null) throw new NotFoundError('The codec endpoint is off: set OPERATOR_TOKEN to open it.', { code: 'codec_endpoint_disabled' });
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'))?.[1];
  if (bearer !== undefined && sameSecret(bearer, token)) return;
  if (sessionExpiry(ctx.cookies.get(SESSION_COOKIE), token) !== null) return;
  throw operatorsOnly();
}

function operatorsOnly(): AuthenticationError {
  return new AuthenticationError('The codec endpoint is for operators: send "Authorization: Bearer <OPERATOR_TOKEN>", or sign in at /codec/session for the Web UI.', { code: 'operator_token_required' });
}

function sameSecret(offered: string, secret: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(offered), digest(secret));
}

/** A session cookie is `<expiry ms>.<HMAC of the expiry under the operator token>`: a new token ends every session. */
function sessionMac(token: string, expires: number): string {
  return createHmac('sha256', token).update(`codec-session:${expires}`).digest('base64url');
}

function sessionExpiry(cookie: string | undefined, token: string): number | null {
  const [expiresText, mac] = (cookie ?? '').split('.');
  const expires = Number(expiresText);
  if (!mac || !Number.isSafeInteger(expires) || expires <= Date.now()) return null;
  return sameSecret(mac, sessionMac(token, expires)) ? expires : null;
}

function htmlPage(ctx: GatewayContext, content: string): void {
  ctx.set('content-security-policy', "default-src 'none'; form-action 'self'; frame-ancestors 'none'");
  ctx.type = 'html';
  ctx.body = `<!doctype html><meta charset="utf-8"><title>Gateway codec: operator sign-in</title>
<h1>Encrypted workflow histories</h1>${content}
<p>In the Temporal Web UI's codec server settings, use the endpoint <code>${escapeHtml(ownOrigin(ctx))}/codec</code> and enable
"Include cross-origin credentials"; the UI then decodes histories with this browser's session.</p>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

async function readSmallBody(ctx: GatewayContext, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new InvalidRequestError(`The sign-in form is limited to ${limit} bytes.`, { code: 'request_too_large' });
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function payloadsFromJson(body: Record<string, unknown>): Payload[] {
  const list = body.payloads;
  if (!Array.isArray(list)) throw new InvalidRequestError('The body must be {"payloads": [...]}, as in Temporal\'s codec protocol.', { code: 'invalid_payloads', param: 'payloads' });
  return list.map((item: JsonPayload, i) => {
    const invalid = () => new InvalidRequestError(`payloads[${i}] must be {"metadata": {"<key>": "<base64>"}, "data": "<base64>"}.`, { code: 'invalid_payloads', param: `payloads[${i}]` });
    if (!item || typeof item !== 'object' || Array.isArray(item)) throw invalid();
    const metadata = item.metadata ?? {};
    if (typeof metadata !== 'object' || Array.isArray(metadata)) throw invalid();
    const isBase64 = (v: unknown): v is string => typeof v === 'string' && BASE64.test(v);
    if (!Object.values(metadata).every(isBase64) || (item.data !== undefined && !isBase64(item.data))) throw invalid();
    return {
      metadata: Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
      data: Buffer.from(item.data ?? '', 'base64'),
    };
  });
}

function payloadToJson(payload: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')])),
    data: Buffer.from(payload.data ?? []).toString('base64'),
  };
}
