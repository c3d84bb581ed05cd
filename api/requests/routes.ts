/**
 * `GET /v1/requests/{id}`: what became of one of the workspace's requests, by its x-request-id (or the
 * client's own X-Request-Id once it was recorded): running, succeeded, failed or cancelled, with the result
 * or the error, the charge, the model that served and the fallback hops. It reads the usage record (the
 * books) and the request's workflow (the answer); another workspace's request is a 404 like a missing one.
 */
import Router from '@koa/router';
import { WorkflowFailedError, type WorkflowExecutionDescription, type WorkflowHandle } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { loadPayload } from '../../activities/request-io';
import { NotFoundError, ServiceUnavailableError, type GatewayError } from '../../core/errors';
import { microToCredits } from '../../core/money';
import { findUsage, type StoredUsage } from '../../domain/request-accounting';
import { findRequestAlias, type RequestAlias } from '../../domain/request-aliases';
import type { ModelRequestResult } from '../../workflows/model-request';
import type { HopRecord } from '../../workflows/request-steps';
import { EndpointKey, ModelKey, RequestIdKey, requestWorkflowId, WorkspaceIdKey } from '../../workflows/contracts';
import type { AppDeps, GatewayState } from '../http/context';
import { requirePermission } from '../http/permissions';
import { failureOfRun, stoppedWithCharge } from './outcome';

const REQUEST_ID = /^[A-Za-z0-9_.:-]{1,200}$/;
const RESULT_URL_SECONDS = 3600;

export function requestsRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.get('/requests/:id', requirePermission('jobs.read'), async (ctx) => {
    ctx.body = await requestOutcome(deps, ctx.state.auth.workspaceId, ctx.params.id);
  });
  return router;
}

interface FoundRun {
  handle: WorkflowHandle;
  description: WorkflowExecutionDescription;
}

export async function requestOutcome(deps: AppDeps, workspaceId: string, id: string) {
  const missing = new NotFoundError(`No request '${id}' exists in this workspace.`, { code: 'request_not_found', param: 'id' });
  if (!REQUEST_ID.test(id)) throw missing;
  const found = await findRequest(deps, workspaceId, id);
  const { usage } = found;
  const requestId = usage?.requestId ?? found.requestId;
  const run = await closedOnceRecorded(found.run, usage);
  if (!usage && !run) {
    if (found.alias) return await notStarted(deps, workspaceId, requestId, found.alias);
    throw missing;
  }

  const state = run?.description.status.name;
  let result: Awaited<ReturnType<typeof readResult>> = { response: null, hops: null };
  let error: GatewayError | null = null;
  if (run && state === 'COMPLETED') result = await readResult(deps, run.handle);
  if (run && state && state !== 'RUNNING' && state !== 'COMPLETED') error = await readFailure(run.handle);
  // A run stopped after it had produced something (a stream cut short) says what that was charged.
  if (error && usage) error = stoppedWithCharge(error, usage.creditsMicro);
  const attributes = run?.description.typedSearchAttributes;
  const created = usage?.createdAt ?? run?.description.startTime ?? new Date();
  return {
    id: requestId,
    object: 'request',
    status: statusOf(state, usage),
    endpoint: usage?.endpoint ?? attributes?.get(EndpointKey) ?? null,
    model: usage?.modelRequested ?? attributes?.get(ModelKey) ?? null,
    model_used: usage?.modelUsed ?? null,
    fallback_depth: usage?.fallbackDepth ?? null,
    fallback_hops: result.hops,
    deployment: usage?.deployment ?? null,
    credits_used: usage ? microToCredits(usage.creditsMicro) : state === 'RUNNING' ? null : 0,
    created: Math.floor(created.getTime() / 1000),
    result: result.response,
    error: error && { message: error.message, type: error.type, param: error.param, code: error.code },
  };
}

interface FoundRequest {
  requestId: string;
  usage: StoredUsage | null;
  run: FoundRun | null;
  /** The alias the id was found by (the client's X-Request-Id, a replay's x-request-id). */
  alias: RequestAlias | null;
}

/**
 * The request `id` names: by its usage record (our id, or the client's once recorded), its run, or an alias
 * recorded before anything was held (the client's X-Request-Id, a replay's x-request-id, which may name a
 * client id in turn).
 */
async function findRequest(deps: AppDeps, workspaceId: string, id: string): Promise<FoundRequest> {
  let requestId = id;
  let alias: RequestAlias | null = null;
  for (let hop = 0; hop < 3; hop++) {
    const usage = await findUsage(deps.db, workspaceId, requestId);
    if (usage) return { requestId: usage.requestId, usage, run: await findRun(deps, workspaceId, usage.requestId), alias };
    const run = await findRun(deps, workspaceId, requestId);
    if (run) return { requestId, usage: null, run, alias };
    const next = await findRequestAlias(deps.db, workspaceId, requestId);
    if (!next) break;
    alias = next;
    if (next.workflowId) {
      const named = await runById(deps, workspaceId, next.workflowId);
      const ofRun = named?.description.typedSearchAttributes.get(RequestIdKey) ?? null;
      if (named && ofRun) return { requestId: ofRun, usage: await findUsage(deps.db, workspaceId, ofRun), run: named, alias };
    }
    if (!next.requestId || next.requestId === requestId) break;
    requestId = next.requestId;
  }
  return { requestId, usage: null, run: null, alias };
}

