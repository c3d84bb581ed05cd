/**
 * Runs a synchronous model request through its workflow: the requested model is checked here first (so a
 * bad request never starts a workflow), the workspace's fallback chain is resolved, and the result comes
 * back with the gateway's headers (x-credits-used, x-model-used, x-fallback-from, x-fallback-depth).
 */
import { WorkflowExecutionAlreadyStartedError, type WorkflowHandle } from '@temporalio/client';
import { handlerFor } from '../../endpoints';
import type { Endpoint } from '../../endpoints/types';
import { loadPayload } from '../../activities/request-io';
import type { ModelRecord } from '../../catalog/types';
import { microToCredits } from '../../core/money';
import { checkUsable, eligibleModel } from '../../domain/model-eligibility';
import { modelAccessOf } from '../http/model-access';
import type { modelRequestWorkflow, ModelRequestInput } from '../../workflows/model-request';
import type { AppDeps, GatewayContext } from '../http/context';
import { canonicalJson, claimIdempotencyKey, readIdempotencyKey, sha256 } from '../../domain/idempotency';
import { recordRequestAlias } from '../../domain/request-aliases';
import { abandonUnlessStarted, requestInput, startRequestWorkflow } from './start';
import { answerOfHop, type RequestAnswer } from '../../activities/requests';
import type { FirstHopStarter } from '../../activities';
import { hopTicket, plainHopInput } from '../../workflows/hop-inputs';
import { readJsonBody } from '../http/body';
import { awaitOutcome, closeStoppedRun, expectOutcome, type InProcessOutcome } from './outcome';
import { RequestPhases } from '../http/server-timing';
import { IDEMPOTENT_REQUEST_PREFIX, requestWorkflowId } from '../../workflows/contracts';

/**
 * Checks the requested model against the request, the key and the credentials that could serve it (every hop
 * checks again); returns its record.
 */
export async function checkRequestedModel(ctx: GatewayContext, deps: AppDeps, endpoint: Endpoint, model: string, body: unknown): Promise<ModelRecord> {
  const handler = handlerFor(endpoint);
  const record = await eligibleModel(deps.catalog, { model, modality: handler.modality, allowedModels: ctx.state.auth.allowedModels });
  handler.check(record, body);
  // A request the model could never take is refused as such first, whoever's key would serve it.
  await checkUsable(record, modelAccessOf(deps, ctx.state.auth), model);
  return record;
}

/**
 * `idempotencyBody`: what an Idempotency-Key's body hash covers when it is not the body itself (bodies
 * holding upload keys, which differ on every request, hash their files' content instead).
 */
