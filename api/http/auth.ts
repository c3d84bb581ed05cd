/**
 * Who is calling, as `ctx.state.auth`:
 * - `Authorization: Bearer <key>`: the key's shape is checked before any query, then it is looked up by
 *   hash (with its workspace's plan, whose presets fill the key's unset quotas, and its creator's current
 *   membership) and compared in constant time. A key never outranks its creator: its role is the lower of
 *   the two, and a key whose creator left the workspace stops working.
 * - without a key, on the routes the web app uses, the session cookie of a signed-in person, with their
 *   role in the session's workspace (state-changing requests must be same-origin).
 */
import type Koa from 'koa';
import type { Knex } from 'knex';
import { preparedRows } from '../../db/prepared';
import { hashApiKey, hashesEqual, looksLikeApiKey } from '../../domain/api-keys';
import { AuthenticationError, PermissionDeniedError } from '../../core/errors';
import type { Role } from '../../domain/workspaces';
import { lowerRole } from '../../domain/permissions';
import { memberRole } from '../../domain/members';
import { todaysTokensCondition } from '../../domain/request-accounting';
import { FALLBACK_CHAINS_OF_KEY_WORKSPACE } from '../../domain/workspaces';
import { currentSession, hasSessionCookie, requireSameOrigin } from './session';

export interface AuthContext {
  /** The API key's id; for a signed-in person, their session's id. */
  keyId: string;
  workspaceId: string;
  role: Role;
  /** `key`: a project API key; `admin_key`: an `sk-admin-` key; `session`: a signed-in person. */
  via: 'key' | 'admin_key' | 'session';
  /** The person acting: the signed-in member, or the member who created the key (null: an operator's key). */
  userId: string | null;
  /** Effective limits (the key's own, else its plan's preset; null = unlimited). */
  rpmLimit: number | null;
  dailyTokenLimit: number | null;
  /** Tokens the key used today (UTC) as of this request's authentication (0 for a session). */
  tokensUsedToday: number;
  allowedModels: string[] | null;
  costCapMicro: number | null;
  planId: string | null;
  /** The workspace's fallback chains by source model, read with the key (null for a session: read when needed). */
  fallbackChains: Record<string, string[]> | null;
}

/** Routes a signed-in person may call with the session cookie (the rest need an API key). */
const SESSION_ROUTES = /^\/v1\/(organization|billing|budget|fallback-chains|models)(\/|$)/;

export function authMiddleware(db: Knex): Koa.Middleware {
  return async (ctx, next) => {
    ctx.state.auth = await afterIpCheck(ctx, authenticate(ctx, db));
    await next();
  };
}

function authenticate(ctx: Koa.Context, db: Knex): Promise<AuthContext> {
  const header = ctx.get('authorization');
  if (!header && hasSessionCookie(ctx) && SESSION_ROUTES.test(ctx.path)) return sessionAuth(ctx, db);
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) {
    return Promise.reject(new AuthenticationError('You did not provide an API key. Send it in the Authorization header as "Bearer <API_KEY>".', { code: 'missing_api_key' }));
  }
  return keyAuth(db, match[1]);
}

/**
 * The per-IP check started before authentication (api/http/ip-limit.ts) ran alongside it: its refusal is the
 * answer whatever the authentication found, as if it had been awaited first.
 */
async function afterIpCheck<T>(ctx: Koa.Context, authenticating: Promise<T>): Promise<T> {
  const ipCheck = ctx.state.ipCheck as Promise<void> | undefined;
  if (!ipCheck) return authenticating;
  const [ip, who] = await Promise.allSettled([ipCheck, authenticating]);
  if (ip.status === 'rejected') throw ip.reason;
  if (who.status === 'rejected') throw who.reason;
  return who.value;
}

