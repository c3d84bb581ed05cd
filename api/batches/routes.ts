/**
 * OpenAI's Batch API: `POST /v1/batches` (a file uploaded with purpose `batch`, one endpoint, the `24h`
 * window), `GET /v1/batches/{id}`, `GET /v1/batches` (newest first, paged by `after`), and
 * `POST /v1/batches/{id}/cancel`. Making and cancelling a batch takes `batches.write` (its lines spend
 * credits: the roles that may use models); reading one is polling a job (`jobs.read`). The lines run on the gateway itself, on any model (workflows/batch.ts).
 */
import Router from '@koa/router';
import { InvalidRequestError } from '../../core/errors';
import { formatCredits } from '../../catalog/pricing';
import { batchNotFound, findBatch, listBatches, requestCancel, type BatchRecord } from '../../domain/batches';
import { fileNotFound, findFile } from '../../domain/files';
import { listObject } from '../../domain/pagination';
import { OPENAI_BATCH_ENDPOINTS } from '../../endpoints/batch-lines';
import { compileSchema } from '../../endpoints/validate';
import { readJsonBody } from '../http/body';
import type { AppDeps, GatewayState } from '../http/context';
import { requirePermission } from '../http/permissions';
import { claimBatchId, createBatch, signalCancel } from './start';

interface CreateBatchBody {
  input_file_id: string;
  endpoint: (typeof OPENAI_BATCH_ENDPOINTS)[number];
  completion_window: '24h';
  metadata?: Record<string, string> | null;
}

const validateCreateBody = compileSchema<CreateBatchBody>({
  type: 'object',
  required: ['input_file_id', 'endpoint', 'completion_window'],
  additionalProperties: false,
  properties: {
    input_file_id: { type: 'string', minLength: 1, maxLength: 200 },
    endpoint: { enum: [...OPENAI_BATCH_ENDPOINTS] },
    completion_window: { enum: ['24h'] },
    // OpenAI's metadata: up to 16 pairs, keys up to 64 characters, values up to 512.
    metadata: {
      type: ['object', 'null'], maxProperties: 16,
      propertyNames: { maxLength: 64 },
      additionalProperties: { type: 'string', maxLength: 512 },
    },
  },
});

const seconds = (d: Date | null): number | null => (d ? Math.floor(d.getTime() / 1000) : null);

/** OpenAI's batch object (plus `credits_used`: what its lines were charged so far, in credits). */
export function toOpenAIBatch(batch: BatchRecord) {
  return {
    id: batch.id,
    object: 'batch' as const,
    endpoint: batch.endpoint,
    errors: batch.errors ? { object: 'list' as const, data: batch.errors } : null,
    input_file_id: batch.inputFileId,
    completion_window: batch.completionWindow,
    status: batch.status,
    output_file_id: batch.outputFileId,
    error_file_id: batch.errorFileId,
    created_at: seconds(batch.createdAt),
    in_progress_at: seconds(batch.inProgressAt),
    expires_at: seconds(batch.expiresAt),
    finalizing_at: seconds(batch.finalizingAt),
    completed_at: seconds(batch.completedAt),
    failed_at: seconds(batch.failedAt),
    expired_at: seconds(batch.expiredAt),
    cancelling_at: seconds(batch.cancellingAt),
    cancelled_at: seconds(batch.cancelledAt),
    request_counts: { total: batch.total, completed: batch.completed, failed: batch.failed },
    usage: {
      input_tokens: batch.inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: batch.outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: batch.inputTokens + batch.outputTokens,
    },
    metadata: batch.metadata,
    credits_used: formatCredits(batch.creditsMicro),
  };
}

const MAX_LIST_LIMIT = 100;

export function batchesRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();

  router.post('/batches', requirePermission('batches.write'), async (ctx) => {
    const body = validateCreateBody(await readJsonBody(ctx, deps.config.maxJsonBodyBytes));
    const { workspaceId } = ctx.state.auth;
    const { id, replay } = await claimBatchId(ctx, deps, 'openai', body);
    if (replay) {
      ctx.body = toOpenAIBatch(replay);
      return;
    }
    const file = await findFile(deps.db, workspaceId, body.input_file_id);
    if (!file) throw fileNotFound(body.input_file_id, 'input_file_id');
    if (file.purpose !== 'batch') {
      throw new InvalidRequestError(`The file '${file.id}' was uploaded with purpose '${file.purpose}'; a batch's input file needs purpose 'batch'.`, { param: 'input_file_id', code: 'invalid_file_purpose' });
    }
    const batch = await createBatch(ctx, deps, { id, shape: 'openai', endpoint: body.endpoint, inputFileId: file.id, metadata: body.metadata ?? null });
    ctx.body = toOpenAIBatch(batch);
  });

  router.get('/batches', requirePermission('jobs.read'), async (ctx) => {
    const { after, limit } = parseListQuery(ctx.query);
    const page = await listBatches(deps.db, ctx.state.auth.workspaceId, { shape: 'openai', limit, after });
    if ('unknownCursor' in page) throw new InvalidRequestError(`Invalid 'after': no batch '${after}' to page after.`, { param: 'after', code: 'invalid_value' });
    ctx.body = listObject(page.batches.map(toOpenAIBatch), page.hasMore);
  });

  router.get('/batches/:batchId', requirePermission('jobs.read'), async (ctx) => {
    const batch = await findBatch(deps.db, ctx.state.auth.workspaceId, ctx.params.batchId, 'openai');
    if (!batch) throw batchNotFound(ctx.params.batchId);
    ctx.body = toOpenAIBatch(batch);
  });

  router.post('/batches/:batchId/cancel', requirePermission('batches.write'), async (ctx) => {
    const batch = await requestCancel(deps.db, ctx.state.auth.workspaceId, ctx.params.batchId, 'openai');
    if (batch.status === 'cancelling') await signalCancel(deps, batch.id);
    ctx.body = toOpenAIBatch(batch);
  });

  return router;
}

function parseListQuery(query: Record<string, string | string[] | undefined>): { after?: string; limit: number } {
  for (const [name, value] of Object.entries(query)) {
    if (!['after', 'limit'].includes(name)) throw new InvalidRequestError(`Unrecognized query parameter: '${name}'.`, { param: name, code: 'unknown_parameter' });
    if (Array.isArray(value)) throw new InvalidRequestError(`'${name}' may be given once.`, { param: name, code: 'invalid_value' });
  }
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new InvalidRequestError(`Invalid 'limit': expected an integer from 1 to ${MAX_LIST_LIMIT}.`, { param: 'limit', code: 'invalid_value' });
  }
  const after = query.after as string | undefined;
  return { limit, ...(after ? { after } : {}) };
}
