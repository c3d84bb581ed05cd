/** Workspaces, their API keys and fallback chains: the operations the admin CLI and admin routes share. */
import { preparedRows } from '../db/prepared';
import type { Knex } from 'knex';
import { generateApiKey, ADMIN_KEY_PREFIX, API_KEY_PREFIX } from './api-keys';
import { audit } from './audit';
import { InvalidRequestError, NotFoundError } from '../core/errors';
import { newId } from '../core/ids';
import { topUp } from './ledger';
import { creditsToMicro } from '../core/money';
import { outranks } from './permissions';

export type Role = 'owner' | 'admin' | 'developer' | 'billing' | 'viewer';
export const ROLES: readonly Role[] = ['owner', 'admin', 'developer', 'billing', 'viewer'];

export interface Workspace {
  id: string;
  name: string;
  planId: string | null;
}

/**
 * A new workspace. `activated: false` (sign-up) leaves it unable to spend until the person who made it
 * confirmed their e-mail address (domain/members.ts `activateWorkspacesOf`); every other is active at once.
 */
export async function createWorkspace(db: Knex, opts: { name: string; credits?: number; planId?: string | null; actor: string; activated?: boolean }): Promise<Workspace> {
  const name = opts.name.trim();
  if (!name || name.length > 200) throw new InvalidRequestError('workspace name must be 1 to 200 characters', { param: 'name' });
  const id = newId('ws');
  await db.transaction(async (trx) => {
    await trx('workspaces').insert({ id, name, plan_id: opts.planId ?? null, ...(opts.activated === false ? { activated_at: null } : {}) });
    await audit(trx, { workspaceId: id, actor: opts.actor, action: 'workspace.create', subjectType: 'workspace', subjectId: id, data: { name, planId: opts.planId ?? null } });
  });
  if (opts.credits && opts.credits > 0) {
    await topUp(db, { workspaceId: id, amountMicro: creditsToMicro(opts.credits), idempotencyKey: `topup:${id}:initial`, actor: opts.actor });
  }
  return { id, name, planId: opts.planId ?? null };
}

export async function getWorkspace(db: Knex, id: string): Promise<Workspace> {
  const row = await db('workspaces').where({ id }).first();
  if (!row) throw new NotFoundError(`No workspace '${id}'`, { code: 'workspace_not_found' });
  return { id: row.id, name: row.name, planId: row.plan_id };
}

/** The largest quotas a key takes (each fits its column, and a cost cap its micro-credits a safe integer). */
export const KEY_QUOTA_LIMITS = { rpm: 1_000_000, dailyTokens: 1_000_000_000_000, costCapCredits: 1_000_000_000 } as const;

function costCapToMicro(credits: number): number {
  let micro = 0;
  try {
    micro = creditsToMicro(credits);
  } catch {
    // more than 6 decimals, or not a number written plainly: refused below
  }
  if (!(micro > 0) || credits > KEY_QUOTA_LIMITS.costCapCredits) {
    throw new InvalidRequestError(`cost_cap must be a number of credits from 0.000001 to ${KEY_QUOTA_LIMITS.costCapCredits}, with at most 6 decimals`, { param: 'cost_cap' });
  }
  return micro;
}

export interface ApiKeyQuotas {
  rpm?: number | null;
  dailyTokens?: number | null;
  models?: string[] | null;
  /** Credits (decimal allowed). */
  costCap?: number | null;
}

export interface CreatedApiKey {
  id: string;
  key: string;
  workspace_id: string;
  name: string;
  role: Role;
  prefix: string;
  last4: string;
  rpm_limit: number | null;
  daily_token_limit: number | null;
  allowed_models: string[] | null;
  cost_cap: number | null;
}

export interface ApiKeyOwnership {
  /** The member who made the key (null: an operator, through the CLI); the key never outranks them. */
  createdByUserId?: string | null;
  /** `admin` keys (`sk-admin-`) serve the organization management API only. */
  kind?: 'project' | 'admin';
  /** The quota preset the key was made with (a plan id, or `custom`). */
  preset?: string | null;
}

