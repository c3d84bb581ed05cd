/**
 * The request workflows on a real Temporal dev server (@temporalio/testing, the CLI binary in .cache/bin,
 * bound to 127.0.0.1, in memory) and real Workers, with the activities replaced by scripted fakes that
 * record every call. The workflow logic is the real bundle; the activities are the boundary under test.
 * No Postgres or MinIO.
 *
 * One environment and two workers per test file: the workflow's task queue (workflows, ledger and model
 * activities, and the stream activity, as the gateway's worker registers them) and a stream task queue
 * (the stream activity only, as an API process's stream worker). Each test runs its own scenario; the
 * fakes find it by the workflow id of the run that called them.
 */
import path from 'node:path';
import { activityInfo, ApplicationFailure, heartbeat } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { TemporalFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Runtime, Worker, type InjectedSinks } from '@temporalio/worker';
import { handOverAnswer, type CallInput, type CallResult, type ServeHopInput, type ServeHopResult } from '../../activities/requests';
import { toActivityFailure } from '../../activities/failures';
import { denialOf, serveHop, type HoldAnswer, type HoldInput, type HopDenied } from '../../activities/hop';
import type { StreamChatInput, StreamChatOutcome, StreamProgress } from '../../activities/stream-chat';
import { GatewayError, UpstreamError, type UpstreamFailureKind } from '../../core/errors';
import type { SettledHop, UsageRecord } from '../../domain/request-accounting';
import { workflowBundle } from '../../worker/workflow-bundle';
import type { ModelRequestInput } from '../../workflows/request-steps';
import type { ResultSinks } from '../../workflows/result-sinks';
import { ResultBroker } from '../../activities/result-broker';

const TEMPORAL_CLI = path.resolve(__dirname, '..', '..', '..', '.cache', 'bin', 'temporal');

export type Step = 'hold' | 'call' | 'release' | 'settle' | 'fail' | 'price' | 'stream';

export interface RecordedCall {
  step: Step;
  /** The activity that took the step (a hop's steps are all `serveHop` or `streamChat`). */
  activity: string;
  /** The hop (index in the chain) the call was for; null for failRequest. */
  depth: number | null;
  attempt: number;
  taskQueue: string;
  /** Date.now() when the attempt started. */
  at: number;
  input: any;
}

interface AttemptContext {
  attempt: number;
  taskQueue: string;
  /** The hop this call is for (index of its model in the chain). */
  depth: number;
}

/**
 * What a test scripts; every step not given answers like a healthy gateway. A hop's activity (serveHop,
 * streamChat) runs the real hop rules (activities/hop.ts) over these steps.
 */
export interface Script {
  hold?(input: HoldInput, ctx: AttemptContext): Promise<HoldAnswer> | HoldAnswer;
  call?(input: CallInput, ctx: AttemptContext): Promise<CallResult> | CallResult;
  /** Settlement, in the hop's activity (`activity` serveHop) or by the workflow (settleRequest). */
  settle?(input: { reservationId: string; chargeMicro: number; usage: UsageRecord }, ctx: AttemptContext & { activity: string }): Promise<{ chargedMicro: number }> | { chargedMicro: number };
  /** Whether the stream activity runs in the process holding the connection (default: yes). */
  here?(ctx: AttemptContext): boolean;
  stream?(input: StreamChatInput, ctx: AttemptContext & { heartbeat(progress: StreamProgress): void }): Promise<StreamChatOutcome> | StreamChatOutcome;
  price?(input: { model: string; inputTokens: number; outputTokens: number }): number;
}

export const HOLD_ESTIMATE_MICRO = 5_000;

/** A hold as the ledger answers a first request for it. */
export function held(requestId: string | null = null): HoldAnswer {
  return { ok: true, estimateMicro: HOLD_ESTIMATE_MICRO, status: 'held', requestId, chargedMicro: null };
}

/** A hold refused with `err` (the balance or the key's cap end the chain; an unfit model only skips). */
export function refused(err: GatewayError, endsChain = false): HoldAnswer {
  return { ok: false, reason: err.message, error: err.toJSON(), endsChain };
}

