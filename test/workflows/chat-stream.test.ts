import { expect } from 'chai';
import { Context } from '@temporalio/activity';
import { toGatewayError } from '../../activities/failures';
import { InsufficientCreditsError, InvalidRequestError, NotFoundError, UpstreamError } from '../../core/errors';
import type { ChatStreamInput, ChatStreamResult, chatStreamWorkflow } from '../../workflows/chat-stream';
import {
  failureChain, held, rejectionOf, refused, startWorkflowHarness, streamed, upstream, type Scenario, type WorkflowHarness,
} from '../support/workflow-harness';

describe('chatStreamWorkflow (real workflow, scripted activities)', function () {
  this.timeout(30_000);
  let harness: WorkflowHarness;

  before(async function () {
    this.timeout(60_000);
    harness = await startWorkflowHarness();
  });
  after(async function () {
    this.timeout(30_000);
    await harness?.stop();
  });

  const run = (scenario: Scenario, extra: Partial<ChatStreamInput> = {}): Promise<ChatStreamResult> =>
    harness.client.workflow.execute<typeof chatStreamWorkflow>('chatStreamWorkflow', {
      taskQueue: harness.taskQueue, workflowId: scenario.id,
      args: [{ ...scenario.input(), streamTaskQueue: harness.streamTaskQueue, localWorker: false, ...extra }],
    });

  it("holds and streams in one activity on the API process's task queue, and settles what the stream reported", async () => {
    const scenario = harness.scenario(['model-a', 'model-b']);
    const result = await run(scenario);

    expect(scenario.steps()).to.deep.equal(['hold(0)', 'stream(0)', 'settle(0)']);
    expect(scenario.calls.slice(0, 2).map((c) => [c.activity, c.taskQueue])).to.deep.equal([['streamChat', harness.streamTaskQueue], ['streamChat', harness.streamTaskQueue]]);
    expect(scenario.callsOf('hold')[0].input).to.deep.include({ model: 'model-a', reservationId: `${scenario.id}:0`, workspaceId: 'ws_test', apiKeyId: 'key_test', requestId: scenario.id });
    expect(scenario.callsOf('stream').map((c) => c.taskQueue)).to.deep.equal([harness.streamTaskQueue]);
    expect(scenario.callsOf('stream')[0].input).to.deep.include({ requestId: scenario.id, model: 'model-a', fallbackFrom: null, fallbackDepth: 0 });
    expect(result).to.deep.equal({
      modelUsed: 'model-a', fallbackFrom: null, fallbackDepth: 0, creditsUsedMicro: 2_345, ending: 'completed',
      hops: [{ model: 'model-a', outcome: 'served' }],
    });
    const [settle] = scenario.callsOf('settle');
    expect(settle.input).to.deep.include({ reservationId: `${scenario.id}:0`, chargeMicro: 2_345 });
    expect(settle.input.usage).to.deep.include({ modelUsed: 'model-a', status: 'succeeded', errorCode: null, inputTokens: 13, outputTokens: 21 });
  });

  it("with a local worker, streams on the workflow's own task queue first", async () => {
    const scenario = harness.scenario(['model-a']);
    const result = await run(scenario, { localWorker: true });

    expect(result.ending).to.equal('completed');
    expect(scenario.callsOf('stream').map((c) => c.taskQueue)).to.deep.equal([harness.taskQueue]);
  });

  it("asks the process's own task queue when the stream ran on a worker that does not hold the connection", async () => {
    const scenario = harness.scenario(['model-a'], { here: ({ taskQueue }) => taskQueue !== harness.taskQueue });
    const result = await run(scenario, { localWorker: true });

    expect(scenario.callsOf('stream').map((c) => c.taskQueue)).to.deep.equal([harness.taskQueue, harness.streamTaskQueue]);
    // Only the process holding the connection holds the credits.
    expect(scenario.steps()).to.deep.equal(['stream(0)', 'hold(0)', 'stream(0)', 'settle(0)']);
    expect(scenario.callsOf('hold')[0].taskQueue).to.equal(harness.streamTaskQueue);
    expect(result).to.deep.include({ ending: 'completed', creditsUsedMicro: 2_345 });
  });

  it('holds and charges nothing, recording a disconnect, when no process knows the request any more', async () => {
    const scenario = harness.scenario(['model-a', 'model-b'], { here: () => false });
    const result = await run(scenario);

    expect(scenario.steps()).to.deep.equal(['stream(0)', 'fail']);
    expect(result).to.deep.include({ modelUsed: 'model-a', ending: 'client_disconnected', creditsUsedMicro: 0 });
    expect(scenario.callsOf('fail')[0].input).to.deep.include({ reservationId: `${scenario.id}:0` });
    expect(scenario.callsOf('fail')[0].input.usage).to.deep.include({ modelUsed: 'model-a', status: 'cancelled', errorCode: 'client_disconnected' });
  });

  it('does not settle again what the stream settled before its end', async () => {
    const scenario = harness.scenario(['model-a'], { stream: () => ({ ...streamed(2_345), settledMicro: 2_345 }) });
    const result = await run(scenario);

    expect(scenario.steps()).to.deep.equal(['hold(0)', 'stream(0)']);
    expect(result).to.deep.include({ ending: 'completed', creditsUsedMicro: 2_345 });
  });

  it("fails with the requested model's refusal when its hold is refused, before anything is streamed", async () => {
    const scenario = harness.scenario(['model-a', 'model-b'], { hold: () => refused(new InsufficientCreditsError(), true) });
    const err = await rejectionOf(run(scenario));

    expect(scenario.steps()).to.deep.equal(['hold(0)']);
    expect(toGatewayError(err)).to.be.instanceOf(InsufficientCreditsError);
  });

  it("skips a fallback whose hold is refused, and streams the next", async () => {
    const scenario = harness.scenario(['model-a', 'model-b', 'model-c'], {
      hold: (input) => (input.model === 'model-b' ? refused(new NotFoundError("The model 'model-b' does not exist.", { code: 'model_not_found' })) : held(input.requestId)),
      stream: (input) => {
        if (input.model === 'model-a') throw upstream('rate_limited', { model: 'model-a', upstreamStatus: 429, retryAfterMs: 60_000 });
        return streamed(55);
      },
    });
    const result = await run(scenario);

    expect(scenario.steps()).to.deep.equal(['hold(0)', 'stream(0)', 'release(0)', 'hold(1)', 'hold(2)', 'stream(2)', 'settle(2)']);
    expect(result).to.deep.include({ modelUsed: 'model-c', fallbackDepth: 2, creditsUsedMicro: 55 });
    expect(result.hops[1]).to.deep.equal({ model: 'model-b', outcome: 'skipped', reason: "The model 'model-b' does not exist." });
  });

  it('settles what was used, without falling back, when the upstream fails after the first byte', async () => {
    const scenario = harness.scenario(['model-a', 'model-b'], {
      stream: () => ({ ending: 'upstream_error', inputTokens: 13, outputTokens: 5, chargeMicro: 321, finishReason: null, error: 'upstream reset' }),
    });
    const result = await run(scenario);

    expect(scenario.steps()).to.deep.equal(['hold(0)', 'stream(0)', 'settle(0)']);
    expect(result).to.deep.include({ modelUsed: 'model-a', fallbackDepth: 0, ending: 'upstream_error', creditsUsedMicro: 321 });
    expect(scenario.callsOf('settle')[0].input.usage).to.deep.include({ status: 'cancelled', errorCode: 'upstream_error', outputTokens: 5 });
  });

  it('falls back to the next model when the stream fails before its first byte', async () => {
    const scenario = harness.scenario(['model-a', 'model-b'], {
      stream: (input) => {
        if (input.model === 'model-a') throw upstream('server_error', { model: 'model-a', upstreamStatus: 503 });
        return streamed(999);
      },
    });
    const result = await run(scenario);

    // The stream activity's own retries (three attempts, each finding its hold again) come first, then the hold is given back.
    expect(scenario.steps()).to.deep.equal(['hold(0)', 'stream(0)', 'hold(0)', 'stream(0)', 'hold(0)', 'stream(0)', 'release(0)', 'hold(1)', 'stream(1)', 'settle(1)']);
    expect(scenario.callsOf('stream')[3].input).to.deep.include({ model: 'model-b', fallbackFrom: 'model-a', fallbackDepth: 1 });
    expect(result).to.deep.equal({
      modelUsed: 'model-b', fallbackFrom: 'model-a', fallbackDepth: 1, creditsUsedMicro: 999, ending: 'completed',
      hops: [{ model: 'model-a', outcome: 'failed', reason: 'model-a: server_error' }, { model: 'model-b', outcome: 'served' }],
    });
    expect(scenario.callsOf('settle')[0].input.usage).to.deep.include({ modelUsed: 'model-b', fallbackDepth: 1, status: 'succeeded' });
  });

  it('fails without falling back on a caller error before the first byte', async () => {
    const scenario = harness.scenario(['model-a', 'model-b'], {
      stream: () => { throw new InvalidRequestError("'tools' is not supported by this model.", { param: 'tools' }); },
    });
    const err = await rejectionOf(run(scenario));

    expect(scenario.steps()).to.deep.equal(['hold(0)', 'stream(0)', 'release(0)', 'fail']);
    expect(failureChain(err)).to.include('ApplicationFailure:InvalidRequestError');
    expect(toGatewayError(err)).to.be.instanceOf(InvalidRequestError);
    expect(scenario.callsOf('fail')[0].input.usage).to.deep.include({ modelUsed: null, status: 'failed' });
  });

  /**
   * The stream's process stops answering: its last attempt heartbeats, then nothing. Only the server's
   * heartbeat timeout (20 s in the workflow's options) ends it, so both cases run side by side once. The
   * first two attempts fail fast before their first byte, so the attempt that goes silent is the last
   * (a heartbeat timeout is retried like any failure while attempts remain).
   */
  describe('when the stream process goes silent (server heartbeat timeout, ~20 s)', function () {
    this.timeout(60_000);
    const hung: Array<() => void> = [];
    let midAnswer: { scenario: Scenario; outcome: Promise<ChatStreamResult> };
    let beforeFirstByte: { scenario: Scenario; outcome: Promise<unknown> };

    const silentAfter = (progress: { inputTokens: number; outputChars: number }) => harness.scenario(['model-a', 'model-b'], {
      stream: async (input, { attempt, heartbeat }) => {
        if (input.model !== 'model-a') return streamed();
        if (attempt < 3) throw upstream('server_error', { model: 'model-a', upstreamStatus: 503 });
        heartbeat(progress);
        await Promise.race([new Promise<void>((resolve) => hung.push(resolve)), Context.current().cancelled]);
        return streamed();
      },
    });

    before(function () {
      const a = silentAfter({ inputTokens: 40, outputChars: 90 });
      midAnswer = { scenario: a, outcome: run(a) };
      const b = silentAfter({ inputTokens: 40, outputChars: 0 });
      beforeFirstByte = { scenario: b, outcome: rejectionOf(run(b)) };
      // Neither outcome may reject unobserved while the other is awaited.
      midAnswer.outcome.catch(() => undefined);
    });
    after(() => {
      for (const release of hung.splice(0)) release();
    });

    it("bills a stream that went silent mid-answer at its last heartbeat's progress", async () => {
      const { scenario, outcome } = midAnswer;
      const result = await outcome;

      expect(scenario.steps()).to.deep.equal(['hold(0)', 'stream(0)', 'hold(0)', 'stream(0)', 'hold(0)', 'stream(0)', 'price(0)', 'settle(0)']);
      // 90 characters are billed as ceil(90 / 4) = 23 output tokens, at the model's price.
      expect(scenario.callsOf('price')[0].input).to.deep.equal({ model: 'model-a', inputTokens: 40, outputTokens: 23 });
      const charge = 40 * 10 + 23 * 30;
      const [settle] = scenario.callsOf('settle');
      expect(settle.input).to.deep.include({ reservationId: `${scenario.id}:0`, chargeMicro: charge });
      expect(settle.input.usage).to.deep.include({ modelUsed: 'model-a', status: 'cancelled', errorCode: 'client_disconnected', inputTokens: 40, outputTokens: 23 });
      expect(result).to.deep.equal({
        modelUsed: 'model-a', fallbackFrom: null, fallbackDepth: 0, creditsUsedMicro: charge, ending: 'client_disconnected',
        hops: [{ model: 'model-a', outcome: 'served' }],
      });
      expect(scenario.callsOf('release')).to.deep.equal([]);
    });

    it('gives the hold back and fails, without falling back, when it went silent before its first byte', async () => {
      const { scenario, outcome } = beforeFirstByte;
      const err = await outcome;

      expect(scenario.steps()).to.deep.equal(['hold(0)', 'stream(0)', 'hold(0)', 'stream(0)', 'hold(0)', 'stream(0)', 'release(0)', 'fail']);
      expect(scenario.callsOf('release')[0].input.reason).to.equal('stream failed before its first byte');
      // A timeout carries no gateway error: the request fails with it (the API answers 500).
      expect(failureChain(err)).to.include('TimeoutFailure');
      expect(toGatewayError(err)).not.to.be.instanceOf(UpstreamError);
      expect(scenario.callsOf('fail')[0].input).to.deep.include({ reservationId: null, reason: 'no model could serve the request' });
    });
  });
});