async function keyAuth(db: Knex, key: string): Promise<AuthContext> {
  if (!looksLikeApiKey(key)) throw invalidKey(key);
  const hash = hashApiKey(key);
  const [row] = await preparedRows<Record<string, any>>(db, db('api_keys as k')
    .leftJoin('workspaces as w', 'w.id', 'k.workspace_id')
    .leftJoin('plans as p', 'p.id', 'w.plan_id')
    .leftJoin('members as m', function () {
      this.on('m.workspace_id', 'k.workspace_id').andOn('m.user_id', 'k.created_by_user_id');
    })
    .leftJoin('key_daily_tokens as d', function () {
      this.on('d.api_key_id', 'k.id').andOn(db.raw(todaysTokensCondition('d')));
    })
    .where('k.key_hash', hash)
    .select(
      'k.id', 'k.key_hash', 'k.workspace_id', 'k.role', 'k.kind', 'k.created_by_user_id', 'k.revoked_at', 'k.last_used_at', 'k.rpm_limit',
      'k.daily_token_limit', 'k.allowed_models', 'k.cost_cap_micro', 'w.plan_id', 'p.rpm_preset', 'p.daily_token_cap', 'm.role as creator_role', 'd.tokens as tokens_today',
      // The workspace's fallback chains come with the key: a model request needs its chain, and this spares it a round trip.
      db.raw(`(${FALLBACK_CHAINS_OF_KEY_WORKSPACE}) as fallback_chains`),
    ).limit(1));
  if (!row || !hashesEqual(row.key_hash, hash)) throw invalidKey(key);
  if (row.revoked_at) throw new AuthenticationError('This API key has been revoked.', { code: 'revoked_api_key' });
  if (row.created_by_user_id && !row.creator_role) {
    throw new AuthenticationError('This API key\'s owner is no longer a member of its workspace.', { code: 'key_owner_removed' });
  }
  // Last use to the minute is enough, and spares a write per request.
  if (!row.last_used_at || Date.now() - new Date(row.last_used_at).getTime() > 60_000) {
    await db('api_keys').where({ id: row.id }).update({ last_used_at: db.fn.now() });
  }
  return {
    keyId: row.id,
    workspaceId: row.workspace_id,
    role: row.creator_role ? lowerRole(row.role, row.creator_role) : row.role,
    via: row.kind === 'admin' ? 'admin_key' : 'key',
    userId: row.created_by_user_id,
    rpmLimit: row.rpm_limit ?? row.rpm_preset ?? null,
    dailyTokenLimit: row.daily_token_limit ?? row.daily_token_cap ?? null,
    tokensUsedToday: Number(row.tokens_today ?? 0),
    allowedModels: row.allowed_models,
    costCapMicro: row.cost_cap_micro,
    planId: row.plan_id,
    fallbackChains: row.fallback_chains ?? {},
  };
}

/** The signed-in member as a caller (the Playground spends as them: see api/playground/runs.ts). */
export async function sessionAuth(ctx: Koa.Context, db: Knex): Promise<AuthContext> {
  const signedIn = await currentSession(ctx, db);
  if (!signedIn) throw new AuthenticationError('Sign in first: your session is missing or has expired.', { code: 'not_signed_in' });
  requireSameOrigin(ctx);
  const role = signedIn.workspaceId ? await memberRole(db, signedIn.workspaceId, signedIn.user.id) : null;
  if (!signedIn.workspaceId || !role) throw new PermissionDeniedError('Choose a workspace first.', { code: 'no_workspace' });
  const plan = await db('workspaces').where({ id: signedIn.workspaceId }).first('plan_id');
  return {
    keyId: signedIn.sessionId, workspaceId: signedIn.workspaceId, role, via: 'session', userId: signedIn.user.id,
    rpmLimit: null, dailyTokenLimit: null, tokensUsedToday: 0, allowedModels: null, costCapMicro: null, planId: plan?.plan_id ?? null,
    fallbackChains: null,
  };
}

/** Admin keys serve the organization management API only; project keys everything else. */
export function keyKindGuard(): Koa.Middleware {
  return async (ctx, next) => {
    const auth = ctx.state.auth as AuthContext;
    const organization = ctx.path === '/v1/organization' || ctx.path.startsWith('/v1/organization/');
    if (organization && auth.via === 'key') {
      throw new PermissionDeniedError('The organization API takes an admin key (sk-admin-...) or a signed-in session, not a project API key.', { code: 'admin_key_required' });
    }
    if (!organization && auth.via === 'admin_key') {
      throw new PermissionDeniedError('Admin keys serve only /v1/organization; use a project API key here.', { code: 'project_key_required' });
    }
    await next();
  };
}

function invalidKey(key: string): AuthenticationError {
  const hint = key.length > 8 ? `${key.slice(0, 6)}****${key.slice(-4)}` : '****';
  return new AuthenticationError(`Incorrect API key provided: ${hint}.`, { code: 'invalid_api_key' });
}
