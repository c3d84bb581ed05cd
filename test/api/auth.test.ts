import { expect } from 'chai';
import OpenAI from 'openai';
import { revokeApiKey } from '../../domain/workspaces';
import { startTestGateway, type TestGateway, type Tenant } from '../support/gateway';

describe('API authentication', function () {
  let gateway: TestGateway;
  let tenant: Tenant;

  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway();
    tenant = await gateway.newTenant();
  });
  after(() => gateway?.stop());

  async function expectAuthError(res: Response, code: string) {
    expect(res.status).to.equal(401);
    expect(res.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    const body = (await res.json()) as any;
    expect(body).to.have.keys('error');
    expect(body.error).to.have.keys('message', 'type', 'param', 'code');
    expect(body.error.code).to.equal(code);
    expect(body.error.type).to.equal('authentication_error');
    return body;
  }

  it('refuses a request without a key', async () => {
    await expectAuthError(await fetch(`${gateway.url}/v1/models`), 'missing_api_key');
  });

  it('refuses a malformed or unknown key without revealing it', async () => {
    const body = await expectAuthError(await fetch(`${gateway.url}/v1/models`, { headers: { authorization: 'Bearer nope' } }), 'invalid_api_key');
    expect(body.error.message).not.to.contain('nope');
    const unknown = `sk-gw-${'a'.repeat(43)}`;
    const res = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${unknown}` } });
    const second = await expectAuthError(res, 'invalid_api_key');
    expect(second.error.message).not.to.contain(unknown);
  });

  it('accepts a valid key and refuses it once revoked', async () => {
    const ok = await tenant.fetch('/v1/models');
    expect(ok.status).to.equal(200);
    const other = await gateway.newTenant();
    await revokeApiKey(gateway.runtime.db, { keyId: other.keyId, actor: 'test' });
    await expectAuthError(await other.fetch('/v1/models'), 'revoked_api_key');
  });

  it('surfaces as AuthenticationError in the official client', async () => {
    const client = new OpenAI({ apiKey: 'sk-gw-wrong', baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    try {
      await client.models.list();
      expect.fail('expected an error');
    } catch (err) {
      expect(err).to.be.instanceOf(OpenAI.AuthenticationError);
      expect((err as InstanceType<typeof OpenAI.AuthenticationError>).status).to.equal(401);
    }
  });

  it('answers unknown URLs with 404 in the error shape', async () => {
    const res = await tenant.fetch('/v1/nothing-here');
    expect(res.status).to.equal(404);
    expect(((await res.json()) as any).error.code).to.equal('unknown_url');
  });
});
