/**
 * Activities of a batch's run (workflows/batch.ts). Line bodies and answers never pass through the run's
 * history: the input is read here from its stored file, each line's body from its row, and each line's
 * outcome written to its row; the run only hands line numbers around. The output and error files are
 * written from the rows at the end, in OpenAI's line format, as the workspace's API files.
 */
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { Context } from '@temporalio/activity';
import { gatewayErrorFromJSON, type SerializedGatewayError } from '../core/errors';
import {
  batchLineRequestId, batchLines, claimLines, clearLines, closeUnstartedLines, endBatch, failBatch, getBatch, lineToRun, markFinalizing,
  MAX_BATCH_FILE_BYTES, MAX_BATCH_LINES, recordLine, startBatch, storeValidLines,
  type BatchLineError, type BatchRecord, type FinishedLine, type LineClaim, type ValidLine,
} from '../domain/batches';
import { commitFile, fileStorageKey, findFile } from '../domain/files';
import { getFallbackChain } from '../domain/workspaces';
import { workspaceModelAccess, type ModelAccess } from '../domain/model-eligibility';
import { BatchLineProblem, batchEndpoint, checkBatchRequest, parseBatchLine } from '../endpoints/batch-lines';
import type { ActivityDeps } from './deps';
import { loadPayload, type PayloadRef } from './request-io';
import type { CallOutcome } from '../endpoints/types';
import type { Endpoint } from '../endpoints/types';

/** At most this many errors are listed for a file that failed validation (the count says how many lines failed). */
const MAX_LISTED_ERRORS = 1000;
/** Lines stored per insert. */
const STORE_CHUNK = 500;

export interface ValidationOutcome {
  ok: boolean;
  total: number;
  errors: BatchLineError[];
}

/**
 * Checks every line of a batch's input (`lines`: its text, line by line) and stores the valid ones, all or
 * nothing: one bad line fails the batch with every problem listed by line number, and nothing is stored.
 */
export async function validateBatchLines(
  deps: Pick<ActivityDeps, 'db' | 'catalog'>, batch: BatchRecord, lines: AsyncIterable<string> | Iterable<string>, access: ModelAccess, heartbeat: () => void = () => undefined,
): Promise<ValidationOutcome> {
  const errors: BatchLineError[] = [];
  const seen = new Set<string>();
  let chunk: ValidLine[] = [];
  let total = 0;
  let lineNo = 0;
  const note = (e: BatchLineError) => { if (errors.length < MAX_LISTED_ERRORS) errors.push(e); };
  // Lines are stored as they pass, a chunk at a time (a failed file's are dropped again: failBatch).
  await clearLines(deps.db, batch.id);
  const store = async () => {
    await storeValidLines(deps.db, batch, chunk);
    chunk = [];
  };
  for await (const text of lines) {
    lineNo++;
    if (text.trim() === '') continue;
    if (total >= MAX_BATCH_LINES) {
      note({ code: 'too_many_requests', message: `A batch holds at most ${MAX_BATCH_LINES} requests.`, param: null, line: lineNo });
      break;
    }
    const index = total++;
    if (lineNo % 1000 === 0) heartbeat();
    try {
      const raw = parseBatchLine(text, lineNo);
      const checked = await checkBatchRequest(raw, {
        line: lineNo, url: batch.endpoint, catalog: deps.catalog, access,
        db: deps.db, workspaceId: batch.workspaceId, requestId: batchLineRequestId(batch.id, index),
      });
      if (seen.has(checked.customId)) {
        note({ code: 'duplicate_custom_id', message: `The custom_id '${checked.customId}' is used by an earlier line; each must be unique.`, param: 'custom_id', line: lineNo });
        continue;
      }
      seen.add(checked.customId);
      if (errors.length > 0) continue; // nothing more is kept once the file has failed
      chunk.push({ index, customId: checked.customId, model: checked.model, body: checked.request });
      if (chunk.length >= STORE_CHUNK) await store();
    } catch (err) {
      if (err instanceof BatchLineProblem) note(err.error);
      else throw err;
    }
  }
  if (total === 0 && errors.length === 0) errors.push({ code: 'empty_file', message: 'The input file holds no requests.', param: null, line: null });
  if (errors.length > 0) return { ok: false, total, errors };
  await store();
  return { ok: true, total, errors };
}

/** What the batch's lines may use: its key's allow-list, the gateway's credentials and the workspace's own keys. */
function batchModelAccess(deps: Pick<ActivityDeps, 'db' | 'providers' | 'providerKeys'>, batch: BatchRecord): ModelAccess {
  return workspaceModelAccess(deps.db, {
    workspaceId: batch.workspaceId,
    allowedModels: batch.allowedModels,
    platformServes: (record) => deps.providers.serves(record.provider, record.slug),
    providerKeys: deps.providerKeys,
  });
}

