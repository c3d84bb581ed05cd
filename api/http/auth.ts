/**
 * Who is calling, as `ctx.state.auth`:
 * - `Authorization: Bearer <key>` (or `x-api-key: <key>`, as Anthropic's clients send it): the key's shape is checked before any query, then it is looked up by
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
import { ROLES, type Role } from '../../domain/workspaces';
import { can, lowerRole } from '../../domain/permissions';
import { memberRole } from '../../domain/members';
import { PostgresWindowCounters } from '../../domain/rate-limits';
import { currentSession, hasSessionCookie, requireSameOrigin } from './session';
import { checkIp, ipRefusal, ipWindowOf, type IpNet } from './ip-limit';
import { countedKeyLookup, keyLookupQuery, keyStanding, type KeyRow } from './key-lookup';

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
  /**
   * Whether the workspace may spend: false while the person who made it at sign-up has not confirmed their
   * e-mail address (api/http/permissions.ts refuses the spending permissions then).
   */
  workspaceActive: boolean;
  /** The workspace's fallback chains by source model, read with the key (null for a session: read when needed). */
  fallbackChains: Record<string, string[]> | null;
}

/** Routes a signed-in person may call with the session cookie (the rest need an API key). */
const SESSION_ROUTES = /^\/v1\/(organization|billing|budget|fallback-chains|models|batches|files)(\/|$)/;

export interface AuthOptions {
  /** The per-IP net, counted here (api/http/ip-limit.ts): its refusal is the answer, whatever the authentication found. */
  ipNet?: IpNet;
  /**
   * Whether this request goes on to the key quotas (a model endpoint) once authenticated and allowed: its
   * key's rpm hit is then counted with the lookup when the counters are in Postgres (`ctx.state.rpmHit`).
   */
  reachesKeyQuotas?: (ctx: Koa.Context) => boolean;
}

export function authMiddleware(db: Knex, opts: AuthOptions = {}): Koa.Middleware {
  return async (ctx, next) => {
    ctx.state.auth = await authenticate(ctx, db, opts);
    await next();
  };
}

function authenticate(ctx: Koa.Context, db: Knex, opts: AuthOptions): Promise<AuthContext> {
  // Anthropic's clients send the key as `x-api-key`.
  const apiKey = ctx.get('x-api-key').trim();
  const header = ctx.get('authorization') || (apiKey ? `Bearer ${apiKey}` : '');
  if (!header && hasSessionCookie(ctx) && SESSION_ROUTES.test(ctx.path)) return afterIpCheck(ctx, opts, sessionAuth(ctx, db));
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) {
    return afterIpCheck(ctx, opts, Promise.reject(new AuthenticationError('You did not provide an API key. Send it in the Authorization header as "Bearer <API_KEY>".', { code: 'missing_api_key' })));
  }
  const key = match[1];
  const countersPool = opts.ipNet?.counters instanceof PostgresWindowCounters ? opts.ipNet.counters.db : null;
  if (countersPool && opts.ipNet && looksLikeApiKey(key)) return countedKeyAuth(ctx, db, countersPool, key, opts.ipNet, opts.reachesKeyQuotas?.(ctx) ?? false);
  return afterIpCheck(ctx, opts, keyAuth(db, key));
}

/**
 * The per-IP check runs alongside the authentication: its refusal is the answer whatever the authentication
 * found, as if it had been awaited first.
 */
async function afterIpCheck(ctx: Koa.Context, opts: AuthOptions, authenticating: Promise<AuthContext>): Promise<AuthContext> {
  if (!opts.ipNet) return authenticating;
  const [ip, who] = await Promise.allSettled([checkIp(ctx, opts.ipNet), authenticating]);
  if (ip.status === 'rejected') throw ip.reason;
  if (who.status === 'rejected') throw who.reason;
  return who.value;
}

/**
 * The per-IP hit, the key lookup and (on a model endpoint) the key's rpm hit in one statement on the
 * counters' pool (api/http/key-lookup.ts). The rpm window counts exactly when the request would reach the
 * key quotas: within the IP's limit, a live key whose kind and effective role pass the guards that follow.
 */
async function countedKeyAuth(ctx: Koa.Context, db: Knex, countersPool: Knex, key: string, ipNet: IpNet, reachesKeyQuotas: boolean): Promise<AuthContext> {
  const ip = ipWindowOf(ctx, ipNet);
  const hash = hashApiKey(key);
  const looked = await countedKeyLookup(countersPool, { hash, ip, countingRpm: reachesKeyQuotas ? { standings: STANDINGS_REACHING_KEY_QUOTAS } : null });
  const refusal = ipRefusal(looked.ipHit, ip.windowMs);
  if (refusal) throw refusal;
  const auth = await keyAuthOf(db, key, hash, looked.row);
  if (looked.rpmHit) ctx.state.rpmHit = looked.rpmHit;
  return auth;
}

