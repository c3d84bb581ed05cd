/**
 * `Authorization: Bearer <key>`: the key's shape is checked before any query, then it is looked up by
 * hash (with its workspace's plan, whose presets fill the key's unset quotas) and compared in constant time.
 */
import type Koa from 'koa';
import type { Knex } from 'knex';
import { hashApiKey, hashesEqual, looksLikeApiKey } from '../../domain/api-keys';
import { AuthenticationError } from '../../core/errors';
import type { Role } from '../../domain/workspaces';

export interface AuthContext {
  keyId: string;
  workspaceId: string;
  role: Role;
  /** Effective limits (the key's own, else its plan's preset; null = unlimited). */
  rpmLimit: number | null;
  dailyTokenLimit: number | null;
  allowedModels: string[] | null;
  costCapMicro: number | null;
  planId: string | null;
}

export function authMiddleware(db: Knex): Koa.Middleware {
  return async (ctx, next) => {
    const header = ctx.get('authorization');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) {
      throw new AuthenticationError('You did not provide an API key. Send it in the Authorization header as "Bearer <API_KEY>".', { code: 'missing_api_key' });
    }
    const key = match[1];
    if (!looksLikeApiKey(key)) throw invalidKey(key);
    const hash = hashApiKey(key);
    const row = await db('api_keys as k')
      .leftJoin('workspaces as w', 'w.id', 'k.workspace_id')
      .leftJoin('plans as p', 'p.id', 'w.plan_id')
      .where('k.key_hash', hash)
      .first(
        'k.id', 'k.key_hash', 'k.workspace_id', 'k.role', 'k.revoked_at', 'k.rpm_limit', 'k.daily_token_limit',
        'k.allowed_models', 'k.cost_cap_micro', 'w.plan_id', 'p.rpm_preset', 'p.daily_token_cap',
      );
    if (!row || !hashesEqual(row.key_hash, hash)) throw invalidKey(key);
    if (row.revoked_at) throw new AuthenticationError('This API key has been revoked.', { code: 'revoked_api_key' });
    const auth: AuthContext = {
      keyId: row.id,
      workspaceId: row.workspace_id,
      role: row.role,
      rpmLimit: row.rpm_limit ?? row.rpm_preset ?? null,
      dailyTokenLimit: row.daily_token_limit ?? row.daily_token_cap ?? null,
      allowedModels: row.allowed_models,
      costCapMicro: row.cost_cap_micro,
      planId: row.plan_id,
    };
    ctx.state.auth = auth;
    await next();
  };
}

function invalidKey(key: string): AuthenticationError {
  const hint = key.length > 8 ? `${key.slice(0, 6)}****${key.slice(-4)}` : '****';
  return new AuthenticationError(`Incorrect API key provided: ${hint}.`, { code: 'invalid_api_key' });
}
