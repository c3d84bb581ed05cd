/**
 * The API key lookup of every request made with a key, and the same lookup counting the request's window
 * hits in one statement: the per-IP net, and the key's requests-per-minute window when the request would
 * reach the key quotas (api/http/key-quotas.ts). With the window counters in Postgres (the default), a model
 * request then takes one statement before its workflow instead of three. Whether the rpm window counts is
 * decided by the caller's rules, handed in as the (kind, role, creator role) combinations that pass them:
 * the statement only matches them, so each rule still lives once (domain/permissions.ts, api/http/auth.ts).
 */
import type { Knex } from 'knex';
import { preparedRows } from '../../db/prepared';
import { currentWindow, windowHit, windowUpsertSql, type WindowHit } from '../../domain/rate-limits';
import { todaysTokensCondition } from '../../domain/request-accounting';
import { FALLBACK_CHAINS_OF_KEY_WORKSPACE } from '../../domain/workspaces';

/** A key as looked up: its own fields, its workspace's plan presets, its creator's role, today's tokens, the fallback chains. */
export type KeyRow = Record<string, any>;

/** The lookup by hash (at most one row). */
export function keyLookupQuery(db: Knex, hash: string): Knex.QueryBuilder {
  return db('api_keys as k')
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
      'k.daily_token_limit', 'k.allowed_models', 'k.cost_cap_micro', 'w.plan_id', 'w.activated_at as workspace_activated_at', 'p.rpm_preset', 'p.daily_token_cap',
      'm.role as creator_role', 'd.tokens as tokens_today',
      // The workspace's fallback chains come with the key: a model request needs its chain, and this spares it a round trip.
      db.raw(`(${FALLBACK_CHAINS_OF_KEY_WORKSPACE}) as fallback_chains`),
    )
    .limit(1);
}

/** What surrounds a key's id in the name of its requests-per-minute window (the statement below builds it too). */
const RPM_BUCKET = { before: 'key:', after: ':rpm' } as const;

/** The name a key's requests-per-minute window is counted under (the same in every store). */
export function keyRpmBucket(keyId: string): string {
  return `${RPM_BUCKET.before}${keyId}${RPM_BUCKET.after}`;
}

/** The rpm window's length. */
export const KEY_RPM_WINDOW_MS = 60_000;

/** How a (kind, role, creator role) combination is written for the statement; no creator is an empty role. */
export function keyStanding(kind: string, role: string, creatorRole: string | null): string {
  return `${kind}:${role}:${creatorRole ?? ''}`;
}

export interface CountedKeyLookup {
  /** The key (absent: no key has this hash). */
  row: KeyRow | null;
  ipHit: WindowHit;
  /** The key's rpm hit, when it counted (see `countingRpm`). */
  rpmHit: WindowHit | null;
}

/**
 * Counts the IP's hit, looks the key up and, when the IP is within its limit, the key is live (not revoked,
 * its creator still a member, its workspace active), its standing is one of `countingRpm.standings` and it has an rpm limit,
 * counts its rpm hit: one statement on the counters' pool.
 */
export async function countedKeyLookup(db: Knex, opts: {
  hash: string;
  ip: { bucket: string; windowMs: number; limit: number };
  countingRpm: { standings: readonly string[] } | null;
  now?: number;
}): Promise<CountedKeyLookup> {
  const now = opts.now ?? Date.now();
  const ipWindow = currentWindow(opts.ip.windowMs, now);
  const rpmWindow = currentWindow(KEY_RPM_WINDOW_MS, now);
  const [row] = await preparedRows<KeyRow & { ip_count: number; rpm_count: number | null }>(db, db.raw(
    `with ip as (${windowUpsertSql('values (?, ?, 1)')}),
     key as ?,
     rpm as (${windowUpsertSql(`select ?::text || key.id || ?::text, ?::bigint, 1 from key, ip
         where ?::boolean and ip.count <= ? and key.revoked_at is null
           and (key.created_by_user_id is null or key.creator_role is not null) and key.workspace_activated_at is not null
           and key.kind || ':' || key.role || ':' || coalesce(key.creator_role, '') = any(?::text[])
           and coalesce(key.rpm_limit, key.rpm_preset) is not null`)})
     select key.*, ip.count as ip_count, (select count from rpm) as rpm_count from ip left join key on true`,
    [opts.ip.bucket, ipWindow.start, keyLookupQuery(db, opts.hash), RPM_BUCKET.before, RPM_BUCKET.after, rpmWindow.start, opts.countingRpm !== null, opts.ip.limit, textArrayLiteral(opts.countingRpm?.standings ?? [])],
  ));
  const { ip_count: ipCount, rpm_count: rpmCount, ...key } = row;
  const rpmLimit = key.id ? (key.rpm_limit ?? key.rpm_preset) : null;
  return {
    row: key.id ? key : null,
    ipHit: windowHit(Number(ipCount), opts.ip.limit, ipWindow.resetMs),
    rpmHit: rpmCount === null || rpmLimit === null ? null : windowHit(Number(rpmCount), Number(rpmLimit), rpmWindow.resetMs),
  };
}

/** A text[] literal (knex would spread an array binding into a list); standings hold no quote nor backslash. */
function textArrayLiteral(values: readonly string[]): string {
  return `{${values.map((v) => `"${v}"`).join(',')}}`;
}
