/**
 * Usage and costs for the management API and the billing page, in OpenAI's Administration API shape:
 * daily buckets (`start_time`, `end_time`, `results`), optionally grouped by model, API key and member.
 * Usage counts come from the usage records; costs are the ledger's settled charges. A member's usage is what
 * their keys made plus what they made in the Playground (no key: the usage record names them); grouped by
 * member, each result says which of the two it is (`source`: `api` or `playground`).
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

function groupValues(range: ReportRange, row: Record<string, any>): Record<string, unknown> {
  const values: Record<string, unknown> = Object.fromEntries(USAGE_GROUPS.map((g) => [g, range.groupBy.includes(g) ? row[g] ?? null : null]));
  if (range.groupBy.includes('user_id')) values.source = row.source;
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
  return bucketsOf(range, rows.map((r: any) => ({ ...r, day: Number(r.day) })), (r: any) => ({
    input_tokens: Number(r.input_tokens), output_tokens: Number(r.output_tokens), num_model_requests: Number(r.num_model_requests),
    credits: microToCredits(Number(r.credits_micro)), ...groupValues(range, r),
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
  return bucketsOf(range, rows.map((r: any) => ({ ...r, day: Number(r.day) })), (r: any) => ({
    amount: { value: microToCredits(Number(r.amount_micro)), currency: 'credits' }, line_item: range.groupBy.includes('model') ? r.model ?? null : null,
    ...groupValues(range, r),
  }), 'organization.costs.result');
}
