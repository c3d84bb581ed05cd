import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../support/gateway';

describe('GET /healthz', function () {
  let gateway: TestGateway;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway();
  });
  after(() => gateway?.stop());

  it('reports Postgres, Temporal and S3 reachable, without a key', async () => {
    const res = await fetch(`${gateway.url}/healthz`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    const body = (await res.json()) as any;
    expect(body.status).to.equal('ok');
    for (const part of ['postgres', 'temporal', 's3']) expect(body[part].ok, part).to.equal(true);
  });
});
