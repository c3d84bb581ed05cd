/**
 * Batches: one row per batch, one per input line (domain of OpenAI's Batch API and Anthropic's Message
 * Batches alike; api/batches and api/messages/batches show them in each API's shape). A line goes
 * pending -> running (claimed by its batch's run, within the workspace's and the key's limits) -> succeeded
 * or errored (its outcome recorded once); lines never started end `cancelled` or `expired` with their batch.
 * The batch's counts and usage are moved in the same statement that records a line, so they are exact.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { ConflictError, NotFoundError } from '../core/errors';
import { audit } from './audit';
import { exactCreatedAt, keysetPage } from './pagination';

export const BATCH_STATUSES = ['validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];
export type BatchShape = 'openai' | 'anthropic';
export type LineStatus = 'pending' | 'running' | 'succeeded' | 'errored' | 'cancelled' | 'expired';

/** Statuses past which nothing about a batch changes. */
export const FINAL_BATCH_STATUSES: readonly BatchStatus[] = ['failed', 'completed', 'expired', 'cancelled'];

/** OpenAI's limits on an input file. */
export const MAX_BATCH_LINES = 50_000;
export const MAX_BATCH_FILE_BYTES = 200 * 1024 * 1024;
/** The one completion window offered (OpenAI's). */
export const COMPLETION_WINDOW = '24h';
export const COMPLETION_WINDOW_MS = 24 * 3600_000;

export interface BatchLineError {
  code: string;
  message: string;
  param: string | null;
  /** 1-based line of the input file (null for an error of the whole file). */
  line: number | null;
}

export interface BatchRecord {
  id: string;
  workspaceId: string;
  apiKeyId: string | null;
  userId: string | null;
  rpmLimit: number | null;
  allowedModels: string[] | null;
  shape: BatchShape;
  endpoint: string;
  inputFileId: string | null;
  completionWindow: string;
  metadata: Record<string, string> | null;
  status: BatchStatus;
  errors: BatchLineError[] | null;
  outputFileId: string | null;
  errorFileId: string | null;
  total: number;
  completed: number;
  failed: number;
  inputTokens: number;
  outputTokens: number;
  creditsMicro: number;
  createdAt: Date;
  inProgressAt: Date | null;
  finalizingAt: Date | null;
  completedAt: Date | null;
  failedAt: Date | null;
  expiredAt: Date | null;
  cancellingAt: Date | null;
  cancelledAt: Date | null;
  expiresAt: Date;
}

const date = (v: unknown): Date | null => (v == null ? null : new Date(v as string));

function toRecord(row: Record<string, any>): BatchRecord {
  return {
    id: row.id, workspaceId: row.workspace_id, apiKeyId: row.api_key_id, userId: row.user_id, rpmLimit: row.rpm_limit,
    allowedModels: row.allowed_models ?? null, shape: row.shape, endpoint: row.endpoint, inputFileId: row.input_file_id,
    completionWindow: row.completion_window, metadata: row.metadata ?? null, status: row.status, errors: row.errors ?? null,
    outputFileId: row.output_file_id, errorFileId: row.error_file_id, total: row.total, completed: row.completed, failed: row.failed,
    inputTokens: Number(row.input_tokens), outputTokens: Number(row.output_tokens), creditsMicro: Number(row.credits_micro),
    createdAt: new Date(row.created_at), inProgressAt: date(row.in_progress_at), finalizingAt: date(row.finalizing_at),
    completedAt: date(row.completed_at), failedAt: date(row.failed_at), expiredAt: date(row.expired_at),
    cancellingAt: date(row.cancelling_at), cancelledAt: date(row.cancelled_at), expiresAt: new Date(row.expires_at),
  };
}

/** What creating a batch fixes; the rest of its record comes with its run. */
export type NewBatch = Pick<BatchRecord, 'id' | 'workspaceId' | 'apiKeyId' | 'userId' | 'rpmLimit' | 'allowedModels' | 'shape' | 'endpoint' | 'inputFileId' | 'metadata'>;

/** Makes a batch's row; its window ends `windowMs` from now (COMPLETION_WINDOW_MS, shorter only in tests of expiry). */
export async function insertBatch(db: Knex, batch: NewBatch, windowMs = COMPLETION_WINDOW_MS): Promise<BatchRecord> {
  const [row] = await db('batches').insert({
    id: batch.id, workspace_id: batch.workspaceId, api_key_id: batch.apiKeyId, user_id: batch.userId, rpm_limit: batch.rpmLimit,
    allowed_models: batch.allowedModels ? JSON.stringify(batch.allowedModels) : null, shape: batch.shape, endpoint: batch.endpoint,
    input_file_id: batch.inputFileId, completion_window: COMPLETION_WINDOW, metadata: batch.metadata ? JSON.stringify(batch.metadata) : null,
    status: 'validating', expires_at: db.raw('now() + make_interval(secs => ?)', [windowMs / 1000]),
  }, '*');
  return toRecord(row);
}