export async function createApiKey(db: Knex, opts: { workspaceId: string; name: string; role?: Role; quotas?: ApiKeyQuotas; actor: string } & ApiKeyOwnership): Promise<CreatedApiKey> {
  await getWorkspace(db, opts.workspaceId);
  const role = opts.role ?? 'developer';
  if (!ROLES.includes(role)) throw new InvalidRequestError(`role must be one of ${ROLES.join(', ')}`, { param: 'role' });
  if (opts.createdByUserId) await checkKeyRoleWithinCreator(db, opts.workspaceId, opts.createdByUserId, role);
  const q = opts.quotas ?? {};
  for (const [name, value, max] of [['rpm', q.rpm, KEY_QUOTA_LIMITS.rpm], ['daily_tokens', q.dailyTokens, KEY_QUOTA_LIMITS.dailyTokens]] as const) {
    if (value != null && (!Number.isInteger(value) || value <= 0 || value > max)) throw new InvalidRequestError(`${name} must be an integer from 1 to ${max}`, { param: name });
  }
  const costCapMicro = q.costCap != null ? costCapToMicro(q.costCap) : null;
  const kind = opts.kind ?? 'project';
  const prefix = kind === 'admin' ? ADMIN_KEY_PREFIX : API_KEY_PREFIX;
  const { key, hash, last4 } = generateApiKey(prefix);
  const id = newId('key');
  const row = {
    id, workspace_id: opts.workspaceId, name: opts.name, role, prefix, key_hash: hash, last4,
    kind, created_by_user_id: opts.createdByUserId ?? null, preset: opts.preset ?? null,
    rpm_limit: q.rpm ?? null, daily_token_limit: q.dailyTokens ?? null, allowed_models: q.models?.length ? q.models : null,
    cost_cap_micro: costCapMicro,
  };
  await db.transaction(async (trx) => {
    await trx('api_keys').insert(row);
    await audit(trx, { workspaceId: opts.workspaceId, actor: opts.actor, action: 'api_key.create', subjectType: 'api_key', subjectId: id, data: { name: opts.name, role, kind, preset: row.preset, quotas: q } });
  });
  return {
    id, key, workspace_id: opts.workspaceId, name: opts.name, role, prefix, last4,
    rpm_limit: row.rpm_limit, daily_token_limit: row.daily_token_limit, allowed_models: row.allowed_models, cost_cap: q.costCap ?? null,
  };
}

/**
 * A key's stored role never ranks above its creator's role in the workspace (its effective role is capped
 * at every request too, api/http/auth.ts): a role above it is a 400 naming the parameter.
 */
async function checkKeyRoleWithinCreator(db: Knex, workspaceId: string, userId: string, role: Role): Promise<void> {
  const creator = await db('members').where({ workspace_id: workspaceId, user_id: userId }).first('role');
  if (!creator) throw new InvalidRequestError('Only a member of this workspace may create its API keys.', { param: 'role', code: 'not_a_member' });
  if (outranks(role, creator.role)) {
    throw new InvalidRequestError(`A key's role may not rank above its creator's: your role is '${creator.role}', the key asked for '${role}'.`, { param: 'role', code: 'role_above_creator' });
  }
}

export async function revokeApiKey(db: Knex, opts: { keyId: string; actor: string; workspaceId?: string }): Promise<{ id: string; revoked_at: string }> {
  return db.transaction(async (trx) => {
    const query = trx('api_keys').where({ id: opts.keyId });
    if (opts.workspaceId) query.andWhere({ workspace_id: opts.workspaceId });
    const row = await query.first();
    if (!row) throw new NotFoundError(`No API key '${opts.keyId}'`, { code: 'api_key_not_found' });
    const [updated] = await trx('api_keys').where({ id: opts.keyId }).update({ revoked_at: row.revoked_at ?? trx.fn.now() }, ['id', 'revoked_at']);
    await audit(trx, { workspaceId: row.workspace_id, actor: opts.actor, action: 'api_key.revoke', subjectType: 'api_key', subjectId: opts.keyId });
    return { id: updated.id, revoked_at: new Date(updated.revoked_at).toISOString() };
  });
}

