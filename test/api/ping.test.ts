import { expect } from 'chai';
import { startTestGateway, type TestGateway, type Tenant } from '../support/gateway';

describe('GET /v1/ping (end-to-end workflow)', function () {
  let gateway: TestGateway;
  let tenant: Tenant;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway();
    tenant = await gateway.newTenant();
  });
  after(() => gateway?.stop());

  it('runs API -> workflow -> activity -> Postgres and is findable by request id', async () => {
    const res = await tenant.fetch('/v1/ping');
    expect(res.status).to.equal(200);
    const requestId = res.headers.get('x-request-id')!;
    const body = (await res.json()) as any;
    expect(body.pong).to.equal(true);
    expect(body.workflowId).to.equal(`ping-${requestId}`);
    expect(Date.parse(body.databaseTime)).to.be.closeTo(Date.now(), 60_000);
    expect(body.models).to.be.greaterThan(100);

    // The operator's view: the run is listed under its search attributes and its history holds the activity.
    const client = gateway.runtime.temporal.client;
    let found: string[] = [];
    for (let i = 0; i < 50 && found.length === 0; i++) {
      found = [];
      for await (const wf of client.workflow.list({ query: `GatewayRequestId = '${requestId}' AND GatewayWorkspaceId = '${tenant.workspaceId}'` })) found.push(wf.workflowId);
      if (found.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(found).to.deep.equal([`ping-${requestId}`]);
    const history = await client.workflow.getHandle(body.workflowId).fetchHistory();
    const types = (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    expect(types).to.deep.equal(['inspectStores']);
  });
});