/** How long a scripted hop keeps retrying its settlement before handing it to the workflow. */
export const HOP_SETTLE_PATIENCE_MS = 300;

export function served(model: string, chargeMicro = 1_234): CallResult {
  return {
    response: { inline: { kind: 'json', body: { object: 'chat.completion', model, choices: [{ index: 0, message: { role: 'assistant', content: `answer from ${model}` } }] } } },
    chargeMicro,
    usage: { inputTokens: 11, outputTokens: 7 },
  };
}

export function streamed(chargeMicro = 2_345): StreamChatOutcome {
  return { ending: 'completed', inputTokens: 13, outputTokens: 21, chargeMicro, finishReason: 'stop' };
}

export function upstream(kind: UpstreamFailureKind, opts: { model?: string; upstreamStatus?: number; retryAfterMs?: number } = {}): UpstreamError {
  return new UpstreamError(`${opts.model ?? 'upstream'}: ${kind}`, {
    kind, provider: 'fake', upstreamStatus: opts.upstreamStatus ?? null, retryAfterMs: opts.retryAfterMs ?? null,
  });
}

/** The failure an activity throws for a gateway error at this attempt: the activities' one failure policy. */
export function modelCallFailure(err: GatewayError, attempt: number): ApplicationFailure {
  return toActivityFailure(err, attempt) as ApplicationFailure;
}

export class Scenario {
  readonly calls: RecordedCall[] = [];
  readonly delivered: unknown[] = [];
  /** Answers the hop activity handed over in-process (before the run's own result sink). */
  readonly answered: unknown[] = [];
  readonly failed: unknown[] = [];

  constructor(readonly id: string, readonly chain: string[], readonly script: Script) {}

  /** The calls as `step(depth)`, e.g. `hold(0)`, `call(0)`, `release(0)`, `fail`. */
  steps(): string[] {
    return this.calls.map((c) => (c.depth === null ? c.step : `${c.step}(${c.depth})`));
  }

  callsOf(step: Step): RecordedCall[] {
    return this.calls.filter((c) => c.step === step);
  }

  input(extra: Partial<ModelRequestInput> = {}): ModelRequestInput {
    return {
      requestId: this.id, workspaceId: 'ws_test', apiKeyId: 'key_test', endpoint: 'chat.completions', chain: this.chain,
      allowedModels: null, body: { inline: { model: this.chain[0], messages: [{ role: 'user', content: 'hello' }] } },
      created: Math.floor(Date.now() / 1000), clientRequestId: null, ...extra,
    };
  }
}

export interface WorkflowHarness {
  env: TestWorkflowEnvironment;
  client: Client;
  /** The workflows' task queue. */
  taskQueue: string;
  /** A task queue only a stream worker polls (an API process's own queue). */
  streamTaskQueue: string;
  scenario(chain: string[], script?: Script): Scenario;
  stop(): Promise<void>;
}

/** SDK notes about activity failures are the normal path here (retries, fallbacks): keep them out of the output. */
export function installQuietRuntime(): void {
  const quiet = (level: string, message: string) => {
    if (level === 'ERROR' || (level === 'WARN' && !/^(Activity failed|Workflow failed|No workflows registered|No activities registered)/i.test(message))) {
      console.warn(`[temporal ${level}] ${message}`);
    }
  };
  try {
    Runtime.install({
      logger: {
        log: (level, m) => quiet(level, m),
        trace: () => undefined, debug: () => undefined, info: () => undefined,
        warn: (m) => quiet('WARN', m), error: (m) => quiet('ERROR', m),
      },
      telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } },
    });
  } catch {
    // Another test file in this process installed the runtime first (the gateway's own): use it.
  }
}

const randomId = () => Math.random().toString(36).slice(2, 10);