async function keyAuth(db: Knex, key: string): Promise<AuthContext> {
  if (!looksLikeApiKey(key)) throw invalidKey(key);
  const hash = hashApiKey(key);
  const [row] = await preparedRows<KeyRow>(db, keyLookupQuery(db, hash));
  return keyAuthOf(db, key, hash, row ?? null);
}

/** The caller a looked-up key row makes (or why it makes none). */
async function keyAuthOf(db: Knex, key: string, hash: string, row: KeyRow | null): Promise<AuthContext> {
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
    role: effectiveKeyRole(row.role, row.creator_role),
    via: keyVia(row.kind),
    userId: row.created_by_user_id,
    rpmLimit: row.rpm_limit ?? row.rpm_preset ?? null,
    dailyTokenLimit: row.daily_token_limit ?? row.daily_token_cap ?? null,
    tokensUsedToday: Number(row.tokens_today ?? 0),
    allowedModels: row.allowed_models,
    costCapMicro: row.cost_cap_micro,
    planId: row.plan_id,
    workspaceActive: row.workspace_activated_at != null,
    fallbackChains: row.fallback_chains ?? {},
  };
}

/** A key never outranks its creator (an operator's key has none). */
function effectiveKeyRole(role: Role, creatorRole: Role | null): Role {
  return creatorRole ? lowerRole(role, creatorRole) : role;
}

function keyVia(kind: 'project' | 'admin'): AuthContext['via'] {
  return kind === 'admin' ? 'admin_key' : 'key';
}

/**
 * The (kind, role, creator role) combinations of keys that pass the guards between authentication and the
 * key quotas on a model endpoint (keyKindGuard, then requirePermission('models.use')), for the statement
 * that counts their rpm hit with the lookup (which also leaves out keys of a workspace not yet active).
 */
const STANDINGS_REACHING_KEY_QUOTAS: readonly string[] = (['project', 'admin'] as const).flatMap((kind) =>
  ROLES.flatMap((role) => [...ROLES, null].map((creator) => ({ kind, role, creator }))))
  .filter(({ kind, role, creator }) => !keyKindRefusal(keyVia(kind), false) && can(effectiveKeyRole(role, creator), 'models.use'))
  .map(({ kind, role, creator }) => keyStanding(kind, role, creator));

/** The signed-in member as a caller (the Playground spends as them: see api/playground/runs.ts). */
export async function sessionAuth(ctx: Koa.Context, db: Knex): Promise<AuthContext> {
  const signedIn = await currentSession(ctx, db);
  if (!signedIn) throw new AuthenticationError('Sign in first: your session is missing or has expired.', { code: 'not_signed_in' });
  requireSameOrigin(ctx);
  const role = signedIn.workspaceId ? await memberRole(db, signedIn.workspaceId, signedIn.user.id) : null;
  if (!signedIn.workspaceId || !role) throw new PermissionDeniedError('Choose a workspace first.', { code: 'no_workspace' });
  const workspace = await db('workspaces').where({ id: signedIn.workspaceId }).first('plan_id', 'activated_at');
  return {
    keyId: signedIn.sessionId, workspaceId: signedIn.workspaceId, role, via: 'session', userId: signedIn.user.id,
    rpmLimit: null, dailyTokenLimit: null, tokensUsedToday: 0, allowedModels: null, costCapMicro: null, planId: workspace?.plan_id ?? null,
    workspaceActive: workspace?.activated_at != null, fallbackChains: null,
  };
}

/** Admin keys serve the organization management API only; project keys everything else. */
export function keyKindGuard(): Koa.Middleware {
  return async (ctx, next) => {
    const auth = ctx.state.auth as AuthContext;
    const refusal = keyKindRefusal(auth.via, ctx.path === '/v1/organization' || ctx.path.startsWith('/v1/organization/'));
    if (refusal) throw refusal;
    await next();
  };
}

function keyKindRefusal(via: AuthContext['via'], organization: boolean): PermissionDeniedError | null {
  if (organization && via === 'key') {
    return new PermissionDeniedError('The organization API takes an admin key (sk-admin-...) or a signed-in session, not a project API key.', { code: 'admin_key_required' });
  }
  if (!organization && via === 'admin_key') {
    return new PermissionDeniedError('Admin keys serve only /v1/organization; use a project API key here.', { code: 'project_key_required' });
  }
  return null;
}

function invalidKey(key: string): AuthenticationError {
  const hint = key.length > 8 ? `${key.slice(0, 6)}****${key.slice(-4)}` : '****';
  return new AuthenticationError(`Incorrect API key provided: ${hint}.`, { code: 'invalid_api_key' });
}
