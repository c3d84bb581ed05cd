/**
 * Anthropic's Message Batches, on the batch engine (workflows/batch.ts) as a thin translation: a batch's
 * `requests` are lines of `/v1/messages`, checked when it is made (a bad one is a 400 naming it, and no
 * batch is made), then run as an OpenAI batch's lines are. `GET .../results` streams the outcomes in
 * Anthropic's JSONL. Permissions as on OpenAI's batches: making and cancelling (`batches.write`, which spends),
 * reading is polling (`jobs.read`); an ended batch may be deleted (`batches.write`). Errors are in Anthropic's shape (api/http/errors.ts: /v1/messages paths).
 */
import Router from '@koa/router';
import { Readable } from 'node:stream';
import { gatewayErrorFromJSON, InvalidRequestError, NotFoundError, type SerializedGatewayError } from '../../core/errors';
import {
  batchLines, batchNotFound, deleteEndedBatch, FINAL_BATCH_STATUSES, findBatch, lineCounts, listBatches, MAX_BATCH_LINES, requestCancel, startBatch,
  type BatchRecord, type FinishedLine,
} from '../../domain/batches';
import { MESSAGES_BATCH_ENDPOINT } from '../../endpoints/batch-lines';
import { anthropicErrorBody } from '../../endpoints/messages/errors';
import { compileSchema } from '../../endpoints/validate';
import { validateBatchLines } from '../../activities/batches';
import { readJsonBody } from '../http/body';
import { modelAccessOf } from '../http/model-access';
import type { AppDeps, GatewayContext, GatewayState } from '../http/context';
import { requirePermission } from '../http/permissions';
import { claimBatchId, createBatch, signalCancel } from '../batches/start';

interface CreateMessageBatchBody {
  requests: Array<{ custom_id: string; params: Record<string, unknown> }>;
}

const validateCreateBody = compileSchema<CreateMessageBatchBody>({
  type: 'object',
  required: ['requests'],
  additionalProperties: false,
  properties: {
    requests: {
      type: 'array', minItems: 1, maxItems: MAX_BATCH_LINES,
      items: {
        type: 'object', required: ['custom_id', 'params'], additionalProperties: false,
        properties: {
          custom_id: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' },
          params: { type: 'object' },
        },
      },
    },
  },
});

const rfc3339 = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** Anthropic's message_batch object. */
export async function toMessageBatch(deps: AppDeps, ctx: GatewayContext, batch: BatchRecord) {
  const counts = await lineCounts(deps.db, batch.id);
  const ended = FINAL_BATCH_STATUSES.includes(batch.status);
  return {
    id: batch.id,
    type: 'message_batch' as const,
    processing_status: ended ? 'ended' : batch.status === 'cancelling' ? 'canceling' : 'in_progress',
    request_counts: {
      processing: counts.pending + counts.running, succeeded: counts.succeeded, errored: counts.errored,
      canceled: counts.cancelled, expired: counts.expired,
    },
    ended_at: rfc3339(batch.completedAt ?? batch.cancelledAt ?? batch.expiredAt ?? batch.failedAt),
    created_at: rfc3339(batch.createdAt)!,
    expires_at: rfc3339(batch.expiresAt)!,
    archived_at: null,
    cancel_initiated_at: rfc3339(batch.cancellingAt),
    results_url: ended ? `${ctx.protocol}://${ctx.host}/v1/messages/batches/${batch.id}/results` : null,
  };
}

/** One line of the results file, in Anthropic's shape. */
function resultLine(line: FinishedLine): Record<string, unknown> {
  switch (line.status) {
    case 'succeeded':
      return { custom_id: line.customId, result: { type: 'succeeded', message: line.response } };
    case 'errored': {
      const { request_id: _ignored, ...error } = anthropicErrorBody(gatewayErrorFromJSON(line.error as SerializedGatewayError), line.requestId);
      return { custom_id: line.customId, result: { type: 'errored', error } };
    }
    case 'expired':
      return { custom_id: line.customId, result: { type: 'expired' } };
    default:
      return { custom_id: line.customId, result: { type: 'canceled' } };
  }
}

