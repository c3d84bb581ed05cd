/**
 * Runs a synchronous model request through its workflow: the requested model is checked here first (so a
 * bad request never starts a workflow), the workspace's fallback chain is resolved, and the result comes
 * back with the gateway's headers (x-credits-used, x-model-used, x-fallback-from, x-fallback-depth).
 */
import { WorkflowExecutionAlreadyStartedError, type WorkflowHandle } from '@temporalio/client';
import { handlerFor } from '../../endpoints';
import type { Endpoint } from '../../endpoints/types';
import { loadPayload, storePayload } from '../../activities/request-io';
import type { ModelRecord } from '../../catalog/types';
import { InvalidRequestError, NotFoundError, PermissionDeniedError } from '../../core/errors';
import { microToCredits } from '../../core/money';
import { getFallbackChain } from '../../domain/workspaces';
import type { SimulationDirective } from '../../providers/types';
import type { ModelRequestInput, ModelRequestResult } from '../../workflows/model-request';
import type { AppDeps, GatewayContext } from '../http/context';
import { canonicalJson, claimIdempotencyKey, readIdempotencyKey, sha256 } from '../../domain/idempotency';
import { requestSearchAttributes } from './workflow-ids';
import { awaitOutcome, expectOutcome } from './outcome';
import { IDEMPOTENT_REQUEST_PREFIX, requestWorkflowId } from '../../workflows/contracts';

/** Checks the requested model against the request and the key; returns its catalog record. */
export async function checkRequestedModel(ctx: GatewayContext, deps: AppDeps, endpoint: Endpoint, model: string, body: unknown): Promise<ModelRecord> {
  const handler = handlerFor(endpoint);
  const record = await deps.catalog.get(model);
  if (!record) throw new NotFoundError(`The model '${model}' does not exist.`, { code: 'model_not_found', param: 'model' });
  if (record.modality !== handler.modality) {
    throw new InvalidRequestError(`Model '${model}' is a ${record.modality} model; this endpoint needs a ${handler.modality} model.`, { code: 'model_modality_mismatch', param: 'model' });
  }
  const allowed = ctx.state.auth.allowedModels;
  if (allowed && !allowed.includes(model)) {
    throw new PermissionDeniedError(`This API key may not use model '${model}'. Allowed: ${allowed.join(', ')}.`, { code: 'model_not_allowed', param: 'model' });
  }
  handler.check(record, body);
  return record;
}

/** The `x-simulate-failure` / `x-simulate-fail-times` headers (honoured by the simulated provider only). */
export function simulationDirective(ctx: GatewayContext): SimulationDirective | undefined {
  const failure = ctx.get('x-simulate-failure');
  if (!failure) return undefined;
  const failTimes = Number(ctx.get('x-simulate-fail-times'));
  const delayMs = Number(ctx.get('x-simulate-delay-ms'));
  return { failure, ...(Number.isInteger(failTimes) && failTimes > 0 ? { failTimes } : {}), ...(delayMs > 0 ? { delayMs } : {}) };
}

/**
 * `idempotencyBody`: what an Idempotency-Key's body hash covers when it is not the body itself (bodies
 * holding upload keys, which differ on every request, hash their files' content instead).
 */
export async function runModelRequest(ctx: GatewayContext, deps: AppDeps, opts: { endpoint: Endpoint; model: string; body: unknown; idempotencyBody?: unknown }): Promise<ModelRequestResult> {
  const { auth, requestId } = ctx.state;
  const chain = [opts.model, ...(await getFallbackChain(deps.db, auth.workspaceId, opts.model))];
  const input: ModelRequestInput = {
    requestId,
    workspaceId: auth.workspaceId,
    apiKeyId: auth.keyId,
    endpoint: opts.endpoint,
    chain,
    allowedModels: auth.allowedModels,
    body: await storePayload(deps.storage, `requests/${requestId}.json`, opts.body),
    created: Math.floor(Date.now() / 1000),
    clientRequestId: ctx.state.clientRequestId ?? null,
    simulate: simulationDirective(ctx),
    activityMode: deps.config.activityMode,
  };
  let workflowId = requestWorkflowId(requestId);
  const idempotencyKey = readIdempotencyKey(ctx.get('idempotency-key'));
  let replay = false;
  if (idempotencyKey) {
    const claim = await claimIdempotencyKey(deps.db, {
      workspaceId: auth.workspaceId, scope: opts.endpoint, key: idempotencyKey, bodyHash: sha256(canonicalJson(opts.idempotencyBody ?? opts.body)), prefix: IDEMPOTENT_REQUEST_PREFIX,
    });
    workflowId = claim.resourceId;
    replay = !claim.first;
  }

  const startOptions = {
    taskQueue: deps.temporal.taskQueue,
    workflowId,
    args: [input] as [ModelRequestInput],
    requestEagerStart: deps.config.eagerStart,
    typedSearchAttributes: requestSearchAttributes({ requestId, workspaceId: auth.workspaceId, apiKeyId: auth.keyId, model: opts.model, endpoint: opts.endpoint }),
    workflowExecutionTimeout: '30 minutes' as const,
  };
  const expectation = replay ? null : expectOutcome(deps.results, workflowId);
  let handle: WorkflowHandle & { eagerlyStarted?: boolean };
  try {
    handle = await deps.temporal.client.workflow.start('modelRequestWorkflow', {
      ...startOptions,
      // A retry with the same Idempotency-Key joins the run that is (or was) serving it.
      ...(idempotencyKey ? { workflowIdConflictPolicy: 'USE_EXISTING' as const, workflowIdReusePolicy: 'REJECT_DUPLICATE' as const } : {}),
    });
  } catch (err) {
    expectation?.cancel();
    if (!(idempotencyKey && err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    handle = deps.temporal.client.workflow.getHandle(workflowId);
    replay = true;
  }
  const result = await awaitOutcome<ModelRequestResult>(handle, expectation);
  applyResultHeaders(ctx, result);
  if (replay) ctx.set('x-idempotent-replayed', 'true');
  return result;
}

export function applyResultHeaders(ctx: GatewayContext, result: Pick<ModelRequestResult, 'creditsUsedMicro' | 'modelUsed' | 'fallbackFrom' | 'fallbackDepth'>): void {
  ctx.set('x-credits-used', String(microToCredits(result.creditsUsedMicro)));
  ctx.set('x-model-used', result.modelUsed);
  if (result.fallbackFrom) {
    ctx.set('x-fallback-from', result.fallbackFrom);
    ctx.set('x-fallback-depth', String(result.fallbackDepth));
  }
}

/** Writes the result's response (JSON, or stored bytes streamed from object storage). */
export async function sendModelResponse(ctx: GatewayContext, deps: AppDeps, result: ModelRequestResult): Promise<void> {
  const response = await loadPayload(deps.storage, result.response);
  if (response.kind === 'json') {
    ctx.body = response.body;
    return;
  }
  const object = await deps.storage.get(response.storageKey);
  ctx.type = response.contentType;
  ctx.length = response.bytes;
  ctx.body = object.body;
}
