/**
 * Activities of a batch served on its provider's own batch API (workflows/native-batch.ts): whether it can
 * be, each line's hold, the submission, polls, the cancel, and each line's outcome once the provider's batch
 * ended, settled at the model's batch price with its usage record exactly as a line served by the gateway
 * is (the same request id, usage record and `credits_used`). Bodies and answers never pass through the run.
 */
import { Context } from '@temporalio/activity';
import { InsufficientCreditsError, PermissionDeniedError, UpstreamError, type SerializedGatewayError } from '../core/errors';
import type { ModelRecord } from '../catalog/types';
import { batchLineRequestId, getBatch, recordLine, type BatchRecord } from '../domain/batches';
import { refund, reserve } from '../domain/ledger';
import { failRequest, type UsageRecord } from '../domain/request-accounting';
import { findNativeBatch, saveNativeBatch, soleModelOf, waitingLines, type NativeBatch } from '../domain/native-batches';
import { handlerFor } from '../endpoints';
import { batchEndpoint } from '../endpoints/batch-lines';
import { nativeBatchLine, type NativeBatchLine } from '../endpoints/native-batch-lines';
import type { NativeBatches, NativeBatchState } from '../providers/types';
import { settleAndSignal } from './budget-signal';
import type { ActivityDeps } from './deps';
import { servingFor } from './requests';
import { batchWorkflowId } from '../workflows/contracts';

/**
 * A line's hold while its provider batch runs: named `<batch run>:line-<n>`, so the hold sweeper
 * (domain/abandoned-holds.ts) sees the batch's run alive and leaves it, and gives it back once that run is gone.
 */
const lineHold = (batchId: string, index: number) => `${batchWorkflowId(batchId)}:line-${index}`;

/** The provider's name for a line: its position (custom ids may be longer than providers take). */
const upstreamLineId = (index: number) => `line-${index}`;

/** What a submission heartbeats once the provider made its batch. */
interface SubmittedDetails {
  upstreamId: string;
}

/** A submission heartbeats this often while it builds and uploads the requests (the run's heartbeat timeout is longer). */
const SUBMIT_HEARTBEAT_MS = 5_000;

export interface NativeBatchInput {
  batchId: string;
}