/**
 * The lines of a stored object, as text. The reader is made when the first line is asked for: one made
 * earlier reads (and loses) lines while the caller awaits something else, and then never ends.
 */
async function* linesOf(body: Readable): AsyncGenerator<string> {
  yield* createInterface({ input: body, crlfDelay: Infinity });
}

/** An output line's id (OpenAI's `batch_req_…`), from the line's request id. */
function outputLineId(requestId: string | null, batchId: string, index: number): string {
  return `batch_req_${(requestId ?? batchLineRequestId(batchId, index)).replace(/-/g, '')}`;
}

/** A line of the output or error file, in OpenAI's format. */
export function openAIOutputLine(batchId: string, line: FinishedLine): Record<string, unknown> {
  const id = outputLineId(line.requestId, batchId, line.index);
  if (line.status === 'succeeded') {
    return { id, custom_id: line.customId, response: { status_code: line.statusCode ?? 200, request_id: line.requestId, body: line.response }, error: null };
  }
  if (line.status === 'errored') {
    const err = gatewayErrorFromJSON(line.error as SerializedGatewayError);
    return { id, custom_id: line.customId, response: { status_code: line.statusCode ?? err.status, request_id: line.requestId, body: { error: { message: err.message, type: err.type, param: err.param, code: err.code } } }, error: null };
  }
  const ending = line.status === 'expired' ? 'batch_expired' : 'batch_cancelled';
  const message = line.status === 'expired' ? 'This request could not be executed before the completion window expired.' : 'This request was not executed because the batch was cancelled.';
  return { id, custom_id: line.customId, response: null, error: { code: ending, message } };
}

/** A deterministic file id for a batch's output or error file (a retried finalization finds the file it made). */
function batchFileId(batchId: string, kind: 'output' | 'error'): string {
  return `file_${createHash('sha256').update(`${batchId}:${kind}`).digest('base64url').replace(/[-_]/g, '').slice(0, 24)}`;
}

export interface BatchRunInput {
  batchId: string;
}

/** A line's request as its run walks it (the fields of the request workflows' input that a line has). */
export interface BatchLineRequest {
  requestId: string;
  workspaceId: string;
  apiKeyId: string | null;
  endpoint: Endpoint;
  chain: string[];
  allowedModels: string[] | null;
  body: PayloadRef<unknown>;
  created: number;
  clientRequestId: null;
  userId: string | null;
  activityMode?: 'local' | 'remote';
  batch: { batchId: string; customId: string };
}

