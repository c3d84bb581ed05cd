/**
 * A model whose provider nobody can serve (no credentials on the gateway, no key of the workspace's own) is
 * refused at every door before anything is held, as a chat request is: video jobs (both API shapes and the
 * Playground), batch lines (in `validating`, naming the line), and Anthropic's Messages and count_tokens.
 */
import { expect } from 'chai';
import { toFile } from 'openai';
import type { Batch } from 'openai/resources/batches';
import type { Tenant, TestGateway } from '../../support/gateway';
import { expectAnthropicShape } from '../../support/anthropic';
import { signUp, type Session } from '../../support/people';
import { newChat, playgroundGateway } from '../../support/playground';

/** Groq serves this chat model and Google this video model; neither has credentials on this gateway. */
const CHAT = 'llama-3.1-8b-instant';
const VIDEO = 'veo-3.0-generate-001';
const ask = { model: CHAT, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] };

describe('a model no credentials serve, at every door', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  let stop: () => Promise<void>;
  let tenant: Tenant;
  let owner: Session;
  const db = () => gateway.runtime.db;

  before(async function () {
    this.timeout(180_000);
    const started = await playgroundGateway({ GROQ_API_KEY: '', GOOGLE_API_KEY: '' });
    ({ gateway, stop } = started);
    tenant = await gateway.newTenant({ credits: 1000 });
    owner = await signUp(gateway.url, started.smtp, 'nadia');
  });
  after(async () => {
    await stop?.();
  });

  /** Holds, charges and usage of the tenant's workspace: all nothing. */
  async function expectNothingHeldOrCharged(workspaceId = tenant.workspaceId): Promise<void> {
    const count = async (table: string, where: Record<string, unknown>) => Number((await db()(table).where(where).count<{ count: string }[]>('* as count'))[0].count);
    expect({
      reservations: await count('reservations', { workspace_id: workspaceId }),
      usage: await count('usage_records', { workspace_id: workspaceId }),
      ledgerSpends: Number((await db()('credit_ledger').where({ workspace_id: workspaceId }).whereNotNull('reservation_id').count<{ count: string }[]>('* as count'))[0].count),
    }).to.deep.equal({ reservations: 0, usage: 0, ledgerSpends: 0 });
  }

  async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
    const res = await tenant.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() as any, requestId: res.headers.get('x-request-id') };
  }

  function expectOpenAIRefusal(res: { status: number; body: any }, provider: string): void {
    expect(res.status, JSON.stringify(res.body)).to.equal(503);
    expect(res.body.error).to.include({ code: 'provider_not_configured', param: 'model' });
    expect(res.body.error.message).to.contain(provider).and.contain('no credentials configured');
  }

  it('the model list says so, and a chat request is refused with the same sentence', async () => {
    const models = (await (await tenant.fetch('/v1/models')).json()) as { data: Array<{ id: string; available: boolean; unavailable_code?: string; unavailable_reason?: string }> };
    const video = models.data.find((m) => m.id === VIDEO)!;
    expect(video).to.include({ available: false, unavailable_code: 'provider_not_configured' });
    const chat = await post('/v1/chat/completions', { model: CHAT, messages: ask.messages });
    expectOpenAIRefusal(chat, 'groq');
    expect(chat.body.error.message).to.equal(models.data.find((m) => m.id === CHAT)!.unavailable_reason);
  });

  it('refuses a video job on either API shape with 503 provider_not_configured: no job, nothing held', async () => {
    const generations = await post('/v1/videos/generations', { model: VIDEO, prompt: 'A cat surfing', duration: 4 });
    expectOpenAIRefusal(generations, 'google');
    const openai = await post('/v1/videos', { model: VIDEO, prompt: 'A cat surfing', seconds: '4' }, { 'idempotency-key': 'video-unserved-1' });
    expectOpenAIRefusal(openai, 'google');
    // The model's own parameters are checked first, as a chat request's are.
    const badDuration = await post('/v1/videos/generations', { model: VIDEO, prompt: 'x', duration: 5 });
    expect([badDuration.status, badDuration.body.error.param]).to.deep.equal([400, 'duration']);

    expect(await db()('video_jobs').where({ workspace_id: tenant.workspaceId })).to.deep.equal([]);
    await expectNothingHeldOrCharged();
  });

  it("refuses a Playground video the same way, with nothing added to the chat", async () => {
    const chat = await newChat(owner, { model: 'sim-video' });
    const sent = await owner.json('POST', `/api/playground/chats/${chat.id}/videos`, { model: VIDEO, prompt: 'A lighthouse', duration: 4 });
    expectOpenAIRefusal(sent, 'google');
    expect((await owner.json('GET', `/api/playground/chats/${chat.id}`)).body.messages).to.deep.equal([]);
    // The suite shares its database with other suites' video jobs: this workspace's only.
    const { workspace_id: workspaceId } = await db()('playground_chats').where({ id: chat.id }).first();
    expect(await db()('video_jobs').where({ workspace_id: workspaceId })).to.deep.equal([]);
    await expectNothingHeldOrCharged(workspaceId);
  });

  it('fails a batch naming such a model in validating, with the line\'s error, and runs no line of it', async () => {
    const lines = [
      { custom_id: 'served', method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-chat', messages: ask.messages } },
      { custom_id: 'unserved', method: 'POST', url: '/v1/chat/completions', body: { model: CHAT, messages: ask.messages } },
    ];
    const file = await tenant.client.files.create({ file: await toFile(Buffer.from(lines.map((l) => JSON.stringify(l)).join('\n')), 'batch.jsonl'), purpose: 'batch' });
    const created = await tenant.client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    let batch: Batch = created;
    for (let i = 0; i < 240 && !['failed', 'completed', 'cancelled', 'expired'].includes(batch.status); i++) {
      await new Promise((r) => setTimeout(r, 250));
      batch = await tenant.client.batches.retrieve(created.id);
    }
    expect(batch.status).to.equal('failed');
    expect(batch.output_file_id).to.equal(null);
    expect((batch.errors?.data ?? []).map((e) => ({ line: e.line, code: e.code, param: e.param }))).to.deep.equal([{ line: 2, code: 'provider_not_configured', param: 'body.model' }]);
    expect(batch.errors!.data![0].message).to.contain('groq');
    expect(await db()('batch_lines').where({ batch_id: created.id })).to.deep.equal([]);
    await expectNothingHeldOrCharged();
  });

  it("refuses Anthropic's Messages, count_tokens and Message Batches in Anthropic's shape, nothing held", async () => {
    const message = await post('/v1/messages', ask);
    const counted = await post('/v1/messages/count_tokens', { model: CHAT, messages: ask.messages });
    for (const res of [message, counted]) {
      // Not a 529 overloaded_error, which Anthropic's clients retry: nothing changes until a provider key is added.
      expect(res.status, JSON.stringify(res.body)).to.equal(403);
      expectAnthropicShape('ErrorResponse', res.body);
      expect(res.body).to.deep.include({ type: 'error', request_id: res.requestId });
      expect(res.body.error.type).to.equal('permission_error');
      expect(res.body.error.message).to.contain('groq').and.contain('no credentials configured');
    }
    // Counting a model that is served still answers.
    const served = await post('/v1/messages/count_tokens', { model: 'sim-chat', messages: ask.messages });
    expect(served.status).to.equal(200);
    expect(served.body.input_tokens).to.be.a('number');

    const batch = await post('/v1/messages/batches', { requests: [{ custom_id: 'a', params: { ...ask, model: 'sim-chat' } }, { custom_id: 'b', params: ask }] });
    expect(batch.status, JSON.stringify(batch.body)).to.equal(400);
    expectAnthropicShape('ErrorResponse', batch.body);
    expect(batch.body.error.type).to.equal('invalid_request_error');
    expect(batch.body.error.message).to.match(/^requests\.1\.params\.model: .*groq/);
    expect(await db()('batches').where({ workspace_id: tenant.workspaceId, shape: 'anthropic' })).to.deep.equal([]);
    await expectNothingHeldOrCharged();
  });
});
