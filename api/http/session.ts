/**
 * Signed-in people: a random session token in an HttpOnly, SameSite=Lax cookie (the database keeps only
 * its hash). State-changing requests made with the cookie must come from our own origin (Sec-Fetch-Site,
 * else Origin): SameSite alone leaves same-site subdomains and old browsers open to cross-site forms.
 */
import type Koa from 'koa';
import type { Knex } from 'knex';
import { AuthenticationError, PermissionDeniedError } from '../../core/errors';
import { SESSION_TTL_MS, getUser, sessionByToken, type User } from '../../domain/accounts';

export const SESSION_COOKIE = 'gw_session';

export function hasSessionCookie(ctx: Koa.Context): boolean {
  return Boolean(ctx.cookies.get(SESSION_COOKIE));
}

export function setSessionCookie(ctx: Koa.Context, token: string): void {
  ctx.cookies.set(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'lax', secure: ctx.secure, path: '/', maxAge: SESSION_TTL_MS, overwrite: true });
}

export function clearSessionCookie(ctx: Koa.Context): void {
  ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', secure: ctx.secure, path: '/', maxAge: 0, overwrite: true });
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** This server's own origin, from the connection (and X-Forwarded-* only with `proxy`), never a request's Origin header. */
export function ownOrigin(ctx: Koa.Context): string {
  return `${ctx.protocol}://${ctx.host}`;
}

/** Refuses a state-changing request that a browser says (or whose Origin shows) came from another site. */
export function requireSameOrigin(ctx: Koa.Context): void {
  if (SAFE_METHODS.has(ctx.method)) return;
  const site = ctx.get('sec-fetch-site');
  const origin = ctx.get('origin');
  const ok = site ? site === 'same-origin' : origin ? origin === ownOrigin(ctx) : false;
  if (!ok) {
    throw new PermissionDeniedError('Cross-origin request refused: state-changing requests with a session must come from this site.', { code: 'cross_origin_request' });
  }
}

export interface SignedInContext {
  sessionId: string;
  workspaceId: string | null;
  user: User;
}

/** The person behind the request's session cookie (null without a live session). */
export async function currentSession(ctx: Koa.Context, db: Knex): Promise<SignedInContext | null> {
  const token = ctx.cookies.get(SESSION_COOKIE);
  if (!token) return null;
  const session = await sessionByToken(db, token);
  if (!session) return null;
  const user = await getUser(db, session.userId);
  return user ? { sessionId: session.id, workspaceId: session.workspaceId, user } : null;
}

export async function requireSession(ctx: Koa.Context, db: Knex): Promise<SignedInContext> {
  const signedIn = await currentSession(ctx, db);
  if (!signedIn) throw new AuthenticationError('Sign in first: your session is missing or has expired.', { code: 'not_signed_in' });
  return signedIn;
}
