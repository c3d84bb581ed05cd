import { expect } from 'chai';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../../config/env';
import { corsMiddleware } from '../../../api/http/cors';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';

const APP = 'https://app.example';

describe('CORS on /v1', function () {
  this.timeout(120_000);

  it('is off by default', async () => {
    expect(loadConfig({}).corsAllowedOrigins).to.deep.equal([]);
    const app = new Koa();
    app.use(corsMiddleware({ origins: loadConfig({}).corsAllowedOrigins, prefix: '/v1' }));
    app.use((ctx) => { ctx.body = { ok: true }; });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/models`, { headers: { origin: APP } });
      expect(res.headers.get('access-control-allow-origin')).to.equal(null);
    } finally {
      server.close();
    }
  });

  describe('with an allow-list', () => {
    let gateway: TestGateway;
    let tenant: Tenant;
    before(async function () {
      this.timeout(180_000);
      gateway = await startTestGateway({ env: { CORS_ALLOWED_ORIGINS: `${APP}, https://other.example/` } });
      tenant = await gateway.newTenant({ credits: 10 });
    });
    after(() => gateway?.stop());

    const preflight = (origin: string, headers: string) => fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': headers },
    });

    it('answers the preflight of an allowed origin before auth, allowing the official client\'s headers', async () => {
      const res = await preflight(APP, 'authorization, content-type, idempotency-key, x-stainless-os, x-stainless-retry-count');
      expect(res.status).to.equal(204);
      expect(res.headers.get('access-control-allow-origin')).to.equal(APP);
      expect(res.headers.get('access-control-allow-methods')).to.include('POST');
      expect(res.headers.get('access-control-allow-headers')).to.equal('authorization, content-type, idempotency-key, x-stainless-os, x-stainless-retry-count');
      expect(res.headers.get('vary')).to.match(/origin/i);
      expect((await preflight('https://other.example', 'authorization')).status).to.equal(204);
    });

    it('refuses the preflight of another origin, or of a header it does not allow, with the error shape', async () => {
      const foreign = await preflight('https://evil.example', 'authorization');
      expect(foreign.status).to.equal(403);
      expect(foreign.headers.get('access-control-allow-origin')).to.equal(null);
      expect(((await foreign.json()) as { error: { code: string } }).error.code).to.equal('cors_origin_not_allowed');
      const header = await preflight(APP, 'authorization, x-secret');
      expect(header.status).to.equal(403);
      expect(((await header.json()) as { error: { code: string } }).error.code).to.equal('cors_header_not_allowed');
    });

    it('lets an allowed origin read the answer and the gateway\'s headers, errors included', async () => {
      const res = await tenant.fetch('/v1/chat/completions', {
        method: 'POST', headers: { origin: APP, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).to.equal(200);
      expect(res.headers.get('access-control-allow-origin')).to.equal(APP);
      expect(res.headers.get('access-control-expose-headers')).to.include('x-request-id').and.include('x-credits-used').and.include('x-model-used');
      const unauthorized = await fetch(`${gateway.url}/v1/models`, { headers: { origin: APP } });
      expect(unauthorized.status).to.equal(401);
      expect(unauthorized.headers.get('access-control-allow-origin')).to.equal(APP);
      const health = await fetch(`${gateway.url}/healthz`, { headers: { origin: APP } });
      expect(health.headers.get('access-control-allow-origin'), 'only /v1 is covered').to.equal(null);
    });
  });
});
