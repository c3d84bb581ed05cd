/**
 * Errors of the Messages routes in Anthropic's shape and statuses, as the Anthropic SDK's typed errors:
 * authentication, bad requests naming the field (unknown fields, what a model lacks), unknown models,
 * permissions, credits (402), rate limits with retry-after, overloaded upstreams (529), bodies too large, and
 * a stream broken after its first byte (an `error` event). Nothing is charged for any of them.
 */
import Anthropic, { APIError } from '@anthropic-ai/sdk';
import { expect } from 'chai';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import { anthropicClient, expectAnthropicShape, expectValidStream, parseSse } from '../../support/anthropic';
import { getBalance } from '../../../domain/ledger';

const ask = { model: 'sim-chat', max_tokens: 64, messages: [{ role: 'user' as const, content: 'Hi' }] };

async function caught(promise: Promise<unknown>): Promise<APIError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof Anthropic.APIError) return err;
    throw err;
  }
  throw new Error('expected an error');
}

describe('POST /v1/messages errors, as the Anthropic SDK\'s typed errors', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  let tenant: Tenant;
  let client: Anthropic;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway({ env: { MAX_JSON_BODY_BYTES: '200000' } });
    tenant = await gateway.newTenant({ credits: 10 });
    client = anthropicClient(gateway.url, tenant.key);
  });
  after(() => gateway?.stop());

  function expectError(err: APIError, status: number, type: string, message?: RegExp): void {
    expect(err.status, err.message).to.equal(status);
    // Anthropic documents `request_too_large` for 413; its OpenAPI document's error union does not list it.
    if (type !== 'request_too_large') expectAnthropicShape('ErrorResponse', err.error);
    expect((err.error as { error: { type: string } }).error.type).to.equal(type);
    expect((err.error as { request_id: string }).request_id).to.equal(err.headers?.get('x-request-id'));
    if (message) expect((err.error as { error: { message: string } }).error.message).to.match(message);
  }

  it('401 authentication_error: AuthenticationError, with x-api-key or without a key', async () => {
    const wrong = anthropicClient(gateway.url, 'sk-gw-not-a-real-key-000000000000000000000');
    const err = await caught(wrong.messages.create(ask));
    expect(err).to.be.instanceOf(Anthropic.AuthenticationError);
    expectError(err, 401, 'authentication_error');
    const res = await fetch(`${gateway.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ask) });
    expect(res.status).to.equal(401);
    expect((await res.json() as { type: string }).type).to.equal('error');
  });

  it('400 invalid_request_error: BadRequestError naming the field', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...ask, frequency: 1 }, /'frequency'/],
      [{ model: 'sim-chat', messages: ask.messages }, /max_tokens/],
      [{ ...ask, messages: [{ role: 'user', content: [{ type: 'text', text: 'x', colour: 'red' }] }] }, /content.*colour/],
      [{ ...ask, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA', extra: 1 } }] }] }, /source\.extra/],
      [{ ...ask, messages: [{ role: 'assistant', content: [{ type: 'image', source: { type: 'url', url: 'https://x.example/a.png' } }] }] }, /'image' blocks are not allowed in assistant content/],
      [{ ...ask, top_k: 5 }, /top_k/],
      [{ ...ask, max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 } }, /'thinking'/],
      [{ ...ask, max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 2048 } }, /max_tokens.*budget_tokens/],
      [{ ...ask, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, /web_search_20250305/],
      [{ ...ask, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://x.example/a.pdf' } }] }] }, /documents by URL/],
      [{ ...ask, model: 'sim-chat-audio', messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://x.example/a.png' } }] }] }, /image input/],
    ];
    for (const [body, message] of cases) {
      const err = await caught(client.messages.create(body as never));
      expect(err, JSON.stringify(body)).to.be.instanceOf(Anthropic.BadRequestError);
      expectError(err, 400, 'invalid_request_error', message);
    }
  });

  it('404 not_found_error: NotFoundError for an unknown model, also on count_tokens and models', async () => {
    const err = await caught(client.messages.create({ ...ask, model: 'no-such-model' }));
    expect(err).to.be.instanceOf(Anthropic.NotFoundError);
    expectError(err, 404, 'not_found_error', /no-such-model/);
    expect(await caught(client.messages.countTokens({ model: 'no-such-model', messages: ask.messages }))).to.be.instanceOf(Anthropic.NotFoundError);
    expect(await caught(client.models.retrieve('no-such-model'))).to.be.instanceOf(Anthropic.NotFoundError);
  });

  it('403 permission_error: PermissionDeniedError for a role that may not spend and a model the key may not use', async () => {
    const viewer = await gateway.newTenant({ credits: 10, role: 'viewer' });
    const err = await caught(anthropicClient(gateway.url, viewer.key).messages.create(ask));
    expect(err).to.be.instanceOf(Anthropic.PermissionDeniedError);
    expectError(err, 403, 'permission_error');
    const limited = await gateway.newTenant({ credits: 10, quotas: { models: ['sim-chat-mini'] } });
    expect(await caught(anthropicClient(gateway.url, limited.key).messages.create(ask))).to.be.instanceOf(Anthropic.PermissionDeniedError);
  });

  it('402 billing_error when the credits cannot cover the request', async () => {
    const broke = await gateway.newTenant({ credits: 0 });
    const err = await caught(anthropicClient(gateway.url, broke.key).messages.create(ask));
    expectError(err, 402, 'billing_error', /credits/i);
    expect(await gateway.runtime.db('usage_records').where({ workspace_id: broke.workspaceId, status: 'succeeded' })).to.have.length(0);
  });

  it('429 rate_limit_error: RateLimitError with retry-after', async () => {
    const slow = await gateway.newTenant({ credits: 10, quotas: { rpm: 1 } });
    const limited = anthropicClient(gateway.url, slow.key);
    await limited.messages.create(ask);
    const err = await caught(limited.messages.create(ask));
    expect(err).to.be.instanceOf(Anthropic.RateLimitError);
    expectError(err, 429, 'rate_limit_error');
    expect(Number(err.headers?.get('retry-after'))).to.be.greaterThan(0);
  });

  it('529 overloaded_error when every upstream is unavailable, nothing charged', async () => {
    const before = (await getBalance(gateway.runtime.db, tenant.workspaceId)).totalMicro;
    const err = await caught(client.messages.create(ask, { headers: { 'x-simulate-failure': '503' } }));
    expect(err.status).to.equal(529);
    expectError(err, 529, 'overloaded_error');
    expect((await getBalance(gateway.runtime.db, tenant.workspaceId)).totalMicro).to.equal(before);
  });

  it('413 request_too_large for a body over the limit', async () => {
    const err = await caught(client.messages.create({ ...ask, messages: [{ role: 'user', content: 'x'.repeat(300_000) }] }));
    expectError(err, 413, 'request_too_large');
  });

  it('a stream broken after its first byte ends with an error event (schema-valid), billed for what was sent', async () => {
    const res = await tenant.fetch('/v1/messages', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-simulate-failure': 'malformed' },
      body: JSON.stringify({ ...ask, max_tokens: 512, stream: true, messages: [{ role: 'user', content: 'A longer question so that the answer streams in several parts' }] }),
    });
    expect(res.status).to.equal(200);
    const events = parseSse(await res.text());
    expectValidStream(events);
    const last = events[events.length - 1].data;
    expect(last.type).to.equal('error');
    expect(last.error.type).to.equal('api_error');
    expect(events.some((e) => e.data.type === 'content_block_delta')).to.equal(true);
    expect(events.some((e) => e.data.type === 'message_stop')).to.equal(false);
    const record = await gateway.runtime.db('usage_records').where({ request_id: res.headers.get('x-request-id') }).first();
    expect(record.endpoint).to.equal('messages');
    expect(record.status).to.not.equal('succeeded');
  });
});
