/**
 * Usage and costs for the management API and the billing page, in OpenAI's Administration API shape:
 * daily buckets (`start_time`, `end_time`, `results`), optionally grouped by model, API key and member.
 * Usage counts come from the usage records; costs are the ledger's settled charges. A member's usage is what
 * their keys made plus what they made in the Playground (no key: the usage record names them); grouped by
 * member, each result says which of the two it is (`source`: `api` or `playground`).
 * Grouped by key or member, each result also names them (`api_key_name`; `user_name` and `user_email`), so
 * that a reader sees who spent without joining lists of its own.
 */
import type { Knex } from 'knex';
import { InvalidRequestError } from '../core/errors';
import { microToCredits } from '../core/money';

export const USAGE_GROUPS = ['model', 'api_key_id', 'user_id'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

const DAY = 86_400;
/** The last second of 9999-12-31 (UTC): the latest Unix time a report takes. */
export const MAX_REPORT_TIME = 253_402_300_799;

export interface ReportRange {
  startTime: number;
  endTime: number;
  groupBy: UsageGroup[];
}

export function parseReportQuery(query: Record<string, unknown>, now = Date.now()): ReportRange {
  const int = (name: string, fallback: number) => {
    const raw = query[name];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (typeof raw !== 'string' || !/^[0-9]{1,12}$/.test(raw) || n > MAX_REPORT_TIME) {
      throw new InvalidRequestError(`'${name}' must be a Unix time in seconds, from 0 to ${MAX_REPORT_TIME}.`, { param: name, code: 'invalid_value' });
    }
    return n;
  };
  const endTime = int('end_time', Math.ceil(now / 1000 / DAY) * DAY);
  const startTime = int('start_time', endTime - 30 * DAY);
  if (startTime >= endTime) throw new InvalidRequestError("'start_time' must be before 'end_time'.", { param: 'start_time' });
  if (endTime - startTime > 180 * DAY) throw new InvalidRequestError('A report covers at most 180 days.', { param: 'start_time' });
  if (query.bucket_width !== undefined && query.bucket_width !== '1d') throw new InvalidRequestError("Only bucket_width '1d' is supported.", { param: 'bucket_width' });
  const raw = query.group_by;
  const groups = (Array.isArray(raw) ? raw : raw === undefined ? [] : String(raw).split(',')).map((g) => String(g).trim()).filter(Boolean);
  for (const g of groups) {
    if (!(USAGE_GROUPS as readonly string[]).includes(g)) throw new InvalidRequestError(`group_by takes ${USAGE_GROUPS.join(', ')}.`, { param: 'group_by' });
  }
  return { startTime, endTime, groupBy: groups as UsageGroup[] };
}

const COLUMNS: Record<UsageGroup, { usage: string; cost: string }> = {
  model: { usage: 'coalesce(r.model_used, r.model_requested)', cost: 'l.model' },
  api_key_id: { usage: 'r.api_key_id', cost: 'l.api_key_id' },
  user_id: { usage: 'coalesce(k.created_by_user_id, r.user_id)', cost: 'coalesce(k.created_by_user_id, r.user_id)' },
};

/** Grouped by member, API and Playground usage stay apart (only Playground runs name a member on their usage record). */
const SOURCE = "case when r.user_id is not null then 'playground' else 'api' end";

/** The names of the keys and members in `rows` (grouped by them): id -> name, id -> {name, email}. */
async function namesOf(db: Knex, workspaceId: string, range: ReportRange, rows: Array<Record<string, any>>) {
  const ids = (g: UsageGroup) => (range.groupBy.includes(g) ? [...new Set(rows.map((r) => r[g]).filter((id): id is string => typeof id === 'string'))] : []);
  const keyIds = ids('api_key_id');
  const userIds = ids('user_id');
  const [keys, users] = await Promise.all([
    keyIds.length ? db('api_keys').where({ workspace_id: workspaceId }).whereIn('id', keyIds).select('id', 'name') : [],
    userIds.length ? db('users').whereIn('id', userIds).select('id', 'name', 'email') : [],
  ]);
  return {
    keys: new Map<string, string>(keys.map((k: any) => [k.id, k.name])),
    users: new Map<string, { name: string; email: string }>(users.map((u: any) => [u.id, { name: u.name, email: u.email }])),
  };
}

type Names = Awaited<ReturnType<typeof namesOf>>;

function bucketsOf<T extends { day: number }>(range: ReportRange, rows: T[], toResult: (row: T) => Record<string, unknown>, object: string) {
  const data: Array<{ object: 'bucket'; start_time: number; end_time: number; results: Array<Record<string, unknown>> }> = [];
  for (let start = Math.floor(range.startTime / DAY) * DAY; start < range.endTime; start += DAY) {
    data.push({ object: 'bucket', start_time: start, end_time: start + DAY, results: rows.filter((r) => r.day === start).map((r) => ({ object, ...toResult(r) })) });
  }
  return { object: 'page' as const, data, has_more: false, next_page: null };
}

function groupSelect(range: ReportRange, kind: 'usage' | 'cost'): string {
  return range.groupBy.map((g) => `, ${COLUMNS[g][kind]} as ${g}`).join('') + (range.groupBy.includes('user_id') ? `, ${SOURCE} as source` : '');
}

function groupBy(range: ReportRange, kind: 'usage' | 'cost'): string {
  return range.groupBy.map((g) => `, ${COLUMNS[g][kind]}`).join('') + (range.groupBy.includes('user_id') ? `, ${SOURCE}` : '');
}

function groupValues(range: ReportRange, names: Names, row: Record<string, any>): Record<string, unknown> {
  const values: Record<string, unknown> = Object.fromEntries(USAGE_GROUPS.map((g) => [g, range.groupBy.includes(g) ? row[g] ?? null : null]));
  if (range.groupBy.includes('api_key_id')) values.api_key_name = names.keys.get(row.api_key_id) ?? null;
  if (range.groupBy.includes('user_id')) {
    const user = names.users.get(row.user_id);
    Object.assign(values, { user_name: user?.name ?? null, user_email: user?.email ?? null, source: row.source });
  }
  return values;
}

export async function usageReport(db: Knex, workspaceId: string, range: ReportRange) {
  const { rows } = await db.raw(
    `select (floor(extract(epoch from r.created_at) / ${DAY}) * ${DAY})::bigint as day${groupSelect(range, 'usage')},
            sum(r.input_tokens)::bigint as input_tokens, sum(r.output_tokens)::bigint as output_tokens,
            count(*)::bigint as num_model_requests, sum(r.credits_micro)::bigint as credits_micro
       from usage_records r left join api_keys k on k.id = r.api_key_id
      where r.workspace_id = ? and r.created_at >= to_timestamp(?) and r.created_at < to_timestamp(?)
      group by 1${groupBy(range, 'usage')} order by 1`,
    [workspaceId, range.startTime, range.endTime],
  );
  const names = await namesOf(db, workspaceId, range, rows);
  return bucketsOf(range, rows.map((r: any) => ({ ...r, day: Number(r.day) })), (r: any) => ({
    input_tokens: Number(r.input_tokens), output_tokens: Number(r.output_tokens), num_model_requests: Number(r.num_model_requests),
    credits: microToCredits(Number(r.credits_micro)), ...groupValues(range, names, r),
  }), 'organization.usage.result');
}

export async function costReport(db: Knex, workspaceId: string, range: ReportRange) {
  const { rows } = await db.raw(
    `select (floor(extract(epoch from l.created_at) / ${DAY}) * ${DAY})::bigint as day${groupSelect(range, 'cost')},
            sum(-l.amount_micro)::bigint as amount_micro
       from credit_ledger l left join api_keys k on k.id = l.api_key_id left join usage_records r on r.request_id = l.request_id
      where l.workspace_id = ? and l.kind = 'settle' and l.created_at >= to_timestamp(?) and l.created_at < to_timestamp(?)
      group by 1${groupBy(range, 'cost')} order by 1`,
    [workspaceId, range.startTime, range.endTime],
  );
  const names = await namesOf(db, workspaceId, range, rows);
  return bucketsOf(range, rows.map((r: any) => ({ ...r, day: Number(r.day) })), (r: any) => ({
    amount: { value: microToCredits(Number(r.amount_micro)), currency: 'credits' }, line_item: range.groupBy.includes('model') ? r.model ?? null : null,
    ...groupValues(range, names, r),
  }), 'organization.costs.result');
}
