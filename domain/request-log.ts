/**
 * The request log: every API and Playground request of a workspace, newest first, from the usage records (the
 * books), with the key's name and the member who made it. Filters by time, model (asked or used), key, member,
 * status, endpoint, minimum cost, batch (`batch_id`), and a lookup by request id or the client's X-Request-Id; keyset pages by
 * (created_at, id) so a page costs the same on the millionth row as on the first; CSV of the same rows.
 * A member who may not read the workspace's usage sees only their own keys' and their own Playground requests.
 */
import type { Knex } from 'knex';
import { InvalidRequestError, NotFoundError } from '../core/errors';
import { creditsToMicro, microToCredits } from '../core/money';
import { MAX_REPORT_TIME } from './usage-reports';

export const REQUEST_STATUSES = ['succeeded', 'failed', 'cancelled'] as const;

export interface RequestLogQuery {
  startTime: number | null;
  endTime: number | null;
  model: string | null;
  apiKeyId: string | null;
  userId: string | null;
  status: string | null;
  endpoint: string | null;
  minCreditsMicro: number | null;
  /** A request id, or the client's own X-Request-Id. */
  requestId: string | null;
  /** The lines of one batch. */
  batchId: string | null;
  after: string | null;
  limit: number;
}

export interface RequestLogRow {
  object: 'request_log.entry';
  id: string;
  client_request_id: string | null;
  created_at: number;
  endpoint: string;
  model_requested: string;
  model_used: string | null;
  fallback_depth: number;
  source: 'api' | 'playground';
  api_key: { id: string; name: string } | null;
  member: { id: string; name: string; email: string } | null;
  status: string;
  error_code: string | null;
  input_tokens: number;
  output_tokens: number;
  credits: number;
  latency_ms: number | null;
  /** The batch the request was a line of, and that line's custom_id. */
  batch: { id: string; custom_id: string | null } | null;
}

const ID = /^[A-Za-z0-9_.:-]{1,200}$/;
const MAX_LIMIT = 200;

/** Reads the query string; every bad value is a 400 naming its parameter. */
export function parseRequestLogQuery(query: Record<string, unknown>): RequestLogQuery {
  const text = (name: string): string | null => {
    const raw = query[name];
    if (raw === undefined || raw === '') return null;
    if (typeof raw !== 'string' || !ID.test(raw)) throw new InvalidRequestError(`'${name}' must be an id of letters, digits and _.:- (at most 200).`, { param: name, code: 'invalid_value' });
    return raw;
  };
  const time = (name: string): number | null => {
    const raw = query[name];
    if (raw === undefined || raw === '') return null;
    if (typeof raw !== 'string' || !/^[0-9]{1,12}$/.test(raw) || Number(raw) > MAX_REPORT_TIME) {
      throw new InvalidRequestError(`'${name}' must be a Unix time in seconds, from 0 to ${MAX_REPORT_TIME}.`, { param: name, code: 'invalid_value' });
    }
    return Number(raw);
  };
  const status = text('status');
  if (status && !(REQUEST_STATUSES as readonly string[]).includes(status)) {
    throw new InvalidRequestError(`'status' is one of ${REQUEST_STATUSES.join(', ')}.`, { param: 'status', code: 'invalid_value' });
  }
  const endpointRaw = query.endpoint;
  if (endpointRaw !== undefined && (typeof endpointRaw !== 'string' || !/^[a-z_./-]{1,60}$/.test(endpointRaw))) {
    throw new InvalidRequestError("'endpoint' must be an endpoint name such as chat.completions.", { param: 'endpoint', code: 'invalid_value' });
  }
  let minCreditsMicro: number | null = null;
  if (query.min_credits !== undefined && query.min_credits !== '') {
    const n = Number(query.min_credits);
    if (typeof query.min_credits !== 'string' || !Number.isFinite(n) || n < 0 || n > 1e12) {
      throw new InvalidRequestError("'min_credits' must be a number of credits from 0 to 1000000000000.", { param: 'min_credits', code: 'invalid_value' });
    }
    minCreditsMicro = creditsToMicro(n);
  }
  let limit = 50;
  if (query.limit !== undefined) {
    limit = Number(query.limit);
    if (typeof query.limit !== 'string' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
      throw new InvalidRequestError(`'limit' must be an integer from 1 to ${MAX_LIMIT}.`, { param: 'limit', code: 'invalid_value' });
    }
  }
  const [startTime, endTime] = [time('start_time'), time('end_time')];
  if (startTime !== null && endTime !== null && startTime >= endTime) throw new InvalidRequestError("'start_time' must be before 'end_time'.", { param: 'start_time' });
  return {
    startTime, endTime, model: text('model'), apiKeyId: text('api_key_id'), userId: text('user_id'), status,
    endpoint: (endpointRaw as string | undefined) || null, minCreditsMicro, requestId: text('request_id'), batchId: text('batch_id'), after: text('after'), limit,
  };
}

/** Whose requests the reader sees: the whole workspace, or only what one member made (their keys, their Playground). */
export type RequestLogScope = { workspaceId: string; onlyUserId: string | null };