/** How long a request that reached us may go without a run before it is said not to have started. */
const START_GRACE_MS = 30_000;

/**
 * A request that reached the gateway (its alias was recorded) but has no run: its run is being started
 * (`running`), or the process died before starting it (`failed`, nothing charged: a hold it took is given
 * back by the hold sweeper, and the answer says `running` while one is held).
 */
async function notStarted(deps: AppDeps, workspaceId: string, requestId: string, alias: RequestAlias) {
  const held = await deps.db('reservations').where({ workspace_id: workspaceId, request_id: requestId, status: 'held' }).first('id');
  const running = Boolean(held) || Date.now() - alias.createdAt.getTime() < START_GRACE_MS;
  const error = running ? null : new ServiceUnavailableError('The gateway stopped before this request started; nothing was charged. It may be sent again.', { code: 'request_not_started' });
  return {
    id: requestId, object: 'request', status: running ? 'running' : 'failed', endpoint: null, model: null, model_used: null,
    fallback_depth: null, fallback_hops: null, deployment: null, credits_used: running ? null : 0, created: Math.floor(alias.createdAt.getTime() / 1000), result: null,
    error: error && { message: error.message, type: error.type, param: error.param, code: error.code },
  };
}

function statusOf(state: string | undefined, usage: StoredUsage | null): 'running' | 'succeeded' | 'failed' | 'cancelled' {
  if (state === 'RUNNING') return 'running';
  if (state === 'COMPLETED' || state === undefined) return usage?.status ?? 'succeeded';
  if (state === 'CANCELLED') return 'cancelled';
  return 'failed';
}

/** How long a run whose request the books already record may take to close. */
const CLOSING_WAIT_MS = 5_000;

/**
 * A request is recorded in the books once it ended, and its run closes a moment later (a served answer goes
 * to the client as soon as it is settled, before the run's last step): a run still open then is waited for
 * briefly, so a client asking right after its answer reads the outcome, not `running`.
 */
async function closedOnceRecorded(run: FoundRun | null, usage: StoredUsage | null): Promise<FoundRun | null> {
  if (!run || !usage || run.description.status.name !== 'RUNNING') return run;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    run.handle.result().catch(() => undefined),
    new Promise((resolve) => { timer = setTimeout(resolve, CLOSING_WAIT_MS); }),
  ]);
  clearTimeout(timer);
  return { handle: run.handle, description: await run.handle.describe() };
}

const ours = (description: WorkflowExecutionDescription, workspaceId: string) => description.typedSearchAttributes.get(WorkspaceIdKey) === workspaceId;

/** The run `workflowId`, if it exists and is the workspace's. */
async function runById(deps: AppDeps, workspaceId: string, workflowId: string): Promise<FoundRun | null> {
  try {
    const handle = deps.temporal.client.workflow.getHandle(workflowId);
    const description = await handle.describe();
    return ours(description, workspaceId) ? { handle, description } : null;
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    return null;
  }
}

/** The request's workflow, if it is the workspace's: `req-<id>`, else (an Idempotency-Key's run) found by its request id. */
async function findRun(deps: AppDeps, workspaceId: string, requestId: string): Promise<FoundRun | null> {
  const client = deps.temporal.client;
  const direct = await runById(deps, workspaceId, requestWorkflowId(requestId));
  if (direct) return direct;
  const query = `${RequestIdKey.name} = "${requestId}" AND ${WorkspaceIdKey.name} = "${workspaceId}"`;
  for await (const listed of client.workflow.list({ query, pageSize: 1 })) {
    const handle = client.workflow.getHandle(listed.workflowId, listed.runId);
    const description = await handle.describe();
    if (ours(description, workspaceId)) return { handle, description };
  }
  return null;
}

/** What a finished run answered: the response body (JSON, or where to fetch stored bytes) and its hops. */
async function readResult(deps: AppDeps, handle: WorkflowHandle): Promise<{ response: unknown; hops: HopRecord[] | null }> {
  const result = (await handle.result()) as Partial<ModelRequestResult>;
  if (!result?.response) return { response: null, hops: result?.hops ?? null };
  const response = await loadPayload(deps.storage, result.response);
  if (response.kind === 'json') return { response: response.body, hops: result.hops ?? null };
  const url = await deps.storage.signedUrl(response.storageKey, RESULT_URL_SECONDS, { contentType: response.contentType });
  return { response: { content_type: response.contentType, bytes: response.bytes, url }, hops: result.hops ?? null };
}

async function readFailure(handle: WorkflowHandle): Promise<GatewayError | null> {
  try {
    await handle.result();
    return null;
  } catch (err) {
    if (err instanceof WorkflowFailedError) return failureOfRun(err);
    throw err;
  }
}