/**
 * Sets (or with an empty chain, removes) the ordered fallback chain of one source model. Every model of the
 * chain serves the source's modality (a chat model falls back to chat models, never to an embedding model).
 * `modalityOf` answers an enabled model's modality, or null for an unknown one.
 */
export async function setFallbackChain(db: Knex, opts: {
  workspaceId: string; sourceModel: string; chain: string[]; actor: string; modalityOf: (slug: string) => Promise<string | null>;
}): Promise<{ model: string; chain: string[] }> {
  await getWorkspace(db, opts.workspaceId);
  const chain = opts.chain.map((m) => m.trim()).filter(Boolean);
  if (chain.includes(opts.sourceModel)) throw new InvalidRequestError('a fallback chain cannot contain its own source model', { param: 'chain' });
  if (new Set(chain).size !== chain.length) throw new InvalidRequestError('a fallback chain lists each model once', { param: 'chain' });
  if (chain.length > 5) throw new InvalidRequestError('a fallback chain holds at most 5 models', { param: 'chain' });
  const modalities: string[] = [];
  for (const slug of [opts.sourceModel, ...chain]) {
    const modality = await opts.modalityOf(slug);
    if (!modality) throw new InvalidRequestError(`Unknown model '${slug}'`, { param: 'model', code: 'model_not_found' });
    modalities.push(modality);
  }
  const mismatch = chain.findIndex((_, i) => modalities[i + 1] !== modalities[0]);
  if (mismatch >= 0) {
    throw new InvalidRequestError(
      `'${chain[mismatch]}' is a ${modalities[mismatch + 1]} model; a fallback chain for the ${modalities[0]} model '${opts.sourceModel}' holds only ${modalities[0]} models.`,
      { param: `chain[${mismatch}]`, code: 'fallback_modality_mismatch' },
    );
  }
  await db.transaction(async (trx) => {
    if (chain.length === 0) {
      await trx('fallback_chains').where({ workspace_id: opts.workspaceId, source_model: opts.sourceModel }).delete();
    } else {
      await trx('fallback_chains')
        .insert({ workspace_id: opts.workspaceId, source_model: opts.sourceModel, chain, updated_at: trx.fn.now() })
        .onConflict(['workspace_id', 'source_model']).merge();
    }
    await audit(trx, { workspaceId: opts.workspaceId, actor: opts.actor, action: 'fallback_chain.set', subjectType: 'model', subjectId: opts.sourceModel, data: { chain } });
  });
  return { model: opts.sourceModel, chain };
}

/**
 * Every fallback chain of the workspace `k.workspace_id`, as one JSON object by source model: a subquery the
 * key lookup selects (api/http/auth.ts), so a model request reads its chain with its key.
 */
export const FALLBACK_CHAINS_OF_KEY_WORKSPACE = `select coalesce(jsonb_object_agg(f.source_model, f.chain), '{}'::jsonb) from fallback_chains f where f.workspace_id = k.workspace_id`;

/** The chain of `sourceModel` among a workspace's chains (none: no fallback). */
export function chainOf(chains: Record<string, string[]>, sourceModel: string): string[] {
  return Object.hasOwn(chains, sourceModel) ? chains[sourceModel] : [];
}

export async function getFallbackChain(db: Knex, workspaceId: string, sourceModel: string): Promise<string[]> {
  const [row] = await preparedRows<{ chain: string[] }>(db, db('fallback_chains').where({ workspace_id: workspaceId, source_model: sourceModel }).select('chain').limit(1));
  return row?.chain ?? [];
}

export async function listFallbackChains(db: Knex, workspaceId: string): Promise<Array<{ model: string; chain: string[] }>> {
  const rows = await db('fallback_chains').where({ workspace_id: workspaceId }).orderBy('source_model');
  return rows.map((r) => ({ model: r.source_model, chain: r.chain }));
}
