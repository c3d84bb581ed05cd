import { expect } from 'chai';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import { waitFor } from '../../support/notification-sinks';

const json = { 'content-type': 'application/json' };
const chat = (content: string, model = 'sim-chat') => JSON.stringify({ model, max_tokens: 16, messages: [{ role: 'user', content }] });

describe('GET /v1/requests/{id} and unknown outcomes', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway();
  });
  after(() => gateway?.stop());

  const outcome = async (tenant: Tenant, id: string) => {
    const res = await tenant.fetch(`/v1/requests/${id}`);
    return { status: res.status, body: (await res.json()) as any };
  };

  it('shows a served request: its answer, charge, model and hops', async () => {
    const tenant = await gateway.newTenant();
    const res = await tenant.fetch('/v1/chat/completions', { method: 'POST', headers: json, body: chat('what happened?') });
    expect(res.status).to.equal(200);
    const answer = await res.json();
    const id = res.headers.get('x-request-id')!;

    const { status, body } = await outcome(tenant, id);
    expect(status).to.equal(200);
    expect(body).to.include({ id, object: 'request', status: 'succeeded', endpoint: 'chat.completions', model: 'sim-chat', model_used: 'sim-chat', fallback_depth: 0, error: null });
    expect(body.credits_used).to.equal(Number(res.headers.get('x-credits-used')));
    expect(body.result).to.deep.equal(answer);
    expect(body.fallback_hops).to.deep.equal([{ model: 'sim-chat', outcome: 'served' }]);
  });

  it('lists the fallback hops of a request another model served', async () => {
    const tenant = await gateway.newTenant({ role: 'admin' });
    await tenant.fetch('/v1/fallback-chains/sim-chat-fail-500', { method: 'PUT', headers: json, body: JSON.stringify({ chain: ['sim-chat-mini'] }) });
    await tenant.fetch('/v1/fallback-chains/sim-chat', { method: 'PUT', headers: json, body: JSON.stringify({ chain: ['sim-chat-mini'] }) });
    const res = await tenant.fetch('/v1/chat/completions', { method: 'POST', headers: json, body: chat('fall back', 'sim-chat-fail-500') });
    expect(res.status).to.equal(200);
    const { body } = await outcome(tenant, res.headers.get('x-request-id')!);
    expect(body).to.include({ status: 'succeeded', model: 'sim-chat-fail-500', model_used: 'sim-chat-mini', fallback_depth: 1 });
    expect(body.fallback_hops.map((h: any) => `${h.model}:${h.outcome}`)).to.deep.equal(['sim-chat-fail-500:failed', 'sim-chat-mini:served']);

    const refused = await tenant.fetch('/v1/chat/completions', { method: 'POST', headers: { ...json, 'x-simulate-failure': '400' }, body: chat('no fallback for caller errors') });
    expect(refused.status).to.equal(400);
    const failed = await outcome(tenant, refused.headers.get('x-request-id')!);
    expect(failed.body).to.include({ status: 'failed', credits_used: 0, result: null, model_used: null });
    expect(failed.body.error).to.include({ type: 'invalid_request_error', code: ((await refused.json()) as any).error.code });
  });

  it('shows a request as running until it ends, and finds it by the client\'s own X-Request-Id', async () => {
    const tenant = await gateway.newTenant();
    const pending = tenant.fetch('/v1/chat/completions', {
      method: 'POST', body: chat('slowly'), headers: { ...json, 'x-request-id': 'client-trace-7', 'x-simulate-failure': 'slow', 'x-simulate-delay-ms': '2500' },
    });
    const held = await waitFor('the hold', () => gateway.runtime.db('reservations').where({ workspace_id: tenant.workspaceId }).first());
    const running = await outcome(tenant, held.request_id);
    expect(running.body).to.include({ status: 'running', credits_used: null, result: null, model: 'sim-chat' });

    const res = await pending;
    expect(res.status).to.equal(200);
    const done = await outcome(tenant, 'client-trace-7');
    expect(done.body).to.include({ id: held.request_id, status: 'succeeded' });
  });

  it('finds a request run under an Idempotency-Key by the request id that started it', async () => {
    const tenant = await gateway.newTenant();
    const headers = { ...json, 'idempotency-key': 'requests-test-1' };
    const first = await tenant.fetch('/v1/chat/completions', { method: 'POST', headers, body: chat('once') });
    const again = await tenant.fetch('/v1/chat/completions', { method: 'POST', headers, body: chat('once') });
    expect(again.headers.get('x-idempotent-replayed')).to.equal('true');
    const { body } = await waitFor('the run in the visibility index', async () => {
      const found = await outcome(tenant, first.headers.get('x-request-id')!);
      return found.body.result ? found : null;
    });
    expect(body.result).to.deep.equal(await first.json());
  });

  it('answers 404 for another workspace\'s request and for an unknown id', async () => {
    const owner = await gateway.newTenant();
    const res = await owner.fetch('/v1/chat/completions', { method: 'POST', headers: json, body: chat('mine') });
    const stranger = await gateway.newTenant();
    for (const id of [res.headers.get('x-request-id')!, 'no-such-request']) {
      const { status, body } = await outcome(stranger, id);
      expect(status).to.equal(404);
      expect(body.error).to.include({ code: 'request_not_found', type: 'not_found_error' });
    }
  });

  it('tells the client a stopped run was stopped (503, not a 500), and where its outcome is', async () => {
    const tenant = await gateway.newTenant();
    const pending = tenant.fetch('/v1/chat/completions', {
      method: 'POST', body: chat('never finishes'), headers: { ...json, 'x-simulate-failure': 'slow', 'x-simulate-delay-ms': '30000' },
    });
    const held = await waitFor('the hold', () => gateway.runtime.db('reservations').where({ workspace_id: tenant.workspaceId }).first());
    await gateway.runtime.temporal.client.workflow.getHandle(`req-${held.request_id}`).terminate('operator');
    const res = await pending;
    expect(res.status).to.equal(503);
    expect(res.headers.get('x-request-id')).to.equal(held.request_id);
    expect(Number(res.headers.get('retry-after'))).to.be.at.least(1);
    const error = ((await res.json()) as any).error;
    expect(error.code).to.equal('request_stopped');
    expect(error.message).to.include(`GET /v1/requests/${held.request_id}`);

    const { body } = await outcome(tenant, held.request_id);
    expect(body).to.include({ status: 'failed', credits_used: 0 });
    expect(body.error.code).to.equal('request_stopped');
  });

  it('tells the client a cancelled run was cancelled (503 request_stopped), with its hold given back', async () => {
    const tenant = await gateway.newTenant();
    const pending = tenant.fetch('/v1/chat/completions', {
      method: 'POST', body: chat('cancelled'), headers: { ...json, 'x-simulate-failure': 'slow', 'x-simulate-delay-ms': '30000' },
    });
    const held = await waitFor('the hold', () => gateway.runtime.db('reservations').where({ workspace_id: tenant.workspaceId }).first());
    await gateway.runtime.temporal.client.workflow.getHandle(`req-${held.request_id}`).cancel();
    const res = await pending;
    expect(res.status).to.equal(503);
    const error = ((await res.json()) as any).error;
    expect(error.code).to.equal('request_stopped');
    expect(error.message).to.include('cancelled');
    const reservation = await gateway.runtime.db('reservations').where({ id: held.id }).first();
    expect(reservation.status).to.equal('released');
  });
});