function filtered(db: Knex, scope: RequestLogScope, q: RequestLogQuery): Knex.QueryBuilder {
  const query = db('usage_records as r').leftJoin('api_keys as k', 'k.id', 'r.api_key_id').where('r.workspace_id', scope.workspaceId);
  // A member's requests: those of the keys they created, and their own Playground runs.
  // (The keys as a hashed subquery: checked per row without joining, so the newest rows stay the index's order.)
  const ofMember = (userId: string) => query.andWhere((w) => {
    w.whereIn('r.api_key_id', db('api_keys').select('id').where({ workspace_id: scope.workspaceId, created_by_user_id: userId })).orWhere('r.user_id', userId);
  });
  if (scope.onlyUserId) ofMember(scope.onlyUserId);
  if (q.userId) ofMember(q.userId);
  if (q.startTime !== null) query.andWhere('r.created_at', '>=', db.raw('to_timestamp(?)', [q.startTime]));
  if (q.endTime !== null) query.andWhere('r.created_at', '<', db.raw('to_timestamp(?)', [q.endTime]));
  if (q.model) query.andWhere((w) => { w.where('r.model_requested', q.model!).orWhere('r.model_used', q.model!); });
  if (q.apiKeyId) query.andWhere('r.api_key_id', q.apiKeyId);
  if (q.status) query.andWhere('r.status', q.status);
  if (q.endpoint) query.andWhere('r.endpoint', q.endpoint);
  if (q.minCreditsMicro !== null) query.andWhere('r.credits_micro', '>=', q.minCreditsMicro);
  if (q.batchId) query.andWhere('r.batch_id', q.batchId);
  if (q.requestId) query.andWhere((w) => { w.where('r.request_id', q.requestId!).orWhere('r.client_request_id', q.requestId!); });
  return query;
}

/** One page, newest first; `after` is the last id of the previous page. */
export async function requestLogPage(db: Knex, scope: RequestLogScope, q: RequestLogQuery): Promise<{ data: RequestLogRow[]; hasMore: boolean }> {
  const query = filtered(db, scope, q);
  if (q.after) {
    const cursor = await db('usage_records').where({ workspace_id: scope.workspaceId, request_id: q.after }).first('id', 'created_at');
    if (!cursor) throw new NotFoundError(`No request '${q.after}' to page after.`, { param: 'after', code: 'cursor_not_found' });
    query.andWhereRaw('(r.created_at, r.id) < (?, ?)', [cursor.created_at, cursor.id]);
  }
  const rows = await query
    .leftJoin('users as u', 'u.id', db.raw('coalesce(r.user_id, k.created_by_user_id)'))
    .select('r.*', 'k.name as key_name', 'u.id as member_id', 'u.name as member_name', 'u.email as member_email')
    .orderBy([{ column: 'r.created_at', order: 'desc' }, { column: 'r.id', order: 'desc' }])
    .limit(q.limit + 1);
  return { data: rows.slice(0, q.limit).map(toRow), hasMore: rows.length > q.limit };
}

function toRow(r: any): RequestLogRow {
  return {
    object: 'request_log.entry',
    id: r.request_id,
    client_request_id: r.client_request_id ?? null,
    created_at: Math.floor(new Date(r.created_at).getTime() / 1000),
    endpoint: r.endpoint,
    model_requested: r.model_requested,
    model_used: r.model_used ?? null,
    fallback_depth: Number(r.fallback_depth),
    source: r.user_id ? 'playground' : 'api',
    api_key: r.api_key_id ? { id: r.api_key_id, name: r.key_name ?? r.api_key_id } : null,
    member: r.member_id ? { id: r.member_id, name: r.member_name, email: r.member_email } : null,
    status: r.status,
    error_code: r.error_code ?? null,
    input_tokens: Number(r.input_tokens),
    output_tokens: Number(r.output_tokens),
    credits: microToCredits(Number(r.credits_micro)),
    latency_ms: r.latency_ms ?? null,
    batch: r.batch_id ? { id: r.batch_id, custom_id: r.batch_custom_id ?? null } : null,
  };
}

const CSV_COLUMNS = ['time', 'request_id', 'client_request_id', 'endpoint', 'model_requested', 'model_used', 'fallback_depth', 'source', 'api_key', 'member',
  'status', 'error_code', 'input_tokens', 'output_tokens', 'credits', 'latency_ms'] as const;

/** A CSV cell: quoted when it holds a comma, quote or line break; a leading = + - @ is escaped so a spreadsheet never runs it. */
function cell(value: unknown): string {
  let s = value === null || value === undefined ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(s) && typeof value === 'string') s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function requestLogCsvHeader(): string {
  return `${CSV_COLUMNS.join(',')}\r\n`;
}

export function requestLogCsvLines(rows: RequestLogRow[]): string {
  return rows.map((r) => [
    new Date(r.created_at * 1000).toISOString(), r.id, r.client_request_id, r.endpoint, r.model_requested, r.model_used, r.fallback_depth, r.source,
    r.api_key?.name ?? '', r.member?.email ?? '', r.status, r.error_code, r.input_tokens, r.output_tokens, r.credits, r.latency_ms,
  ].map(cell).join(',')).join('\r\n') + (rows.length ? '\r\n' : '');
}
