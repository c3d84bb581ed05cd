import { expect } from 'chai';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway, type Tenant } from '../../support/gateway';
import { getBalance, ledgerSum } from '../../../domain/ledger';
import { localActivitySteps } from '../../support/history';

describe('POST /v1/chat/completions', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  let tenant: Tenant;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway({ env: { SIMULATED_TIMEOUT_MS: '1500' } });
    tenant = await gateway.newTenant({ credits: 100 });
  });
  after(() => gateway?.stop());

  it('answers through the official client with usage, credits and headers', async () => {
    const { data, response } = await tenant.client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'Hello there' }] }).withResponse();
    expect(data.object).to.equal('chat.completion');
    expect(data.choices[0].message.role).to.equal('assistant');
    expect(data.choices[0].message.content).to.be.a('string').and.not.empty;
    expect(data.usage!.prompt_tokens).to.be.greaterThan(0);
    expect(response.headers.get('x-model-used')).to.equal('sim-chat');
    expect(response.headers.get('x-fallback-from')).to.equal(null);
    expect(response.headers.get('x-storage-used-bytes'), 'storage headers belong to /v1/files only').to.equal(null);
    const credits = Number(response.headers.get('x-credits-used'));
    expect(credits).to.be.greaterThan(0);
    expect((data as unknown as { credits_used: number }).credits_used).to.equal(credits);
    const sums = await ledgerSum(gateway.runtime.db, tenant.workspaceId);
    expect(sums.ledgerMicro).to.equal(sums.bucketsMicro);
    expect((await getBalance(gateway.runtime.db, tenant.workspaceId)).totalMicro).to.equal(100_000_000 - Math.round(credits * 1_000_000));
  });

  it('says in Server-Timing where the time went: admission, the workflow start, the run (streams: the first two)', async () => {
    const phases = (header: string | null) => (header ?? '').split(', ').map((entry) => /^([a-z]+);dur=(\d+\.\d)$/.exec(entry)).map((m) => m && [m[1], Number(m[2])]);
    const { response, data } = await tenant.client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'Time me' }] }).withResponse();
    expect(data.object).to.equal('chat.completion');
    const plain = phases(response.headers.get('server-timing'));
    expect(plain.map((p) => p?.[0])).to.deep.equal(['admission', 'start', 'run']);
    for (const p of plain) expect(p![1]).to.be.at.least(0);

    const { response: streamed, data: stream } = await tenant.client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'Time me' }], stream: true }).withResponse();
    for await (const chunk of stream) void chunk;
    expect(phases(streamed.headers.get('server-timing')).map((p) => p?.[0])).to.deep.equal(['admission', 'start']);
  });

  it('streams chunks with a final usage chunk carrying credits_used', async () => {
    const stream = await tenant.client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'Stream me a few words please' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let last: any = null;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta?.content ?? '';
      last = chunk;
    }
    expect(chunks).to.be.greaterThan(3);
    expect(text).not.to.equal('');
    expect(last.usage.total_tokens).to.be.greaterThan(0);
    expect(last.usage.credits_used).to.be.greaterThan(0);
  });

  it('falls back along the workspace chain and says so in the headers', async () => {
    const { setFallbackChain } = await import('../../../domain/workspaces');
    await setFallbackChain(gateway.runtime.db, { workspaceId: tenant.workspaceId, sourceModel: 'sim-chat-fail-500', chain: ['sim-chat-mini'], actor: 'test', modalityOf: async () => 'chat' });
    const { data, response } = await tenant.client.chat.completions.create({ model: 'sim-chat-fail-500', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.choices[0].message.content).to.be.a('string');
    expect(response.headers.get('x-model-used')).to.equal('sim-chat-mini');
    expect(response.headers.get('x-fallback-from')).to.equal('sim-chat-fail-500');
    expect(response.headers.get('x-fallback-depth')).to.equal('1');

    // The operator's view: each hop (hold, call, settle) one step in the run's history, with its attempts,
    // the failure that made it fall back, and the model, outcome and charge of the hop that served.
    const steps = await localActivitySteps(gateway.runtime.temporal.client, `req-${response.headers.get('x-request-id')}`);
    expect(steps.map((s) => s.name)).to.deep.equal(['serveHop', 'releaseCredits', 'serveHop']);
    const [failed, , servedHop] = steps;
    expect(failed.attempt).to.equal(3);
    expect(failed.failure).to.contain('500');
    expect(servedHop.failure).to.equal(undefined);
    expect(servedHop.result).to.deep.include({ model: 'sim-chat-mini', settledMicro: servedHop.result.chargeMicro });
    expect(servedHop.result.chargeMicro).to.be.greaterThan(0);
    expect(Number(response.headers.get('x-credits-used')) * 1_000_000).to.be.closeTo(servedHop.result.chargeMicro, 1);
  });

  it('returns the upstream error when no fallback is configured', async () => {
    try {
      await tenant.client.chat.completions.create({ model: 'sim-chat-fail-429', messages: [{ role: 'user', content: 'hi' }] });
      expect.fail('should fail');
    } catch (err) {
      expect(err).to.be.instanceOf(OpenAI.RateLimitError);
    }
  });

  it('refuses audio input for a model without audio support', async () => {
    const res = await tenant.fetch('/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] }),
    });
    expect(res.status).to.equal(400);
    expect(((await res.json()) as any).error.code).to.equal('audio_not_supported_by_model');
  });
});
