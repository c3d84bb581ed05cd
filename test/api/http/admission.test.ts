import { expect } from 'chai';
import { startTestGateway, type TestGateway, type Tenant } from '../../support/gateway';
import { getBalance } from '../../../domain/ledger';
import { sampleValue, scrapeMetrics } from '../../support/metrics';
import { admissionMiddleware } from '../../../api/http/admission';

describe('admission control (GATEWAY_MAX_IN_FLIGHT)', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  let tenant: Tenant;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway({ env: { GATEWAY_MAX_IN_FLIGHT: '2' } });
    tenant = await gateway.newTenant({ credits: 100 });
  });
  after(() => gateway?.stop());

  const chat = (headers: Record<string, string> = {}) => tenant.fetch('/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'Hello' }] }),
  });

  async function untilInFlight(n: number): Promise<void> {
    for (let i = 0; i < 200; i++) {
      if (sampleValue(await scrapeMetrics(gateway), 'gateway_in_flight_requests') === n) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`never ${n} requests in flight`);
  }

  it('answers 503 server_overloaded with Retry-After at the bound, serves what it took, and takes requests again after', async () => {
    const held = [chat({ 'x-simulate-failure': 'slow', 'x-simulate-delay-ms': '3000' }), chat({ 'x-simulate-failure': 'slow', 'x-simulate-delay-ms': '3000' })];
    await untilInFlight(2);

    const refused = await chat();
    expect(refused.status).to.equal(503);
    expect(refused.headers.get('retry-after')).to.equal('1');
    expect(refused.headers.get('x-request-id')).to.be.a('string');
    const body = (await refused.json()) as { error: Record<string, unknown> };
    expect(body.error).to.include({ type: 'server_error', code: 'server_overloaded', param: null });
    expect(String(body.error.message)).to.match(/Retry-After/);
    // Only model endpoints are bounded.
    expect((await tenant.fetch('/v1/models')).status).to.equal(200);

    const served = await Promise.all(held);
    expect(served.map((r) => r.status)).to.deep.equal([200, 200]);
    const charged = served.reduce((sum, r) => sum + Number(r.headers.get('x-credits-used')), 0);
    // The refused request started nothing and charged nothing.
    expect((await getBalance(gateway.runtime.db, tenant.workspaceId)).totalMicro).to.equal(100_000_000 - Math.round(charged * 1_000_000));

    await untilInFlight(0);
    expect((await chat()).status).to.equal(200);
    expect(sampleValue(await scrapeMetrics(gateway), 'gateway_admission_rejected_total')).to.equal(1);
  });
});

describe('admission control: a request answered before its run ended', () => {
  it('keeps its place until that run ended, so answers cannot outrun the worker', async () => {
    const admit = admissionMiddleware({ limit: 1, applies: () => true });
    const ctx = () => ({ state: {} as Record<string, any> }) as never;
    let runEnded!: () => void;
    // Answered at once; its run ends later.
    const first = ctx() as { state: Record<string, any> };
    await admit(first as never, async () => {
      first.state.inFlightUntil(new Promise<void>((resolve) => { runEnded = resolve; }));
    });
    const refused = await admit(ctx(), async () => undefined).then(() => null, (err: Error & { status?: number }) => err);
    expect(refused?.status).to.equal(503);
    runEnded();
    await new Promise((r) => setImmediate(r));
    // The place is free again once the run ended.
    expect(await admit(ctx(), async () => undefined)).to.equal(undefined);
  });
});