export function createBatchActivities(deps: ActivityDeps) {
  /** Writes one of a batch's files (the lines `wanted` picks) unless it exists already; null when no line belongs in it. */
  async function writeBatchFile(batch: BatchRecord, kind: 'output' | 'error', wanted: (line: FinishedLine) => boolean): Promise<string | null> {
    const id = batchFileId(batch.id, kind);
    if (await findFile(deps.db, batch.workspaceId, id)) return id;
    const hash = createHash('sha256');
    let count = 0;
    const storageKey = fileStorageKey(batch.workspaceId, id);
    async function* body(): AsyncGenerator<Buffer> {
      for await (const line of batchLines(deps.db, batch.id)) {
        if (!wanted(line)) continue;
        count++;
        const bytes = Buffer.from(`${JSON.stringify(openAIOutputLine(batch.id, line))}\n`);
        hash.update(bytes);
        yield bytes;
      }
    }
    const { bytes } = await deps.storage.putStream(storageKey, body(), { contentType: 'application/jsonl' });
    if (count === 0) {
      await deps.storage.delete(storageKey);
      return null;
    }
    await commitFile(deps.db, {
      id, workspaceId: batch.workspaceId, filename: `${batch.id}_${kind}.jsonl`, purpose: 'batch_output', bytes, contentType: 'application/jsonl',
      storageKey, sha256: hash.digest('hex'), createdByKeyId: batch.apiKeyId, actor: `batch:${batch.id}`, pastLimit: true,
    });
    return id;
  }

  return {
    /** Validates a batch's input file (OpenAI's API) and starts the batch, or fails it with its lines' errors. */
    async validateBatch(input: BatchRunInput): Promise<{ ok: boolean; total: number; status: string }> {
      const batch = await getBatch(deps.db, input.batchId);
      if (batch.status !== 'validating') return { ok: batch.status !== 'failed', total: batch.total, status: batch.status };
      const file = batch.inputFileId ? await findFile(deps.db, batch.workspaceId, batch.inputFileId) : null;
      let outcome: ValidationOutcome;
      if (!file) {
        outcome = { ok: false, total: 0, errors: [{ code: 'file_not_found', message: `The input file '${batch.inputFileId}' no longer exists.`, param: 'input_file_id', line: null }] };
      } else if (file.bytes > MAX_BATCH_FILE_BYTES) {
        outcome = { ok: false, total: 0, errors: [{ code: 'file_too_large', message: `The input file is ${file.bytes} bytes; a batch's file may hold at most ${MAX_BATCH_FILE_BYTES} bytes.`, param: 'input_file_id', line: null }] };
      } else {
        const object = await deps.storage.get(file.storageKey);
        outcome = await validateBatchLines(deps, batch, linesOf(object.body), batchModelAccess(deps, batch), () => Context.current().heartbeat());
      }
      if (!outcome.ok) {
        await failBatch(deps.db, batch.id, outcome.errors, outcome.total);
        return { ok: false, total: outcome.total, status: 'failed' };
      }
      const status = await startBatch(deps.db, batch.id, outcome.total);
      return { ok: true, total: outcome.total, status };
    },

    /** Claims lines to start now (the workspace's concurrency, the key's rpm: domain/batches.ts). */
    async claimBatchLines(input: { batchId: string; from: number; want: number; workspaceConcurrency: number }): Promise<LineClaim> {
      return claimLines(deps.db, input);
    },

    /**
     * A line's request, as its run walks it: the body goes to object storage (never into history), the
     * chain is the workspace's for the line's model now. Null when the line has an outcome already.
     */
    async prepareBatchLine(input: { batchId: string; index: number; activityMode?: 'local' | 'remote' }): Promise<BatchLineRequest | null> {
      const line = await lineToRun(deps.db, input.batchId, input.index);
      if (line.status !== 'running' && line.status !== 'pending') return null;
      const { batch } = line;
      const requestId = batchLineRequestId(batch.id, input.index);
      const storageKey = `requests/${requestId}.json`;
      await deps.storage.put(storageKey, Buffer.from(JSON.stringify(line.body)), { contentType: 'application/json' });
      return {
        requestId, workspaceId: batch.workspaceId, apiKeyId: batch.apiKeyId, endpoint: batchEndpoint(batch.endpoint),
        chain: [line.model, ...(await getFallbackChain(deps.db, batch.workspaceId, line.model))],
        allowedModels: batch.allowedModels, body: { storageKey },
        created: Math.floor(Date.now() / 1000), clientRequestId: null, userId: batch.userId, activityMode: input.activityMode,
        batch: { batchId: batch.id, customId: line.customId },
      };
    },

    /** Records a line's outcome: its answer (read back from where the hop stored it), or its error. */
    async recordBatchLine(given: { batchId: string; index: number; requestId: string | null; served?: { response: PayloadRef<CallOutcome['response']>; creditsUsedMicro: number }; error?: SerializedGatewayError }): Promise<void> {
      // A line whose run failed before it began has no request id of its own yet: it is the line's.
      const input = { ...given, requestId: given.requestId ?? batchLineRequestId(given.batchId, given.index) };
      if (input.served) {
        const response = await loadPayload(deps.storage, input.served.response);
        const body = response.kind === 'json' ? response.body : { storage_key: response.storageKey, content_type: response.contentType, bytes: response.bytes };
        await recordLine(deps.db, { batchId: input.batchId, index: input.index, requestId: input.requestId, statusCode: 200, body, creditsMicro: input.served.creditsUsedMicro });
        return;
      }
      const error = input.error ?? { name: 'InternalError', message: 'The line could not be served.', status: 500, type: 'server_error', code: null, param: null, headers: {}, retryable: false, fallsBack: false };
      // What an errored line was charged: nothing, unless a hop had settled (its usage record says).
      const usage = await deps.db('usage_records').where({ request_id: input.requestId }).first('credits_micro');
      await recordLine(deps.db, { batchId: input.batchId, index: input.index, requestId: input.requestId, statusCode: error.status, body: error, creditsMicro: Number(usage?.credits_micro ?? 0) });
    },

    /**
     * The batch's last step: lines never started end with it, the output and error files are written
     * (OpenAI's batches), and it ends `completed`, `cancelled` or `expired`.
     */
    async finishBatch(input: { batchId: string; ending: 'completed' | 'cancelled' | 'expired' }): Promise<void> {
      if (input.ending === 'completed') await markFinalizing(deps.db, input.batchId);
      else await closeUnstartedLines(deps.db, input.batchId, input.ending);
      const batch = await getBatch(deps.db, input.batchId);
      let files = { outputFileId: null as string | null, errorFileId: null as string | null };
      if (batch.shape === 'openai') {
        files = {
          outputFileId: await writeBatchFile(batch, 'output', (l) => l.status === 'succeeded'),
          errorFileId: await writeBatchFile(batch, 'error', (l) => l.status !== 'succeeded'),
        };
      }
      await endBatch(deps.db, input.batchId, input.ending, files);
    },
  };
}
