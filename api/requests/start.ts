/**
 * Starting a request's workflow: the input every request workflow takes (built here only), the options
 * every start shares (eager start, search attributes, timeout), and typed starts by workflow function.
 */
import { isGrpcDeadlineError, type WorkflowHandleWithFirstExecutionRunId, type WorkflowStartOptions } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import { storePayload } from '../../activities/request-io';
import { chainOf, getFallbackChain } from '../../domain/workspaces';
import { recordRequestAlias } from '../../domain/request-aliases';
import type { Endpoint } from '../../endpoints/types';
import type { SimulationDirective } from '../../providers/types';
import type { ModelRequestInput } from '../../workflows/model-request';
import type { AppDeps, GatewayContext } from '../http/context';
import { requestSearchAttributes } from './workflow-ids';
import { outcomeUnknown } from './outcome';
import { GatewayError } from '../../core/errors';

/** The `x-simulate-failure` / `x-simulate-fail-times` headers (honoured by the simulated provider only). */
export function simulationDirective(ctx: GatewayContext): SimulationDirective | undefined {
  const failure = ctx.get('x-simulate-failure');
  if (!failure) return undefined;
  const failTimes = Number(ctx.get('x-simulate-fail-times'));
  const delayMs = Number(ctx.get('x-simulate-delay-ms'));
  return { failure, ...(Number.isInteger(failTimes) && failTimes > 0 ? { failTimes } : {}), ...(delayMs > 0 ? { delayMs } : {}) };
}

/** The request as its workflow sees it: who asks, the chain to walk, and the body (kept in object storage). */
export async function requestInput(ctx: GatewayContext, deps: AppDeps, opts: { endpoint: Endpoint; model: string; body: unknown }): Promise<ModelRequestInput> {
  const { auth, requestId } = ctx.state;
  // Findable by the client's own id from here on, before anything is held or called (a crash included).
  if (ctx.state.clientRequestId) await recordRequestAlias(deps.db, { workspaceId: auth.workspaceId, alias: ctx.state.clientRequestId, requestId });
  return {
    requestId,
    workspaceId: auth.workspaceId,
    apiKeyId: auth.keyId,
    endpoint: opts.endpoint,
    // Read with the key when a key asks (api/http/auth.ts); a member's session reads it now.
    chain: [opts.model, ...(auth.fallbackChains ? chainOf(auth.fallbackChains, opts.model) : await getFallbackChain(deps.db, auth.workspaceId, opts.model))],
    allowedModels: auth.allowedModels,
    body: await storePayload(deps.storage, `requests/${requestId}.json`, opts.body),
    created: Math.floor(Date.now() / 1000),
    clientRequestId: ctx.state.clientRequestId ?? null,
    simulate: simulationDirective(ctx),
    activityMode: deps.config.activityMode,
  };
}

export type RequestStartOptions<W extends Workflow> = Pick<WorkflowStartOptions<W>, 'args' | 'workflowId'> & Partial<WorkflowStartOptions<W>>;

/**
 * Starts a request workflow (`start<typeof wf>`: its arguments and result are typed by the workflow itself).
 * A start the server did not answer in time may have happened: its outcome is unknown (504), not a failure.
 * A server that cannot be reached started nothing (503 from the error mapper).
 */
export function startRequestWorkflow<W extends Workflow>(
  ctx: GatewayContext, deps: AppDeps, name: string, opts: RequestStartOptions<W> & { model: string; endpoint: string },
): Promise<WorkflowHandleWithFirstExecutionRunId<W> & { eagerlyStarted?: boolean }> {
  const { model, endpoint, ...options } = opts;
  const { auth, requestId } = ctx.state;
  // Every request workflow takes the input built by requestInput: its key (none for a member in the
  // Playground, whose session is not a key) is the one operators search by.
  const input = options.args?.[0] as Pick<ModelRequestInput, 'apiKeyId'> | undefined;
  return deps.temporal.client.workflow.start<W>(name, {
    taskQueue: deps.temporal.taskQueue,
    requestEagerStart: deps.config.eagerStart,
    typedSearchAttributes: requestSearchAttributes({ requestId, workspaceId: auth.workspaceId, apiKeyId: input?.apiKeyId ?? undefined, model, endpoint }),
    workflowExecutionTimeout: '30 minutes',
    ...options,
  } as WorkflowStartOptions<W>).catch((err: unknown) => {
    throw isGrpcDeadlineError(err) ? outcomeUnknown({ requestId, joined: false }) : err;
  });
}

/**
 * A first hop (activities/first-hop.ts) whose run could not be started stops and gives its hold back; one
 * whose start's outcome is unknown (the run may exist) is left to that run, or to the hold sweeper.
 */
export function abandonUnlessStarted(hop: { abandon(reason: string): void }, startError: unknown): void {
  if (startError instanceof GatewayError && startError.code === 'outcome_unknown') return;
  hop.abandon('its run could not be started');
}