export async function runModelRequest(ctx: GatewayContext, deps: AppDeps, opts: { endpoint: Endpoint; model: string; body: unknown; idempotencyBody?: unknown }): Promise<RequestAnswer> {
  const { auth, requestId } = ctx.state;
  const input = await requestInput(ctx, deps, opts);
  let workflowId = requestWorkflowId(requestId);
  const idempotencyKey = readIdempotencyKey(ctx.get('idempotency-key'));
  let replay = false;
  if (idempotencyKey) {
    const claim = await claimIdempotencyKey(deps.db, {
      workspaceId: auth.workspaceId, scope: opts.endpoint, key: idempotencyKey, bodyHash: sha256(canonicalJson(opts.idempotencyBody ?? opts.body)), prefix: IDEMPOTENT_REQUEST_PREFIX,
    });
    workflowId = claim.resourceId;
    replay = !claim.first;
    // A replay answers with its own x-request-id: it names the run it joins.
    if (replay) await recordRequestAlias(deps.db, { workspaceId: auth.workspaceId, alias: requestId, workflowId });
  }

  const expectation = replay ? null : expectOutcome(deps.results, workflowId);
  // The first hop holds and calls while the run starts (a run joined by its Idempotency-Key may have done so already).
  // Not while the worker lags (first hops wait for their activities): the request then waits for its run, which
  // slows its client down instead of piling runs up behind answers already given.
  const firstHop = idempotencyKey || !deps.firstHop || deps.firstHop.waiting() >= FIRST_HOP_MAX_WAITING ? null : beginPlainHop(deps.firstHop, workflowId, input);
  const phases = new RequestPhases(ctx);
  phases.end('admission');
  let handle: WorkflowHandle<typeof modelRequestWorkflow> & { eagerlyStarted?: boolean };
  try {
    handle = await startRequestWorkflow<typeof modelRequestWorkflow>(ctx, deps, 'modelRequestWorkflow', {
      workflowId, args: [input], model: opts.model, endpoint: opts.endpoint,
      // A retry with the same Idempotency-Key joins the run that is (or was) serving it.
      ...(idempotencyKey ? { workflowIdConflictPolicy: 'USE_EXISTING' as const, workflowIdReusePolicy: 'REJECT_DUPLICATE' as const } : {}),
    });
  } catch (err) {
    expectation?.cancel();
    if (firstHop) abandonUnlessStarted(firstHop.hop, err);
    if (!(idempotencyKey && err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    handle = deps.temporal.client.workflow.getHandle<typeof modelRequestWorkflow>(workflowId);
    if (!replay) await recordRequestAlias(deps.db, { workspaceId: auth.workspaceId, alias: requestId, workflowId });
    replay = true;
  }
  phases.end('start');
  // Started eagerly, the run is this process's: the first hop goes on past its gate, and its answer is the run's.
  const confirmed = firstHop && handle.eagerlyStarted ? firstHop.confirmed(expectation) : null;
  const inProcess = confirmed ?? expectation;
  let result: RequestAnswer;
  try {
    result = await awaitOutcome<typeof modelRequestWorkflow, RequestAnswer>(handle, inProcess, { requestId, joined: replay, patienceMs: deps.config.outcomeWaitSeconds * 1000 });
  } catch (err) {
    // The run ended without the first hop (stopped by an operator, timed out), or is out of sight: the hop must not settle now.
    firstHop?.hop.stop('its run ended without it');
    throw await closeStoppedRun(deps.db, workflowId, err);
  }
  phases.end('run');
  // The answer may go out before the run's last step: the request keeps its admission place until the run
  // ended, so a process answering faster than its worker finishes runs cannot pile them up (api/http/admission.ts).
  if (confirmed) ctx.state.inFlightUntil?.(confirmed.runEnded);
  applyResultHeaders(ctx, result);
  if (replay) ctx.set('x-idempotent-replayed', 'true');
  return result;
}

/**
 * A plain request's first hop, begun beside its run's start (activities/first-hop.ts) exactly as the run
 * would build it (workflows/hop-inputs.ts). Its answer, once the run was started eagerly here, is the run's:
 * the hop's activity claims the same outcome.
 */
function beginPlainHop(starter: FirstHopStarter, workflowId: string, input: ModelRequestInput) {
  const hopInput = plainHopInput(input, 0, hopTicket(input, 0, Date.now(), workflowId));
  const hop = starter.plain(hopInput);
  return {
    hop,
    /**
     * Confirms the run here. The outcome in this process is then the hop's answer when it served and settled;
     * else (it failed, was refused, or could not settle) the run's own, handed over by `run` when it ends.
     */
    confirmed(run: InProcessOutcome<unknown> | null): InProcessOutcome<unknown> & { runEnded: Promise<void> } {
      hop.confirm();
      let answeredHere = false;
      const answered = hop.outcome.then((outcome) => answerOfHop(hopInput, outcome), () => null);
      return {
        promise: answered.then((answer) => {
          answeredHere = answer !== null;
          return answer ?? run?.promise ?? new Promise<never>(() => undefined);
        }),
        // Answered here, the run's own hand-over is still awaited (runEnded).
        cancel: () => { if (!answeredHere) run?.cancel(); },
        // Not answered here, the answer was the run's own: it has ended.
        runEnded: answered.then((answer) => (answer ? runEnd(run) : undefined)),
      };
    },
  };
}

/** First hops waiting for their activities past which a request's hop waits for its run instead. */
const FIRST_HOP_MAX_WAITING = 32;

/** How long a request's admission place waits for its run to end after the answer went out. */
const RUN_END_WAIT_MS = 60_000;

/** When the run handed its own result over in this process (or a while passed); it stops waiting then. */
function runEnd(run: InProcessOutcome<unknown> | null): Promise<void> {
  if (!run) return Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => { timer = setTimeout(resolve, RUN_END_WAIT_MS); timer.unref(); });
  return Promise.race([run.promise.then(() => undefined, () => undefined), waited]).finally(() => {
    clearTimeout(timer);
    run.cancel();
  });
}

export function applyResultHeaders(ctx: GatewayContext, result: Omit<RequestAnswer, 'response'>): void {
  ctx.set('x-credits-used', String(microToCredits(result.creditsUsedMicro)));
  ctx.set('x-model-used', result.modelUsed);
  if (result.fallbackFrom) {
    ctx.set('x-fallback-from', result.fallbackFrom);
    ctx.set('x-fallback-depth', String(result.fallbackDepth));
  }
}

/** A JSON model endpoint end to end: read and validate the body, check the model, run the request, answer. */
export async function serveJsonModelRequest(ctx: GatewayContext, deps: AppDeps, endpoint: Endpoint, validate: (raw: unknown) => { model: string }): Promise<void> {
  const body = validate(await readJsonBody(ctx, deps.config.maxJsonBodyBytes));
  await checkRequestedModel(ctx, deps, endpoint, body.model, body);
  const result = await runModelRequest(ctx, deps, { endpoint, model: body.model, body });
  await sendModelResponse(ctx, deps, result);
}

/** Writes the result's response (JSON, or stored bytes streamed from object storage). */
export async function sendModelResponse(ctx: GatewayContext, deps: AppDeps, result: Pick<RequestAnswer, 'response'>): Promise<void> {
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