export function batchNotFound(id: string): NotFoundError {
  return new NotFoundError(`No batch found with id '${id}'.`, { code: 'batch_not_found', param: 'batch_id' });
}

/** The workspace's batch of that shape (another workspace's, or the other API's, is a 404 like a missing one). */
export async function findBatch(db: Knex, workspaceId: string, id: string, shape?: BatchShape): Promise<BatchRecord | null> {
  const row = await db('batches').where({ id, workspace_id: workspaceId, ...(shape ? { shape } : {}) }).first();
  return row ? toRecord(row) : null;
}

export async function getBatch(db: Knex, id: string): Promise<BatchRecord> {
  const row = await db('batches').where({ id }).first();
  if (!row) throw batchNotFound(id);
  return toRecord(row);
}

/** A page of the workspace's batches, newest first; `before` pages towards newer ones (Anthropic's `before_id`). */
export async function listBatches(db: Knex, workspaceId: string, query: { shape: BatchShape; limit: number; after?: string; before?: string }): Promise<{ batches: BatchRecord[]; hasMore: boolean } | { unknownCursor: true }> {
  const q = db('batches').where({ workspace_id: workspaceId, shape: query.shape });
  if (query.before) {
    const cursor = await db('batches').where({ id: query.before, workspace_id: workspaceId }).first('id');
    if (!cursor) return { unknownCursor: true };
    const page = await keysetPage<Record<string, any>>(db, q, { after: query.before, limit: query.limit, order: 'asc' }, { table: 'batches', workspaceId, deletedAction: 'batch.delete' });
    if (!page) return { unknownCursor: true };
    return { batches: page.rows.map(toRecord).reverse(), hasMore: page.hasMore };
  }
  const page = await keysetPage<Record<string, any>>(db, q, { after: query.after, limit: query.limit, order: 'desc' }, { table: 'batches', workspaceId, deletedAction: 'batch.delete' });
  if (!page) return { unknownCursor: true };
  return { batches: page.rows.map(toRecord), hasMore: page.hasMore };
}

/**
 * Asks a batch to stop: `cancelling` from `validating` or `in_progress` (its run then starts no more lines);
 * a batch already stopping is returned as it is; a finished one cannot be cancelled (409).
 */
export async function requestCancel(db: Knex, workspaceId: string, id: string, shape: BatchShape): Promise<BatchRecord> {
  const [row] = await db('batches').where({ id, workspace_id: workspaceId, shape }).whereIn('status', ['validating', 'in_progress'])
    .update({ status: 'cancelling', cancelling_at: db.fn.now() }, '*');
  if (row) return toRecord(row);
  const batch = await findBatch(db, workspaceId, id, shape);
  if (!batch) throw batchNotFound(id);
  if (batch.status === 'cancelling' || batch.status === 'cancelled') return batch;
  throw new ConflictError(`Cannot cancel a batch with status '${batch.status}'.`, { code: 'batch_not_cancellable' });
}

/**
 * Deletes an ended batch with its lines (the audit log keeps its record, so a cursor naming it keeps its
 * place); a batch still running is 'open' and stays.
 */
export async function deleteEndedBatch(db: Knex, opts: { workspaceId: string; id: string; shape: BatchShape; actor: string }): Promise<'deleted' | 'open' | 'missing'> {
  return db.transaction(async (trx) => {
    const row = await trx('batches').where({ id: opts.id, workspace_id: opts.workspaceId, shape: opts.shape }).forUpdate().first('*', exactCreatedAt(trx));
    if (!row) return 'missing';
    const batch = toRecord(row);
    if (!FINAL_BATCH_STATUSES.includes(batch.status)) return 'open';
    await trx('batches').where({ id: batch.id }).delete();
    await audit(trx, {
      workspaceId: opts.workspaceId, actor: opts.actor, action: 'batch.delete', subjectType: 'batch', subjectId: batch.id,
      data: { shape: batch.shape, status: batch.status, total: batch.total, credits_micro: batch.creditsMicro, created_at_exact: row.created_at_exact },
    });
    return 'deleted';
  });
}

// ---------------------------------------------------------------- validation's outcome

export interface ValidLine {
  index: number;
  customId: string;
  model: string;
  body: unknown;
}

/** Drops what an earlier attempt at validating stored (a retried validation starts over). */
export async function clearLines(db: Knex, batchId: string): Promise<void> {
  await db('batch_lines').where({ batch_id: batchId }).delete();
}