export function messageBatchesRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const owned = async (ctx: GatewayContext): Promise<BatchRecord> => {
    const batch = await findBatch(deps.db, ctx.state.auth.workspaceId, ctx.params.batchId, 'anthropic');
    if (!batch) throw batchNotFound(ctx.params.batchId);
    return batch;
  };

  router.post('/messages/batches', requirePermission('batches.write'), async (ctx) => {
    const body = validateCreateBody(await readJsonBody(ctx, deps.config.maxJsonBodyBytes));
    const { id, replay } = await claimBatchId(ctx, deps, 'anthropic', body);
    if (replay) {
      ctx.body = await toMessageBatch(deps, ctx, replay);
      return;
    }
    const lines = body.requests.map((r) => JSON.stringify({ custom_id: r.custom_id, method: 'POST', url: MESSAGES_BATCH_ENDPOINT, body: r.params }));
    const batch = await createBatch(ctx, deps, {
      id, shape: 'anthropic', endpoint: MESSAGES_BATCH_ENDPOINT, inputFileId: null, metadata: null,
      // Checked before its run starts: a bad request is this call's 400, and no batch is left behind.
      beforeStart: async (made) => {
        const outcome = await validateBatchLines(deps, made, lines, modelAccessOf(deps, ctx.state.auth));
        if (!outcome.ok) {
          await deps.db('batches').where({ id: made.id }).delete();
          const first = outcome.errors[0];
          const at = first.line === null ? '' : `requests.${first.line - 1}`;
          const param = first.param ? first.param.replace(/^body/, 'params').replace(/^custom_id$/, 'custom_id') : null;
          throw new InvalidRequestError(`${[at, param].filter(Boolean).join('.')}: ${first.message}`, { code: first.code, param: at || null });
        }
        await startBatch(deps.db, made.id, outcome.total);
      },
    });
    ctx.body = await toMessageBatch(deps, ctx, await findBatch(deps.db, batch.workspaceId, batch.id) ?? batch);
  });

  router.get('/messages/batches', requirePermission('jobs.read'), async (ctx) => {
    const query = parseListQuery(ctx.query);
    const page = await listBatches(deps.db, ctx.state.auth.workspaceId, { shape: 'anthropic', limit: query.limit, after: query.after_id, before: query.before_id });
    if ('unknownCursor' in page) throw new InvalidRequestError('No message batch to page from with that id.', { code: 'invalid_value', param: query.before_id ? 'before_id' : 'after_id' });
    const data = await Promise.all(page.batches.map((b) => toMessageBatch(deps, ctx, b)));
    ctx.body = { data, has_more: page.hasMore, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null };
  });

  router.get('/messages/batches/:batchId', requirePermission('jobs.read'), async (ctx) => {
    ctx.body = await toMessageBatch(deps, ctx, await owned(ctx));
  });

  router.post('/messages/batches/:batchId/cancel', requirePermission('batches.write'), async (ctx) => {
    const batch = await requestCancel(deps.db, ctx.state.auth.workspaceId, ctx.params.batchId, 'anthropic');
    if (batch.status === 'cancelling') await signalCancel(deps, batch.id);
    ctx.body = await toMessageBatch(deps, ctx, batch);
  });

  router.delete('/messages/batches/:batchId', requirePermission('batches.write'), async (ctx) => {
    const { auth } = ctx.state;
    const outcome = await deleteEndedBatch(deps.db, { workspaceId: auth.workspaceId, id: ctx.params.batchId, shape: 'anthropic', actor: `api_key:${auth.keyId}` });
    if (outcome === 'missing') throw batchNotFound(ctx.params.batchId);
    if (outcome === 'open') {
      throw new InvalidRequestError(`Message batch ${ctx.params.batchId} has not ended yet; cancel it and wait until processing_status is 'ended' to delete it.`, { code: 'batch_not_ended' });
    }
    ctx.body = { id: ctx.params.batchId, type: 'message_batch_deleted' };
  });

  router.get('/messages/batches/:batchId/results', requirePermission('jobs.read'), async (ctx) => {
    const batch = await owned(ctx);
    if (!FINAL_BATCH_STATUSES.includes(batch.status)) {
      throw new NotFoundError(`Message batch ${batch.id} has not ended yet: its results are available once processing_status is 'ended'.`, { code: 'results_not_ready' });
    }
    ctx.type = 'application/binary';
    ctx.set('content-disposition', `attachment; filename="${batch.id}_results.jsonl"`);
    ctx.body = Readable.from((async function* () {
      for await (const line of batchLines(deps.db, batch.id)) yield `${JSON.stringify(resultLine(line))}\n`;
    })());
  });

  return router;
}

function parseListQuery(query: Record<string, string | string[] | undefined>): { limit: number; after_id?: string; before_id?: string } {
  for (const [name, value] of Object.entries(query)) {
    if (!['limit', 'after_id', 'before_id'].includes(name) || Array.isArray(value)) {
      throw new InvalidRequestError(`${name}: Unknown or repeated query parameter.`, { param: name, code: 'unknown_parameter' });
    }
  }
  if (query.after_id && query.before_id) throw new InvalidRequestError('Give after_id or before_id, not both.', { code: 'invalid_value' });
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new InvalidRequestError('limit: expected an integer from 1 to 1000.', { param: 'limit', code: 'invalid_value' });
  return { limit, ...(query.after_id ? { after_id: query.after_id as string } : {}), ...(query.before_id ? { before_id: query.before_id as string } : {}) };
}
