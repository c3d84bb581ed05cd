import { expect } from 'chai';
import { WorkflowFailedError } from '@temporalio/client';
import { toGatewayError } from '../../activities/failures';
import { InsufficientCreditsError, InvalidRequestError, NotFoundError, UpstreamError } from '../../core/errors';
import type { modelRequestWorkflow, ModelRequestInput, ModelRequestResult } from '../../workflows/model-request';
import {
  failureChain, held, HOP_SETTLE_PATIENCE_MS, rejectionOf, refused, served, startWorkflowHarness, upstream, type Scenario, type WorkflowHarness,
} from '../support/workflow-harness';

describe('modelRequestWorkflow (real workflow, scripted activities)', function () {
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

  const run = (scenario: Scenario, extra: Partial<ModelRequestInput> = {}): Promise<ModelRequestResult> =>
    harness.client.workflow.execute<typeof modelRequestWorkflow>('modelRequestWorkflow', {
      taskQueue: harness.taskQueue, workflowId: scenario.id, args: [scenario.input(extra)],
    });

  for (const activityMode of ['local', 'remote'] as const) {
    it(`falls back to the next model when the first is throttled, giving its hold back (${activityMode} activities)`, async () => {
      const scenario = harness.scenario(['model-a', 'model-b'], {
        call: (input) => {
          if (input.model === 'model-a') throw upstream('rate_limited', { model: 'model-a', upstreamStatus: 429, retryAfterMs: 30_000 });
          return served(input.model, 4_321);
        },
      });
      const result = await run(scenario, { activityMode });

      expect(scenario.steps()).to.deep.equal(['hold(0)', 'call(0)', 'release(0)', 'hold(1)', 'call(1)', 'settle(1)']);
      expect(result).to.deep.include({ modelUsed: 'model-b', fallbackFrom: 'model-a', fallbackDepth: 1, creditsUsedMicro: 4_321 });
      expect(result.response).to.deep.equal(served('model-b').response);
      expect(result.hops).to.deep.equal([
        { model: 'model-a', outcome: 'failed', reason: 'model-a: rate_limited' },
        { model: 'model-b', outcome: 'served' },
      ]);
      const [settle] = scenario.callsOf('settle');
      expect(settle.input.reservationId).to.equal(`${scenario.id}:1`);
      expect(settle.input.chargeMicro).to.equal(4_321);
      expect(settle.input.usage).to.deep.include({
        requestId: scenario.id, workspaceId: 'ws_test', apiKeyId: 'key_test', endpoint: 'chat.completions',
        modelRequested: 'model-a', modelUsed: 'model-b', fallbackDepth: 1, status: 'succeeded', inputTokens: 11, outputTokens: 7,
      });
      // Each hop holds under its own reservation; the released one is the first hop's.
      expect(scenario.callsOf('hold').map((c) => [c.input.model, c.input.reservationId])).to.deep.equal([
        ['model-a', `${scenario.id}:0`], ['model-b', `${scenario.id}:1`],
      ]);
      expect(scenario.callsOf('release')[0].input.reservationId).to.equal(`${scenario.id}:0`);
      expect(scenario.delivered).to.deep.equal([result]);
      expect(scenario.failed).to.deep.equal([]);
      // The hop that served handed the same answer over in-process before the run ended (its hops aside).
      const { hops: _hops, ...answer } = result;
      expect(scenario.answered).to.deep.equal([answer]);
    });
  }

  it('never falls back on a caller error: gives the hold back, records the failure and fails with that error', async () => {
    const scenario = harness.scenario(['model-a', 'model-b'], {
      call: () => { throw new InvalidRequestError("'temperature' must be at most 2.", { param: 'temperature', code: 'invalid_value' }); },
    });
    const err = await rejectionOf(run(scenario));

    expect(scenario.steps()).to.deep.equal(['hold(0)', 'call(0)', 'release(0)', 'fail']);
    expect(scenario.callsOf('call')).to.have.length(1); // caller errors are not retried either
    expect(err).to.be.instanceOf(WorkflowFailedError);
    expect(failureChain(err)).to.include('ApplicationFailure:InvalidRequestError');
    const gatewayError = toGatewayError(err);
    expect(gatewayError).to.be.instanceOf(InvalidRequestError);
    expect(gatewayError.toJSON()).to.deep.include({ status: 400, message: "'temperature' must be at most 2.", param: 'temperature', code: 'invalid_value' });
    const [fail] = scenario.callsOf('fail');
    expect(fail.input.reservationId).to.equal(null);
    expect(fail.input.usage).to.deep.include({ modelRequested: 'model-a', modelUsed: null, status: 'failed', fallbackDepth: 0, errorCode: 'invalid_value' });
    expect(scenario.failed).to.have.length(1);
    expect(scenario.failed[0]).to.deep.include({ name: 'InvalidRequestError', status: 400 });
    expect(scenario.delivered).to.deep.equal([]);
    expect(scenario.answered).to.deep.equal([]);
  });

  it("does not fall back on a provider's rejection of the request (upstream caller_error)", async () => {
    const scenario = harness.scenario(['model-a', 'model-b'], {
      call: () => { throw upstream('caller_error', { model: 'model-a', upstreamStatus: 422 }); },
    });
    const err = await rejectionOf(run(scenario));

    expect(scenario.steps()).to.deep.equal(['hold(0)', 'call(0)', 'release(0)', 'fail']);
    const gatewayError = toGatewayError(err);
    expect(gatewayError).to.be.instanceOf(UpstreamError);
    expect(gatewayError.status).to.equal(422);
  });

  it('fails with the last model\'s error when every model answers 5xx, every hold given back and one failure recorded', async () => {
    const scenario = harness.scenario(['model-a', 'model-b'], {
      call: (input) => { throw upstream('server_error', { model: input.model, upstreamStatus: input.model === 'model-a' ? 500 : 503 }); },
    });
    const err = await rejectionOf(run(scenario));

    // Each model gets its three attempts (retryable 5xx; each attempt of the hop finds its hold again), then its hold is given back.
    expect(scenario.steps()).to.deep.equal([
      'hold(0)', 'call(0)', 'hold(0)', 'call(0)', 'hold(0)', 'call(0)', 'release(0)',
      'hold(1)', 'call(1)', 'hold(1)', 'call(1)', 'hold(1)', 'call(1)', 'release(1)',
      'fail',
    ]);
    expect(scenario.callsOf('hold').map((c) => c.input.reservationId)).to.deep.equal([0, 0, 0, 1, 1, 1].map((d) => `${scenario.id}:${d}`));
    expect(scenario.callsOf('call').map((c) => c.attempt)).to.deep.equal([1, 2, 3, 1, 2, 3]);
    expect(scenario.callsOf('release').map((c) => c.input.reservationId)).to.deep.equal([`${scenario.id}:0`, `${scenario.id}:1`]);
    expect(failureChain(err)).to.include('ApplicationFailure:UpstreamError');
    const gatewayError = toGatewayError(err);
    expect(gatewayError).to.be.instanceOf(UpstreamError);
    expect(gatewayError.message).to.equal('model-b: server_error');
    expect(gatewayError.status).to.equal(503);
    const [fail] = scenario.callsOf('fail');
    expect(fail.input).to.deep.include({ reservationId: null, reason: 'model-b: server_error' });
    expect(fail.input.usage).to.deep.include({ modelUsed: null, status: 'failed', fallbackDepth: 1, errorCode: 'upstream_error', inputTokens: 0, outputTokens: 0 });
    expect(scenario.failed).to.have.length(1);
    expect(scenario.failed[0]).to.deep.include({ name: 'UpstreamError', message: 'model-b: server_error', status: 503 });
  });

  it('retries the same model after the upstream\'s Retry-After, without falling back', async () => {
    const scenario = harness.scenario(['model-a', 'model-b'], {
      call: (input, { attempt }) => {
        if (attempt <= 2) throw upstream('rate_limited', { model: input.model, upstreamStatus: 429, retryAfterMs: 300 });
        return served(input.model);
      },
    });
    const result = await run(scenario);

    expect(scenario.steps()).to.deep.equal(['hold(0)', 'call(0)', 'hold(0)', 'call(0)', 'hold(0)', 'call(0)', 'settle(0)']);
    expect(result).to.deep.include({ modelUsed: 'model-a', fallbackFrom: null, fallbackDepth: 0 });
    const [first, second, third] = scenario.callsOf('call');
    expect([first.attempt, second.attempt, third.attempt]).to.deep.equal([1, 2, 3]);
    // Each retry waits at least the Retry-After (300 ms), and not much more (no 10 s ceiling or fallback wait).
    for (const [earlier, later] of [[first, second], [second, third]]) {
      expect(later.at - earlier.at).to.be.within(295, 2_000);
    }
  });

  it('falls back at once on a 429 whose Retry-After is longer than 10 s', async () => {
    const scenario = harness.scenario(['model-a', 'model-b'], {
      call: (input) => {
        if (input.model === 'model-a') throw upstream('rate_limited', { model: 'model-a', upstreamStatus: 429, retryAfterMs: 11_000 });
        return served(input.model);
      },
    });
    const started = Date.now();
    const result = await run(scenario);

    expect(result).to.deep.include({ modelUsed: 'model-b', fallbackFrom: 'model-a', fallbackDepth: 1 });
    const calls = scenario.callsOf('call');
    expect(calls.map((c) => [c.depth, c.attempt])).to.deep.equal([[0, 1], [1, 1]]);
    expect(calls[1].at - calls[0].at).to.be.below(1_000);
    expect(Date.now() - started).to.be.below(5_000);
  });

  it('holds before calling and settles after, in one hop activity, never releasing a served request\'s hold', async () => {
    const scenario = harness.scenario(['model-a', 'model-b'], {});
    const result = await run(scenario);

    expect(scenario.steps()).to.deep.equal(['hold(0)', 'call(0)', 'settle(0)']);
    expect(scenario.calls.map((c) => c.activity)).to.deep.equal(['serveHop', 'serveHop', 'serveHop']);
    expect(result).to.deep.equal({
      response: served('model-a').response, modelUsed: 'model-a', fallbackFrom: null, fallbackDepth: 0, creditsUsedMicro: 1_234,
      hops: [{ model: 'model-a', outcome: 'served' }],
    });
    const [hold] = scenario.callsOf('hold');
    expect(hold.input).to.deep.include({
      endpoint: 'chat.completions', model: 'model-a', allowedModels: null, reservationId: `${scenario.id}:0`,
      workspaceId: 'ws_test', apiKeyId: 'key_test', requestId: scenario.id,
    });
    const [settle] = scenario.callsOf('settle');
    expect(settle.input.chargeMicro).to.equal(1_234);
    expect(settle.input.usage).to.deep.include({ modelUsed: 'model-a', fallbackDepth: 0, status: 'succeeded' });
    expect(scenario.callsOf('release')).to.deep.equal([]);
  });

  it('skips a fallback whose hold is refused (model unfit) without calling it, and serves the next', async () => {
    const scenario = harness.scenario(['model-a', 'model-b', 'model-c'], {
      hold: (input) => {
        if (input.model !== 'model-b') return held(input.requestId);
        return refused(new NotFoundError("The model 'model-b' does not exist.", { code: 'model_not_found', param: 'model' }));
      },
      call: (input) => {
        if (input.model === 'model-a') throw upstream('server_error', { model: 'model-a', upstreamStatus: 502 });
        return served(input.model);
      },
    });
    const result = await run(scenario);

    expect(scenario.steps()).to.deep.equal([
      'hold(0)', 'call(0)', 'hold(0)', 'call(0)', 'hold(0)', 'call(0)', 'release(0)',
      'hold(1)',
      'hold(2)', 'call(2)', 'settle(2)',
    ]);
    expect(result).to.deep.include({ modelUsed: 'model-c', fallbackFrom: 'model-a', fallbackDepth: 2 });
    expect(result.hops).to.deep.equal([
      { model: 'model-a', outcome: 'failed', reason: 'model-a: server_error' },
      { model: 'model-b', outcome: 'skipped', reason: "The model 'model-b' does not exist." },
      { model: 'model-c', outcome: 'served' },
    ]);
  });

  it("fails with the requested model's refusal when its own hold is refused, calling nothing", async () => {
    const scenario = harness.scenario(['model-a', 'model-b'], {
      hold: (input) => refused(new InvalidRequestError(`Model '${input.model}' is a image model and cannot serve chat.completions.`, { code: 'model_modality_mismatch', param: 'model' })),
    });
    const err = await rejectionOf(run(scenario));

    expect(scenario.steps()).to.deep.equal(['hold(0)']);
    expect(failureChain(err)).to.include('ApplicationFailure:InvalidRequestError');
    const gatewayError = toGatewayError(err);
    expect(gatewayError).to.be.instanceOf(InvalidRequestError);
    expect(gatewayError.code).to.equal('model_modality_mismatch');
    expect(scenario.failed[0]).to.deep.include({ name: 'InvalidRequestError', code: 'model_modality_mismatch' });
  });

  it("ends the chain with the previous model's error when a fallback's hold is refused for lack of credits", async () => {
    const scenario = harness.scenario(['model-a', 'model-b', 'model-c'], {
      hold: (input) => (input.model === 'model-b' ? refused(new InsufficientCreditsError(), true) : held(input.requestId)),
      call: () => { throw upstream('rate_limited', { model: 'model-a', upstreamStatus: 429, retryAfterMs: 60_000 }); },
    });
    const err = await rejectionOf(run(scenario));

    expect(scenario.steps()).to.deep.equal(['hold(0)', 'call(0)', 'release(0)', 'hold(1)', 'fail']);
    const gatewayError = toGatewayError(err);
    expect(gatewayError).to.be.instanceOf(UpstreamError);
    expect(gatewayError.status).to.equal(429);
    expect(gatewayError.headers).to.deep.equal({ 'retry-after': '60' });
    expect(scenario.callsOf('fail')[0].input.usage).to.deep.include({ fallbackDepth: 1, errorCode: 'upstream_rate_limited' });
  });
  it("fails with the requested model's 402 when the balance refuses its hold, calling nothing", async () => {
    const scenario = harness.scenario(['model-a', 'model-b'], { hold: () => refused(new InsufficientCreditsError(), true) });
    const err = await rejectionOf(run(scenario));

    expect(scenario.steps()).to.deep.equal(['hold(0)']);
    const gatewayError = toGatewayError(err);
    expect(gatewayError).to.be.instanceOf(InsufficientCreditsError);
    expect(gatewayError.status).to.equal(402);
    expect(scenario.failed[0]).to.deep.include({ name: 'InsufficientCreditsError', status: 402 });
  });

  describe('a hop run again (activity retry, or a workflow task replayed after its worker died)', () => {
    it('never calls the model on a hold that was given back: the hop is over and the walk goes on', async () => {
      const scenario = harness.scenario(['model-a', 'model-b'], {
        hold: (input) => (input.model === 'model-a' ? { ...held(input.requestId), status: 'released', chargedMicro: 0 } : held(input.requestId)),
      });
      const result = await run(scenario);

      expect(scenario.steps()).to.deep.equal(['hold(0)', 'hold(1)', 'call(1)', 'settle(1)']);
      expect(result).to.deep.include({ modelUsed: 'model-b', fallbackDepth: 1 });
      expect(result.hops[0]).to.deep.equal({ model: 'model-a', outcome: 'failed', reason: 'its hold had already been given back' });
      expect(scenario.callsOf('release')).to.deep.equal([]);
    });

    it('serves again a hold this request already settled, charging nothing more (settlement answers the recorded charge)', async () => {
      const scenario = harness.scenario(['model-a'], {
        hold: (input) => ({ ...held(input.requestId), status: 'settled', chargedMicro: 777 }),
        settle: () => ({ chargedMicro: 777 }),
      });
      const result = await run(scenario);

      expect(scenario.steps()).to.deep.equal(['hold(0)', 'call(0)', 'settle(0)']);
      expect(result).to.deep.include({ modelUsed: 'model-a', creditsUsedMicro: 777 });
    });

    it("never calls the model on a hold settled by another request's run", async () => {
      const scenario = harness.scenario(['model-a'], { hold: () => ({ ...held('someone-else'), status: 'settled', chargedMicro: 777 }) });
      const err = await rejectionOf(run(scenario));

      expect(scenario.steps()).to.deep.equal(['hold(0)', 'fail']);
      expect(toGatewayError(err).toJSON()).to.deep.include({ status: 400, code: 'no_model_available' });
    });
  });

  it('hands settlement to the workflow when the hop cannot record it in time (a database outage): charged once', async () => {
    let outageUntil = 0;
    const scenario = harness.scenario(['model-a'], {
      settle: (input, { activity }) => {
        if (activity === 'serveHop') {
          outageUntil ||= Date.now() + HOP_SETTLE_PATIENCE_MS + 500;
          throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
        }
        if (Date.now() < outageUntil) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
        return { chargedMicro: input.chargeMicro };
      },
    });
    const result = await run(scenario);

    const settles = scenario.callsOf('settle');
    const inHop = settles.filter((c) => c.activity === 'serveHop');
    const byWorkflow = settles.filter((c) => c.activity === 'settleRequest');
    expect(inHop.length).to.be.at.least(2);
    expect(byWorkflow.length).to.be.at.least(2); // the ledger's options retry until the outage ends
    expect(byWorkflow.at(-1)!.input).to.deep.include({ reservationId: `${scenario.id}:0`, chargeMicro: 1_234 });
    expect(byWorkflow.at(-1)!.input.usage).to.deep.include({ modelUsed: 'model-a', status: 'succeeded', inputTokens: 11, outputTokens: 7 });
    expect(scenario.callsOf('call')).to.have.length(1);
    expect(scenario.callsOf('release')).to.deep.equal([]);
    expect(result).to.deep.include({ modelUsed: 'model-a', creditsUsedMicro: 1_234 });
    // Unsettled in the hop, the answer is the run's to give (after its own settlement), not the hop's.
    expect(scenario.answered).to.deep.equal([]);
    expect(scenario.delivered).to.deep.equal([result]);
  });
});