/** Stores validated lines. */
export async function storeValidLines(db: Knex, batch: Pick<BatchRecord, 'id' | 'workspaceId' | 'apiKeyId'>, lines: ValidLine[]): Promise<void> {
  if (lines.length === 0) return;
  await db('batch_lines').insert(lines.map((l) => ({
    batch_id: batch.id, line_index: l.index, custom_id: l.customId, model: l.model, body: JSON.stringify(l.body),
    workspace_id: batch.workspaceId, api_key_id: batch.apiKeyId,
  })));
}

/** Validation passed: the batch runs (unless it was cancelled while validating). */
export async function startBatch(db: Knex, id: string, total: number): Promise<BatchStatus> {
  const [row] = await db('batches').where({ id, status: 'validating' }).update({ status: 'in_progress', in_progress_at: db.fn.now(), total }, ['status']);
  if (row) return row.status;
  await db('batches').where({ id }).update({ total });
  return (await getBatch(db, id)).status;
}

/** Validation failed: nothing ran, nothing was held; the lines stored are dropped. */
export async function failBatch(db: Knex, id: string, errors: BatchLineError[], total: number): Promise<void> {
  await db.transaction(async (trx) => {
    await trx('batch_lines').where({ batch_id: id }).delete();
    await trx('batches').where({ id }).whereNotIn('status', FINAL_BATCH_STATUSES).update({ status: 'failed', failed_at: trx.fn.now(), errors: JSON.stringify(errors), total });
  });
}

// ---------------------------------------------------------------- running lines

export interface LineClaim {
  /** How many lines from `from` may start now (each is now `running`). */
  claimed: number;
  /** When none may: how long to wait before asking again. */
  waitMs: number;
  /** The batch's status (`cancelling`: start no more). */
  status: BatchStatus;
}

/** How long a claim refused by the workspace's concurrency waits before asking again. */
const CONCURRENCY_WAIT_MS = 500;
const RPM_WINDOW_MS = 60_000;

/**
 * Claims up to `want` lines from `from` to start now, within the workspace's running lines
 * (`workspaceConcurrency`, across all its batches) and the key's requests per minute (lines started in the
 * last minute, across its batches): a line over a limit waits, it never fails. Serialised per workspace.
 */
export async function claimLines(db: Knex, opts: { batchId: string; from: number; want: number; workspaceConcurrency: number }): Promise<LineClaim> {
  return db.transaction(async (trx) => {
    const batch = await trx('batches').where({ id: opts.batchId }).first('workspace_id', 'api_key_id', 'rpm_limit', 'status', 'total');
    if (!batch) throw batchNotFound(opts.batchId);
    if (batch.status !== 'in_progress') return { claimed: 0, waitMs: 0, status: batch.status };
    await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`batch-claims:${batch.workspace_id}`]);
    const running = await trx('batch_lines').where({ workspace_id: batch.workspace_id, status: 'running' }).count<{ count: string }[]>('* as count');
    let room = Math.min(opts.want, batch.total - opts.from, opts.workspaceConcurrency - Number(running[0].count));
    let waitMs = CONCURRENCY_WAIT_MS;
    if (batch.rpm_limit && batch.api_key_id && room > 0) {
      const { rows } = await trx.raw(
        `select count(*)::int as started, extract(epoch from (min(started_at) + interval '60 seconds' - now())) * 1000 as oldest_leaves_ms
           from batch_lines where api_key_id = ? and started_at > now() - interval '60 seconds'`,
        [batch.api_key_id],
      );
      const left = batch.rpm_limit - rows[0].started;
      if (left < room) {
        room = left;
        waitMs = Math.max(50, Math.min(RPM_WINDOW_MS, Math.ceil(Number(rows[0].oldest_leaves_ms ?? RPM_WINDOW_MS))));
      }
    }
    if (room <= 0) return { claimed: 0, waitMs, status: batch.status };
    // A retried claim finds its lines already running: they count as claimed again, not twice.
    await trx('batch_lines').where({ batch_id: opts.batchId }).whereBetween('line_index', [opts.from, opts.from + room - 1]).where({ status: 'pending' })
      .update({ status: 'running', started_at: trx.fn.now() });
    return { claimed: room, waitMs: 0, status: batch.status };
  });
}

export interface LineToRun {
  batch: BatchRecord;
  customId: string;
  model: string;
  body: unknown;
  status: LineStatus;
}

export async function lineToRun(db: Knex, batchId: string, index: number): Promise<LineToRun> {
  const batch = await getBatch(db, batchId);
  const row = await db('batch_lines').where({ batch_id: batchId, line_index: index }).first('custom_id', 'model', 'body', 'status');
  if (!row) throw new NotFoundError(`Batch ${batchId} has no line ${index + 1}.`);
  return { batch, customId: row.custom_id, model: row.model, body: row.body, status: row.status };
}

export interface LineOutcome {
  batchId: string;
  index: number;
  requestId: string;
  /** The HTTP status the line's request answered with (200, or its error's). */
  statusCode: number;
  /** The response body (the endpoint's JSON, or `{error}`). */
  body: unknown;
  creditsMicro: number;
}

