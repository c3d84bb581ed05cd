import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { parseRequestLogQuery, requestLogPage } from '../../domain/request-log';
import { createApiKey } from '../../domain/workspaces';
import { FakeUpstream, type RecordedRequest } from '../support/fake-upstream';
import { startTestGateway, type Tenant, type TestGateway } from '../support/gateway';

const PLATFORM_KEY = 'sk-platform-openai';
const GOOD_KEY = `sk-workspace-${randomBytes(12).toString('hex')}`;
const GROQ_KEY = `gsk_workspace_${randomBytes(12).toString('hex')}`;
/** Keys the fake providers accept; any other bearer is refused with the provider's 401. */
const ACCEPTED = new Set([`Bearer ${PLATFORM_KEY}`, `Bearer ${GOOD_KEY}`, `Bearer ${GROQ_KEY}`]);

function completion(model: string) {
  return {
    id: 'chatcmpl-byok', object: 'chat.completion', created: 1_700_000_000, model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there.' }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 30, completion_tokens: 8, total_tokens: 38 },
  };
}

function chunk(delta: Record<string, unknown>, finishReason: string | null = null) {
  return { id: 'chatcmpl-byok', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

/** An OpenAI-compatible host that checks the bearer, as OpenAI and Groq do. */
function answerChat(req: RecordedRequest) {
  if (!ACCEPTED.has(String(req.headers.authorization))) {
    return { status: 401, json: { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } } };
  }
  if (req.json?.stream) {
    return { sse: [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hi' }), chunk({}, 'stop'), { ...chunk({}), choices: [], usage: { prompt_tokens: 30, completion_tokens: 8, total_tokens: 38 } }, '[DONE]'] };
  }
  return { json: completion(req.json?.model ?? 'x') };
}

/**
 * Workspaces' own provider keys end to end: a real gateway with a BYOK key ring and a 10% fee, OpenAI's and
 * Groq's hosts played by a fake that checks the bearer (Groq has no platform key here).
 */
describe('workspace provider keys (BYOK)', function () {
  this.timeout(120_000);
  const openai = new FakeUpstream();
  const groq = new FakeUpstream();
  let gateway: TestGateway;
  let owner: Tenant;
  let other: Tenant;
  const db = () => gateway.runtime.db;

  before(async function () {
    this.timeout(180_000);
    await openai.start();
    await groq.start();
    gateway = await startTestGateway({
      env: {
        OPENAI_BASE_URL: `${openai.url}/v1`, OPENAI_API_KEY: PLATFORM_KEY, GROQ_BASE_URL: `${groq.url}/openai/v1`, GROQ_API_KEY: '',
        BYOK_KEY_RING: `k2:${randomBytes(32).toString('base64')},k1:${randomBytes(32).toString('base64')}`, BYOK_FEE_PERCENT: '10',
      },
    });
    owner = await gateway.newTenant({ credits: 100 });
    other = await gateway.newTenant({ credits: 100 });
  });
  after(async () => {
    await gateway?.stop();
    await openai.stop();
    await groq.stop();
  });
  beforeEach(() => {
    openai.reset();
    groq.reset();
    openai.on('POST /v1/chat/completions', answerChat);
    groq.on('POST /openai/v1/chat/completions', answerChat);
  });

  const addKey = (t: Tenant, provider: string, key: string) => t.fetch('/v1/provider-keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ provider, key }) });
  /** A chat call, with our request id (the x-request-id header) as `id`. */
  const chat = async (t: Tenant, model: string) => {
    const { data, response } = await t.client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello' }] }).withResponse();
    return { ...data, id: response.headers.get('x-request-id')! };
  };
  const usageOf = (requestId: string) => db()('usage_records').where({ request_id: requestId }).first();

  it('refuses a key the provider refuses, naming why, and stores nothing', async () => {
    const res = await addKey(owner, 'openai', 'sk-wrong-key-1234');
    const body = await res.json() as { error: { code: string; param: string; message: string } };
    expect(res.status).to.equal(400);
    expect(body.error).to.include({ code: 'provider_key_rejected', param: 'key' });
    expect(body.error.message).to.match(/openai.*refused the key \(HTTP 401\)/);
    const [test] = openai.received('POST /v1/chat/completions');
    expect(test.headers.authorization).to.equal('Bearer sk-wrong-key-1234');
    expect(test.json.max_completion_tokens ?? test.json.max_tokens).to.equal(1);
    expect(await db()('workspace_provider_keys').where({ workspace_id: owner.workspaceId })).to.deep.equal([]);
  });

  it('refuses a provider that takes no workspace key, and a malformed key', async () => {
    const sim = await addKey(owner, 'simulated', 'sk-whatever-1234');
    expect(sim.status).to.equal(400);
    expect(((await sim.json()) as { error: { code: string } }).error.code).to.equal('provider_not_supported');
    const short = await addKey(owner, 'openai', 'short');
    expect(short.status).to.equal(400);
    expect(openai.requests).to.deep.equal([]);
  });

  it('stores a tested key sealed: shown once, then only its last four; audited without the key', async () => {
    const res = await addKey(owner, 'openai', GOOD_KEY);
    expect(res.status).to.equal(201);
    const created = await res.json() as Record<string, unknown>;
    expect(created).to.include({ object: 'provider_key', provider: 'openai', last_four: GOOD_KEY.slice(-4), key: GOOD_KEY });
    expect(openai.received('POST /v1/chat/completions')[0].headers.authorization).to.equal(`Bearer ${GOOD_KEY}`);

    const list = await (await owner.fetch('/v1/provider-keys')).json() as { data: Array<Record<string, unknown>>; providers: string[]; fee_percent: number };
    expect(list.data).to.have.length(1);
    expect(list.data[0]).to.include({ provider: 'openai', last_four: GOOD_KEY.slice(-4) });
    expect(list.data[0]).not.to.have.property('key');
    expect(JSON.stringify(list)).not.to.include(GOOD_KEY);
    expect(list.providers).to.include.members(['openai', 'groq', 'anthropic']).and.not.include('simulated');
    expect(list.fee_percent).to.equal(10);

    const row = await db()('workspace_provider_keys').where({ workspace_id: owner.workspaceId }).first();
    expect(row.key_id).to.equal('k2');
    expect(Buffer.isBuffer(row.sealed)).to.equal(true);
    expect(row.sealed.includes(Buffer.from(GOOD_KEY))).to.equal(false);
    expect(row.sealed.toString('latin1')).not.to.include(GOOD_KEY.slice(4));
    expect(JSON.stringify({ ...row, sealed: row.sealed.toString('base64') })).not.to.include(GOOD_KEY);
    const audits = await db()('audit_log').where({ workspace_id: owner.workspaceId, action: 'provider_key.add' });
    expect(audits).to.have.length(1);
    expect(JSON.stringify(audits)).not.to.include(GOOD_KEY);
  });

  it("serves the workspace's calls with its key at the fee, and never another workspace's", async () => {
    const mine = await chat(owner, 'gpt-4o-mini');
    const theirs = await chat(other, 'gpt-4o-mini');
    const [first, second] = openai.received('POST /v1/chat/completions');
    expect(first.headers.authorization).to.equal(`Bearer ${GOOD_KEY}`);
    expect(second.headers.authorization).to.equal(`Bearer ${PLATFORM_KEY}`);
    // 30 in x 15 + 8 out x 60 credits per 1M tokens = 930 µcr at list price; the workspace's key pays 10% of it.
    const mineUsage = await usageOf(mine.id);
    const theirsUsage = await usageOf(theirs.id);
    expect({ credits: Number(mineUsage.credits_micro), source: mineUsage.key_source }).to.deep.equal({ credits: 93, source: 'workspace' });
    expect({ credits: Number(theirsUsage.credits_micro), source: theirsUsage.key_source }).to.deep.equal({ credits: 930, source: 'platform' });
    expect((mine as unknown as { credits_used: number }).credits_used).to.equal(0.000093);
    const settle = await db()('credit_ledger').where({ workspace_id: owner.workspaceId, request_id: mine.id, kind: 'settle' }).first();
    expect(Number(settle.amount_micro)).to.equal(-93);

    const log = await requestLogPage(db(), { workspaceId: owner.workspaceId, onlyUserId: null }, parseRequestLogQuery({ request_id: mine.id }));
    expect(log.data.map((r) => r.key_source)).to.deep.equal(['workspace']);

    // Many calls of the other workspace, interleaved with the owner's: none carries the owner's key.
    openai.reset();
    openai.on('POST /v1/chat/completions', answerChat);
    await Promise.all([chat(other, 'gpt-4o-mini'), chat(owner, 'gpt-4o-mini'), chat(other, 'gpt-4o-mini')]);
    const bearers = openai.received('POST /v1/chat/completions').map((r) => r.headers.authorization).sort();
    expect(bearers).to.deep.equal([`Bearer ${GOOD_KEY}`, `Bearer ${PLATFORM_KEY}`, `Bearer ${PLATFORM_KEY}`].sort());
  });

  it('streams with the workspace key and records the fee', async () => {
    const stream = await owner.client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }], stream: true, stream_options: { include_usage: true } });
    let credits: number | undefined;
    for await (const part of stream) {
      const usage = part.usage as { credits_used?: number } | null | undefined;
      if (usage?.credits_used !== undefined) credits = usage.credits_used;
    }
    expect(openai.received('POST /v1/chat/completions')[0].headers.authorization).to.equal(`Bearer ${GOOD_KEY}`);
    expect(credits).to.equal(0.000093);
    const usage = await db()('usage_records').where({ workspace_id: owner.workspaceId }).orderBy('id', 'desc').first();
    expect({ credits: Number(usage.credits_micro), source: usage.key_source }).to.deep.equal({ credits: 93, source: 'workspace' });
  });

  it("a provider without a platform key serves only the workspace that brought one; removal answers 503 provider_not_configured", async () => {
    const before = await chat(owner, 'llama-3.1-8b-instant').then(() => null, (err: { status: number; code: string }) => err);
    expect(before).to.include({ status: 503, code: 'provider_not_configured' });
    expect((await addKey(owner, 'groq', GROQ_KEY)).status).to.equal(201);
    const served = await chat(owner, 'llama-3.1-8b-instant');
    expect(served.choices[0].message.content).to.equal('Hi there.');
    expect(groq.received('POST /openai/v1/chat/completions').map((r) => r.headers.authorization)).to.deep.equal([`Bearer ${GROQ_KEY}`, `Bearer ${GROQ_KEY}`]);
    const refused = await chat(other, 'llama-3.1-8b-instant').then(() => null, (err: { status: number; code: string }) => err);
    expect(refused).to.include({ status: 503, code: 'provider_not_configured' });

    const removed = await owner.fetch('/v1/provider-keys/groq', { method: 'DELETE' });
    expect(removed.status).to.equal(200);
    const after = await chat(owner, 'llama-3.1-8b-instant').then(() => null, (err: { status: number; code: string }) => err);
    expect(after).to.include({ status: 503, code: 'provider_not_configured' });
    expect(groq.received('POST /openai/v1/chat/completions')).to.have.length(2);
    expect(await db()('audit_log').where({ workspace_id: owner.workspaceId, action: 'provider_key.remove' })).to.have.length(1);
  });

  it("removing a key falls back to the platform's key at list price", async () => {
    expect((await owner.fetch('/v1/provider-keys/openai', { method: 'DELETE' })).status).to.equal(200);
    const again = await owner.fetch('/v1/provider-keys/openai', { method: 'DELETE' });
    expect(again.status).to.equal(404);
    const res = await chat(owner, 'gpt-4o-mini');
    expect(openai.received('POST /v1/chat/completions')[0].headers.authorization).to.equal(`Bearer ${PLATFORM_KEY}`);
    const usage = await usageOf(res.id);
    expect({ credits: Number(usage.credits_micro), source: usage.key_source }).to.deep.equal({ credits: 930, source: 'platform' });
  });

  it('the model list says which models the workspace can use, by the rule its requests are refused with', async () => {
    const tenant = await gateway.newTenant({ credits: 100 });
    type Listed = { id: string; available: boolean; unavailable_code?: string; unavailable_reason?: string; needs_provider_key?: boolean };
    const listed = async (t: Tenant, id: string) => ((await (await t.fetch('/v1/models?modality=chat')).json()) as { data: Listed[] }).data.find((m) => m.id === id)!;
    const refusal = (t: Tenant, model: string) => chat(t, model).then(() => null, (err: { status: number; code: string; error: { message: string } }) => ({ status: err.status, code: err.code, message: err.error.message }));

    // Groq has no platform key here: its models need the workspace's own, and a request is refused before it starts.
    const llama = await listed(tenant, 'llama-3.1-8b-instant');
    expect(llama).to.deep.include({ available: false, unavailable_code: 'provider_not_configured', needs_provider_key: true });
    expect(llama.unavailable_reason).to.contain('Settings > Provider keys');
    expect(await refusal(tenant, 'llama-3.1-8b-instant')).to.deep.equal({ status: 503, code: 'provider_not_configured', message: llama.unavailable_reason });
    expect(groq.received('POST /openai/v1/chat/completions')).to.have.length(0);
    expect(await db()('usage_records').where({ workspace_id: tenant.workspaceId })).to.have.length(0);
    expect(await listed(tenant, 'gpt-4o-mini')).to.include({ available: true });

    expect((await addKey(tenant, 'groq', GROQ_KEY)).status).to.equal(201);
    expect(await listed(tenant, 'llama-3.1-8b-instant')).to.include({ available: true });
    expect((await listed(other, 'llama-3.1-8b-instant')).available).to.equal(false);

    // A key with an allow-list sees only its models as usable, and is refused the others with the same sentence.
    const narrow = await createApiKey(db(), { workspaceId: tenant.workspaceId, name: 'narrow', role: 'developer', quotas: { models: ['gpt-4o-mini'] }, actor: 'test' });
    const asNarrow: Tenant = { ...tenant, key: narrow.key, keyId: narrow.id, fetch: (path, init = {}) => fetch(`${gateway.url}${path}`, { ...init, headers: { authorization: `Bearer ${narrow.key}`, ...(init.headers ?? {}) } }) };
    const gpt4o = await listed(asNarrow, 'gpt-4o');
    expect(gpt4o).to.deep.include({ available: false, unavailable_code: 'model_not_allowed', needs_provider_key: false });
    expect(await listed(asNarrow, 'gpt-4o-mini')).to.include({ available: true });
    const res = await asNarrow.fetch('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] }) });
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect([res.status, body.error.code, body.error.message]).to.deep.equal([403, 'model_not_allowed', gpt4o.unavailable_reason]);
  });

  it('only owners and admins manage keys', async () => {
    for (const role of ['developer', 'viewer', 'billing'] as const) {
      const key = await createApiKey(db(), { workspaceId: owner.workspaceId, name: role, role, actor: 'test' });
      const as = (path: string, init: RequestInit = {}) => fetch(`${gateway.url}${path}`, { ...init, headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' } });
      for (const res of [await as('/v1/provider-keys'), await as('/v1/provider-keys', { method: 'POST', body: JSON.stringify({ provider: 'openai', key: GOOD_KEY }) }), await as('/v1/provider-keys/openai', { method: 'DELETE' })]) {
        expect(res.status, role).to.equal(403);
        expect(((await res.json()) as { error: { code: string } }).error.code, role).to.equal('insufficient_role');
      }
    }
    const admin = await createApiKey(db(), { workspaceId: owner.workspaceId, name: 'admin', role: 'admin', actor: 'test' });
    const listed = await fetch(`${gateway.url}/v1/provider-keys`, { headers: { authorization: `Bearer ${admin.key}` } });
    expect(listed.status).to.equal(200);
    expect(openai.requests).to.deep.equal([]);
  });
});