export async function startWorkflowHarness(): Promise<WorkflowHarness> {
  installQuietRuntime();
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: TEMPORAL_CLI },
      ip: '127.0.0.1',
      ui: false,
      log: { format: 'pretty', level: 'error' },
      // As the gateway's dev server runs (stack/temporal.ts): the stream activity may start eagerly on the
      // worker that scheduled it.
      extraArgs: ['--dynamic-config-value', 'system.enableActivityEagerExecution=true'],
    },
  });
  const scenarios = new Map<string, Scenario>();
  const current = (): Scenario => {
    const workflowId = activityInfo().workflowExecution?.workflowId ?? '';
    const scenario = scenarios.get(workflowId);
    if (!scenario) throw ApplicationFailure.nonRetryable(`no scenario for workflow ${workflowId}`);
    return scenario;
  };
  const record = (scenario: Scenario, step: Step, depth: number | null, input: unknown): AttemptContext => {
    const info = activityInfo();
    scenario.calls.push({ step, activity: info.activityType, depth, attempt: info.attempt, taskQueue: info.taskQueue, at: Date.now(), input });
    return { attempt: info.attempt, taskQueue: info.taskQueue, depth: depth ?? -1 };
  };
  const hopOf = (reservationId: string) => Number(reservationId.slice(reservationId.lastIndexOf(':') + 1));
  /** A scripted step may throw a gateway error as it is, shaped the way the real activity would. */
  const shaped = async <T>(attempt: number, fn: () => Promise<T> | T): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof GatewayError) throw modelCallFailure(err, attempt);
      throw err;
    }
  };

  const hold = (scenario: Scenario, input: HoldInput): Promise<HoldAnswer> => {
    const ctx = record(scenario, 'hold', hopOf(input.reservationId), input);
    if (!scenario.script.hold) return Promise.resolve(held(input.requestId));
    return shaped(ctx.attempt, () => scenario.script.hold!(input, ctx));
  };
  const settle = async (scenario: Scenario, input: { reservationId: string; chargeMicro: number; usage: UsageRecord }) => {
    const ctx = record(scenario, 'settle', hopOf(input.reservationId), input);
    if (!scenario.script.settle) return { chargedMicro: input.chargeMicro };
    return scenario.script.settle(input, { ...ctx, activity: activityInfo().activityType });
  };

  const streamChat = async (input: StreamChatInput): Promise<StreamChatOutcome | HopDenied> => {
    const scenario = current();
    const depth = scenario.chain.indexOf(input.model);
    const info = activityInfo();
    if (scenario.script.here && !scenario.script.here({ attempt: info.attempt, taskQueue: info.taskQueue, depth })) {
      record(scenario, 'stream', depth, input);
      return { ending: 'not_here', inputTokens: 0, outputTokens: 0, chargeMicro: 0, finishReason: null };
    }
    const denied = denialOf(await hold(scenario, { ...input.hold, endpoint: input.endpoint ?? 'chat.completions', model: input.model, body: input.body, requestId: input.requestId }), input);
    if (denied) return denied;
    const ctx = record(scenario, 'stream', depth, input);
    if (!scenario.script.stream) return streamed();
    return shaped(ctx.attempt, () => scenario.script.stream!(input, { ...ctx, heartbeat: (progress) => heartbeat(progress) }));
  };

  /** The broker an API in the worker's process would wait on: what the hops hand over lands in their scenario. */
  const answers = new (class extends ResultBroker {
    override deliver(workflowId: string, result: unknown): void {
      scenarios.get(workflowId)?.answered.push(result);
      super.deliver(workflowId, result);
    }
  })();

  const activities = {
    async serveHop(input: ServeHopInput): Promise<ServeHopResult> {
      const scenario = current();
      const outcome = await serveHop(input, {
        hold: () => hold(scenario, { ...input.hold, endpoint: input.endpoint, model: input.model, body: input.body, requestId: input.requestId }),
        call: async () => {
          const ctx = record(scenario, 'call', scenario.chain.indexOf(input.model), input);
          if (!scenario.script.call) return served(input.model);
          return shaped(ctx.attempt, () => scenario.script.call!(input, ctx));
        },
        settle: (called) => settle(scenario, {
          reservationId: input.settlement.reservationId, chargeMicro: called.chargeMicro,
          usage: { ...input.settlement.usage, status: 'succeeded', errorCode: null, inputTokens: called.usage.inputTokens, outputTokens: called.usage.outputTokens, latencyMs: 1 },
        }),
        settlePatienceMs: HOP_SETTLE_PATIENCE_MS,
      });
      handOverAnswer({ results: answers }, input, outcome);
      return outcome;
    },
    async releaseCredits(input: { reservationId: string; reason: string }): Promise<void> {
      record(current(), 'release', hopOf(input.reservationId), input);
    },
    async settleRequest(input: { reservationId: string; chargeMicro: number; usage: UsageRecord }): Promise<{ chargedMicro: number }> {
      return settle(current(), input);
    },
    async failRequest(input: { reservationId: string | null; reason: string; usage: UsageRecord }): Promise<void> {
      record(current(), 'fail', null, input);
    },
    /** What was settled for the reservation so far (not a step of its own: the books are only read). */
    async settledHop(input: { reservationId: string }): Promise<SettledHop | null> {
      const settled = current().calls.filter((c) => c.step === 'settle' && (c.input as { reservationId: string }).reservationId === input.reservationId).at(-1);
      if (!settled) return null;
      const { chargeMicro, usage } = settled.input as { chargeMicro: number; usage: UsageRecord };
      return { chargedMicro: chargeMicro, status: usage.status, inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };
    },
    async priceChatUsage(input: { model: string; inputTokens: number; outputTokens: number }): Promise<number> {
      const scenario = current();
      record(scenario, 'price', scenario.chain.indexOf(input.model), input);
      return scenario.script.price ? scenario.script.price(input) : input.inputTokens * 10 + input.outputTokens * 30;
    },
    streamChat,
  };

  const sinks: InjectedSinks<ResultSinks> = {
    results: {
      deliver: { fn: (info, result) => { scenarios.get(info.workflowId)?.delivered.push(result); }, callDuringReplay: false },
      fail: { fn: (info, error) => { scenarios.get(info.workflowId)?.failed.push(error); }, callDuringReplay: false },
    },
  };

  const suffix = randomId();
  const taskQueue = `wf-test-${suffix}`;
  const streamTaskQueue = `wf-test-stream-${suffix}`;
  const workers = [
    await Worker.create({
      connection: env.nativeConnection, namespace: env.namespace ?? 'default', taskQueue,
      workflowBundle: await workflowBundle(), activities, sinks, shutdownGraceTime: '1 second',
    }),
    await Worker.create({
      connection: env.nativeConnection, namespace: env.namespace ?? 'default', taskQueue: streamTaskQueue,
      activities: { streamChat }, shutdownGraceTime: '1 second',
    }),
  ];
  const running = workers.map((w) => w.run());

  return {
    env,
    client: env.client,
    taskQueue,
    streamTaskQueue,
    scenario(chain, script = {}) {
      const scenario = new Scenario(`req_${randomId()}`, chain, script);
      scenarios.set(scenario.id, scenario);
      return scenario;
    },
    async stop() {
      for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
      await Promise.allSettled(running);
      await env.teardown();
    },
  };
}

/** The failure chain of a workflow error, outermost first: `ActivityFailure`, `ApplicationFailure:UpstreamError`, ... */
export function failureChain(err: unknown): string[] {
  const chain: string[] = [];
  let current: unknown = err;
  for (let i = 0; current && i < 10; i++) {
    const name = (current as Error).constructor?.name ?? typeof current;
    const type = current instanceof ApplicationFailure ? current.type : null;
    chain.push(type ? `${name}:${type}` : name);
    current = current instanceof TemporalFailure || current instanceof Error ? (current as { cause?: unknown }).cause : null;
  }
  return chain;
}

/** Resolves when `fn` has rejected; fails the test if it resolved. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the run to fail, but it succeeded');
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