export function createNativeBatchActivities(deps: ActivityDeps) {
  async function served(batchId: string): Promise<{ batch: BatchRecord; native: NativeBatch; record: ModelRecord; batches: NativeBatches; lines: NativeBatchLine }> {
    const batch = await getBatch(deps.db, batchId);
    const native = await findNativeBatch(deps.db, batchId);
    if (!native) throw new Error(`batch ${batchId} is not served on a provider's batch API`);
    const record = await deps.catalog.get(native.model);
    const batches = deps.providers.get(native.provider).batches;
    const lines = nativeBatchLine(batch.endpoint);
    if (!record || !batches || !lines) throw new Error(`${native.provider} no longer serves batches of ${native.model}`);
    return { batch, native, record, batches, lines };
  }

  function usageOf(batch: BatchRecord, index: number, customId: string, model: string, fields: Pick<UsageRecord, 'status' | 'inputTokens' | 'outputTokens'> & { errorCode?: string | null }): UsageRecord {
    return {
      requestId: batchLineRequestId(batch.id, index), workspaceId: batch.workspaceId, apiKeyId: batch.apiKeyId, endpoint: batchEndpoint(batch.endpoint),
      modelRequested: model, modelUsed: model, fallbackDepth: 0, userId: batch.userId, latencyMs: null,
      batchId: batch.id, batchCustomId: customId, ...fields,
    };
  }

  /** A line's error: its hold given back, its usage record, its outcome. */
  async function failLine(batch: BatchRecord, model: string, line: { index: number; customId: string }, error: SerializedGatewayError): Promise<void> {
    const requestId = batchLineRequestId(batch.id, line.index);
    await failRequest(deps.db, {
      reservationId: lineHold(batch.id, line.index), reason: 'provider batch request failed',
      usage: usageOf(batch, line.index, line.customId, model, { status: 'failed', inputTokens: 0, outputTokens: 0, errorCode: error.code }),
    });
    await recordLine(deps.db, { batchId: batch.id, index: line.index, requestId, statusCode: error.status, body: error, creditsMicro: 0 });
  }

  return {
    /**
     * Whether the batch goes to its provider's batch API: every line on one model whose record says so,
     * served by the platform's key of a provider whose batch API takes the batch's endpoint (not a
     * workspace's own key, not spread over deployments). Kept on the batch, so a retry decides the same.
     */
    async planNativeBatch(input: NativeBatchInput): Promise<{ native: boolean }> {
      if (await findNativeBatch(deps.db, input.batchId)) return { native: true };
      const batch = await getBatch(deps.db, input.batchId);
      if (!nativeBatchLine(batch.endpoint)) return { native: false };
      const model = await soleModelOf(deps.db, batch.id);
      const listed = model ? await deps.catalog.get(model) : undefined;
      if (!model || !listed?.batch?.native) return { native: false };
      const { keySource } = await servingFor(deps, batch.workspaceId, listed);
      const provider = deps.providers.isConfigured(listed.provider) ? deps.providers.get(listed.provider) : null;
      if (keySource !== 'platform' || !provider?.batches?.urls.includes(batch.endpoint) || deps.providers.deploymentsOf(listed.slug, listed.provider)) return { native: false };
      await saveNativeBatch(deps.db, batch.id, { provider: listed.provider, model, upstreamId: null });
      return { native: true };
    },

    /**
     * Holds each line's estimate, as a line the gateway serves would be held; a line the balance or the key's
     * cap refuses ends with that error now (nothing held) and is not submitted. A retry finds the holds it took.
     */
    async holdNativeLines(input: NativeBatchInput): Promise<{ held: number }> {
      const { batch, native, record } = await served(input.batchId);
      const handler = handlerFor(batchEndpoint(batch.endpoint));
      let held = 0;
      for await (const line of waitingLines(deps.db, batch.id)) {
        if (held % 100 === 0) Context.current().heartbeat();
        const requestId = batchLineRequestId(batch.id, line.index);
        try {
          await reserve(deps.db, {
            reservationId: lineHold(batch.id, line.index), workspaceId: batch.workspaceId, apiKeyId: batch.apiKeyId,
            amountMicro: handler.estimate(record, line.body), requestId, model: native.model,
          });
          held++;
        } catch (err) {
          if (!(err instanceof InsufficientCreditsError || err instanceof PermissionDeniedError)) throw err;
          await failLine(batch, native.model, line, err.toJSON());
        }
      }
      return { held };
    },

    /**
     * Submits the held lines, once. The provider's batch id is heartbeated the moment it is known, then kept on
     * the batch; a retried attempt takes the id its last attempt heartbeated, or else looks for the provider's
     * batch tagged with ours (where the provider keeps a tag), before making one.
     */
    async submitNativeBatch(input: NativeBatchInput): Promise<{ submitted: boolean }> {
      const { batch, native, record, batches, lines } = await served(input.batchId);
      if (native.upstreamId) return { submitted: true };
      const activity = Context.current();
      const ctx = { requestId: batch.id };
      const keep = async (upstreamId: string) => {
        activity.heartbeat({ upstreamId } satisfies SubmittedDetails);
        await saveNativeBatch(deps.db, batch.id, { ...native, upstreamId });
        return { submitted: true };
      };
      if (activity.info.attempt > 1) {
        const kept = (activity.info.heartbeatDetails as SubmittedDetails | undefined)?.upstreamId ?? await batches.findTagged?.(batch.id, ctx);
        if (kept) return keep(kept);
      }
      const beat = setInterval(() => activity.heartbeat(), SUBMIT_HEARTBEAT_MS);
      try {
        const requests = [];
        for await (const line of waitingLines(deps.db, batch.id)) {
          const request = await lines.request(record, line.body, { db: deps.db, storage: deps.storage, workspaceId: batch.workspaceId });
          requests.push({ customId: upstreamLineId(line.index), body: batches.chatBody(record.upstreamId, request) });
        }
        if (requests.length === 0) return { submitted: false };
        const upstreamId = await batches.submit(requests, batch.id, ctx);
        clearInterval(beat);
        return await keep(upstreamId);
      } finally {
        clearInterval(beat);
      }
    },

    async pollNativeBatch(input: NativeBatchInput): Promise<NativeBatchState> {
      const { native, batches } = await served(input.batchId);
      return batches.state(native.upstreamId!, { requestId: input.batchId });
    },

    /** Forwards a cancel to the provider (a batch it already ended needs none). */
    async cancelNativeBatch(input: NativeBatchInput): Promise<void> {
      const { native, batches } = await served(input.batchId);
      try {
        await batches.cancel(native.upstreamId!, { requestId: input.batchId });
      } catch (err) {
        if (!(err instanceof UpstreamError && err.kind === 'caller_error')) throw err;
      }
    },

    /**
     * Records every line the provider's ended batch answered: an answer settled at the batch price with its
     * usage record, an error with its hold given back. `failure`: the provider's batch failed as a whole (or
     * could not be made), and every line still waiting ends with that error. Lines the provider never ran
     * are left waiting, their holds given back (the batch's `ending` closes them); in a batch that completed,
     * a line the provider's results do not name ends with an error.
     */
    async collectNativeBatch(input: NativeBatchInput & { ending: 'completed' | 'cancelled' | 'expired'; failure?: SerializedGatewayError; providerFailed?: { message: string | null } }): Promise<void> {
      const { batch, native, record, batches, lines } = await served(input.batchId);
      const failure = input.failure ?? (input.providerFailed ? providerBatchFailure(native.provider, input.providerFailed.message) : undefined);
      if (native.upstreamId && !failure) {
        let seen = 0;
        for await (const outcome of batches.results(native.upstreamId, { requestId: batch.id })) {
          if (++seen % 100 === 0) Context.current().heartbeat();
          const index = Number(/^line-(\d+)$/.exec(outcome.customId)?.[1] ?? NaN);
          if (!Number.isSafeInteger(index)) continue; // not a request of ours
          const line = await deps.db('batch_lines').where({ batch_id: batch.id, line_index: index, status: 'pending' }).first('custom_id', 'body');
          if (!line) continue; // recorded already (a retried collection)
          const at = { index, customId: line.custom_id as string };
          if (outcome.kind === 'failed') {
            await failLine(batch, native.model, at, outcome.error.toJSON());
            continue;
          }
          if (outcome.kind === 'not_run') continue;
          const requestId = batchLineRequestId(batch.id, index);
          const answer = lines.answer(record, line.body, outcome.result, { requestId, created: Math.floor(Date.now() / 1000) });
          const { chargeMicro } = answer;
          await settleAndSignal(deps, {
            reservationId: lineHold(batch.id, index), chargeMicro,
            usage: { ...usageOf(batch, index, at.customId, native.model, { status: 'succeeded', inputTokens: answer.usage.inputTokens, outputTokens: answer.usage.outputTokens }), units: answer.usage.units },
          });
          const body = answer.response.kind === 'json' ? answer.response.body : null;
          await recordLine(deps.db, { batchId: batch.id, index, requestId, statusCode: 200, body, creditsMicro: chargeMicro });
        }
      }
      for await (const line of waitingLines(deps.db, batch.id)) {
        if (failure) await failLine(batch, native.model, line, failure);
        else if (input.ending === 'completed') await failLine(batch, native.model, line, providerBatchFailure(native.provider, 'its results have no answer for this request'));
        else await refund(deps.db, { reservationId: lineHold(batch.id, line.index), reason: 'provider batch did not run the request' });
      }
    },
  };
}

/** The error a failed provider batch gives each of its lines. */
function providerBatchFailure(provider: string, message: string | null): SerializedGatewayError {
  return new UpstreamError(`${provider} failed the batch${message ? `: ${message}` : ''}`, { kind: 'caller_error', provider }).toJSON();
}
