/**
 * API keys as members see them in Settings: quota presets (one per plan, plus custom), and the workspace's
 * keys with their owner, last use and usage. A key's secret is shown once, at creation; lists carry only
 * the prefix and the last four characters.
 */
import type { Knex } from 'knex';
import { InvalidRequestError } from '../core/errors';
import { microToCredits } from '../core/money';
import { listPlans } from './plans';
import type { ApiKeyQuotas } from './workspaces';

export interface KeyPreset {
  id: string;
  name: string;
  rpm: number | null;
  daily_tokens: number | null;
  models: string[] | null;
  cost_cap: number | null;
}

export async function keyPresets(db: Knex): Promise<KeyPreset[]> {
  const plans = await listPlans(db);
  return [
    ...plans.map((p) => ({ id: p.id, name: `${p.name} preset`, rpm: p.rpmPreset, daily_tokens: p.dailyTokenCap, models: null, cost_cap: null })),
    { id: 'custom', name: 'Custom', rpm: null, daily_tokens: null, models: null, cost_cap: null },
  ];
}

/** The quotas a new key gets: the preset's, with custom values (from the request) taking precedence. */
export async function quotasFromPreset(db: Knex, presetId: string, custom: ApiKeyQuotas): Promise<ApiKeyQuotas> {
  const preset = (await keyPresets(db)).find((p) => p.id === presetId);
  if (!preset) throw new InvalidRequestError(`Unknown preset '${presetId}'.`, { param: 'preset', code: 'preset_not_found' });
  return {
    rpm: custom.rpm ?? preset.rpm,
    dailyTokens: custom.dailyTokens ?? preset.daily_tokens,
    models: custom.models ?? preset.models,
    costCap: custom.costCap ?? preset.cost_cap,
  };
}

export interface KeyListing {
  object: 'organization.api_key';
  id: string;
  name: string;
  kind: 'project' | 'admin';
  redacted_value: string;
  role: string;
  preset: string | null;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  owner: { type: 'user' | 'operator'; user: { id: string; email: string; name: string } | null };
  quotas: { rpm: number | null; daily_tokens: number | null; models: string[] | null; cost_cap: number | null };
  usage: { requests: number; credits: number };
}

const seconds = (at: unknown) => (at ? Math.floor(new Date(at as string).getTime() / 1000) : null);

/** Keys of a workspace (of one kind; optionally only one member's), newest first, with their usage. */
export async function listKeys(db: Knex, opts: { workspaceId: string; kind: 'project' | 'admin'; userId?: string; keyId?: string }): Promise<KeyListing[]> {
  const query = db('api_keys as k')
    .leftJoin('users as u', 'u.id', 'k.created_by_user_id')
    .where({ 'k.workspace_id': opts.workspaceId, 'k.kind': opts.kind })
    .select(
      'k.*', 'u.email as owner_email', 'u.name as owner_name',
      db.raw('(select count(*) from usage_records r where r.api_key_id = k.id)::bigint as requests'),
      db.raw('(select coalesce(sum(credits_micro), 0) from usage_records r where r.api_key_id = k.id)::bigint as spent'),
    )
    .orderBy('k.created_at', 'desc');
  if (opts.userId) query.andWhere('k.created_by_user_id', opts.userId);
  if (opts.keyId) query.andWhere('k.id', opts.keyId);
  const rows = await query;
  return rows.map((r) => ({
    object: 'organization.api_key',
    id: r.id,
    name: r.name,
    kind: r.kind,
    redacted_value: `${r.prefix}…${r.last4}`,
    role: r.role,
    preset: r.preset,
    created_at: seconds(r.created_at)!,
    last_used_at: seconds(r.last_used_at),
    revoked_at: seconds(r.revoked_at),
    owner: r.created_by_user_id
      ? { type: 'user', user: { id: r.created_by_user_id, email: r.owner_email, name: r.owner_name } }
      : { type: 'operator', user: null },
    quotas: {
      rpm: r.rpm_limit, daily_tokens: r.daily_token_limit, models: r.allowed_models,
      cost_cap: r.cost_cap_micro === null ? null : microToCredits(r.cost_cap_micro),
    },
    usage: { requests: Number(r.requests), credits: microToCredits(Number(r.spent)) },
  }));
}