/**
 * Records a line's outcome once (a repeated record of the same line changes nothing) and moves its batch's
 * counts and usage with it. The tokens are the usage record's.
 */
export async function recordLine(db: Knex, outcome: LineOutcome): Promise<void> {
  await db.transaction(async (trx) => {
    const usage = await trx('usage_records').where({ request_id: outcome.requestId }).first('input_tokens', 'output_tokens', 'credits_micro');
    const inputTokens = Number(usage?.input_tokens ?? 0);
    const outputTokens = Number(usage?.output_tokens ?? 0);
    const ok = outcome.statusCode >= 200 && outcome.statusCode < 300;
    const updated = await trx('batch_lines').where({ batch_id: outcome.batchId, line_index: outcome.index }).whereIn('status', ['pending', 'running']).update({
      status: ok ? 'succeeded' : 'errored', finished_at: trx.fn.now(), request_id: outcome.requestId, status_code: outcome.statusCode,
      [ok ? 'response' : 'error']: JSON.stringify(outcome.body), body: null, credits_micro: outcome.creditsMicro,
      input_tokens: inputTokens, output_tokens: outputTokens,
    });
    if (updated === 0) return;
    await trx('batches').where({ id: outcome.batchId }).update({
      completed: trx.raw(`completed + ${ok ? 1 : 0}`), failed: trx.raw(`failed + ${ok ? 0 : 1}`),
      input_tokens: trx.raw('input_tokens + ?', [inputTokens]), output_tokens: trx.raw('output_tokens + ?', [outputTokens]),
      credits_micro: trx.raw('credits_micro + ?', [outcome.creditsMicro]),
    });
  });
}

/** Lines never started end with their batch (`cancelled` or `expired`); their bodies go. */
export async function closeUnstartedLines(db: Knex, batchId: string, ending: 'cancelled' | 'expired'): Promise<void> {
  await db('batch_lines').where({ batch_id: batchId, status: 'pending' }).update({ status: ending, body: null, finished_at: db.fn.now() });
}

export async function markFinalizing(db: Knex, batchId: string): Promise<void> {
  await db('batches').where({ id: batchId, status: 'in_progress' }).update({ status: 'finalizing', finalizing_at: db.fn.now() });
}

/** The batch's last step: its ending, its files. */
export async function endBatch(db: Knex, batchId: string, ending: 'completed' | 'cancelled' | 'expired', files: { outputFileId: string | null; errorFileId: string | null }): Promise<void> {
  await db('batches').where({ id: batchId }).whereNotIn('status', FINAL_BATCH_STATUSES).update({
    status: ending, [`${ending}_at`]: db.fn.now(), output_file_id: files.outputFileId, error_file_id: files.errorFileId,
  });
}

export interface FinishedLine {
  index: number;
  customId: string;
  status: LineStatus;
  requestId: string | null;
  statusCode: number | null;
  response: unknown;
  error: unknown;
}

/** The batch's lines in input order, a page at a time (the output and error files, Anthropic's results). */
export async function* batchLines(db: Knex, batchId: string, pageSize = 500): AsyncGenerator<FinishedLine> {
  for (let from = 0; ; from += pageSize) {
    const rows = await db('batch_lines').where({ batch_id: batchId }).andWhere('line_index', '>=', from).andWhere('line_index', '<', from + pageSize)
      .orderBy('line_index').select('line_index', 'custom_id', 'status', 'request_id', 'status_code', 'response', 'error');
    // Line indexes are dense (0 .. total - 1): an empty page is the end.
    if (rows.length === 0) return;
    for (const r of rows) {
      yield { index: r.line_index, customId: r.custom_id, status: r.status, requestId: r.request_id, statusCode: r.status_code, response: r.response, error: r.error };
    }
  }
}

/** Counts by line status (Anthropic's request_counts). */
export async function lineCounts(db: Knex, batchId: string): Promise<Record<LineStatus, number>> {
  const rows = await db('batch_lines').where({ batch_id: batchId }).groupBy('status').select('status').count<{ status: LineStatus; count: string }[]>('* as count');
  const counts: Record<LineStatus, number> = { pending: 0, running: 0, succeeded: 0, errored: 0, cancelled: 0, expired: 0 };
  for (const r of rows) counts[r.status] = Number(r.count);
  return counts;
}

/**
 * The request id of a batch's line: derived from the batch and the line, so a re-run of the line (its run
 * replayed after a crash) is the same request, with the same usage record and holds, never a second one.
 */
export function batchLineRequestId(batchId: string, index: number): string {
  const hex = createHash('sha256').update(`${batchId}:${index}`).digest('hex');
  // Shaped as a version-8 (custom) UUID, as request ids are UUIDs.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
