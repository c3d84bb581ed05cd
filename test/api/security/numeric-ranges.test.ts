/**
 * Every number a JSON body or a query can carry, thrown at with values no field takes: 1e20, 2^63, 1e308,
 * -1e308, and (for Unix times) a timestamp far in the future. Each must be a 4xx in OpenAI's shape naming
 * the parameter (never a 500), and nothing may be stored or charged.
 */
import { expect } from 'chai';
import { SESSION_COOKIE } from '../../../api/http/session';
import { createSession, createUser } from '../../../domain/accounts';
import { addMember } from '../../../domain/members';
import { createApiKey } from '../../../domain/workspaces';
import { PASSWORD, sessionFor, uniqueEmail, type Session } from '../../support/people';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';

/** What no field takes: far beyond any limit, beyond a bigint, beyond a safe integer, and the largest doubles. */
const OUT_OF_RANGE: Array<[string, number]> = [['1e20', 1e20], ['2^63', 2 ** 63], ['1e308', 1e308], ['-1e308', -1e308]];
/** The same as query text, plus Unix times Postgres cannot hold or that are centuries away. */
const OUT_OF_RANGE_TEXT = ['100000000000000000000', '9223372036854775808', '1e308', '-1e308', '99999999999999', '253402300800'];

interface NumericCase {
  /** `POST /v1/chat/completions seed` */
  name: string;
  /** The parameter the 400 must name. */
  param: string;
  send(value: number | string): Promise<Response>;
}

describe('security: every number a request can carry is range-checked', function () {
  this.timeout(300_000);
  let gateway: TestGateway;
  let tenant: Tenant;
  let adminKey: string;
  let session: Session;
  let chatId: string;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway();
    tenant = await gateway.newTenant({ credits: 100 });
    const db = gateway.runtime.db;
    adminKey = (await createApiKey(db, { workspaceId: tenant.workspaceId, name: 'admin', role: 'admin', kind: 'admin', actor: 'test' })).key;
    // A member of the same workspace in the Playground.
    const user = await createUser(db, { email: uniqueEmail('numbers'), password: PASSWORD, verified: true, actor: 'test' });
    await addMember(db, { workspaceId: tenant.workspaceId, userId: user.id, role: 'developer', actor: 'test' });
    session = sessionFor(gateway.url, user.email, `${SESSION_COOKIE}=${(await createSession(db, user.id)).token}`);
    chatId = (await session.json('POST', '/api/playground/chats', { model: 'sim-chat' })).body.id;
  });
  after(() => gateway?.stop());

  const json = (path: string, body: (v: number | string) => Record<string, unknown>, key?: () => string) => (v: number | string) =>
    fetch(`${gateway.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key ? key() : tenant.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body(v)) });
  const query = (path: string, name: string, extra = '', key?: () => string) => (v: number | string) =>
    fetch(`${gateway.url}${path}?${name}=${encodeURIComponent(String(v))}${extra}`, { headers: { authorization: `Bearer ${key ? key() : tenant.key}` } });
  const messages = [{ role: 'user', content: 'Hello' }];
  const admin = () => adminKey;

  const bodyCases: NumericCase[] = [
    ...['max_tokens', 'max_completion_tokens', 'n', 'seed', 'temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'top_logprobs'].map((p) => ({
      name: `POST /v1/chat/completions ${p}`, param: p,
      send: json('/v1/chat/completions', (v) => ({ model: 'sim-chat', messages, [p]: v, ...(p === 'top_logprobs' ? { logprobs: true } : {}) })),
    })),
    { name: 'POST /v1/chat/completions logit_bias', param: 'logit_bias[42]', send: json('/v1/chat/completions', (v) => ({ model: 'sim-chat', messages, logit_bias: { 42: v } })) },
    ...['max_tokens', 'n', 'best_of', 'logprobs', 'seed', 'temperature'].map((p) => ({
      name: `POST /v1/completions ${p}`, param: p, send: json('/v1/completions', (v) => ({ model: 'sim-chat', prompt: 'Hello', [p]: v })),
    })),
    // Token-id prompts are refused whatever the ids (every model here takes text).
    { name: 'POST /v1/completions prompt token id', param: 'prompt', send: json('/v1/completions', (v) => ({ model: 'sim-chat', prompt: [v] })) },
    ...['max_output_tokens', 'temperature', 'top_p'].map((p) => ({
      name: `POST /v1/responses ${p}`, param: p, send: json('/v1/responses', (v) => ({ model: 'sim-chat', input: 'Hello', [p]: v })),
    })),
    { name: 'POST /v1/embeddings dimensions', param: 'dimensions', send: json('/v1/embeddings', (v) => ({ model: 'sim-embed', input: 'Hello', dimensions: v })) },
    { name: 'POST /v1/embeddings token id', param: 'input[0]', send: json('/v1/embeddings', (v) => ({ model: 'sim-embed', input: [v] })) },
    { name: 'POST /v1/embeddings token id (lists)', param: 'input[1][0]', send: json('/v1/embeddings', (v) => ({ model: 'sim-embed', input: [[1], [v]] })) },
    ...['n', 'seed', 'output_compression', 'partial_images'].map((p) => ({
      name: `POST /v1/images/generations ${p}`, param: p, send: json('/v1/images/generations', (v) => ({ model: 'sim-image', prompt: 'A cat', [p]: v })),
    })),
    { name: 'POST /v1/audio/speech speed', param: 'speed', send: json('/v1/audio/speech', (v) => ({ model: 'sim-tts', voice: 'alloy', input: 'Hello', speed: v })) },
    ...['duration', 'seed'].map((p) => ({
      name: `POST /v1/music/generations ${p}`, param: p, send: json('/v1/music/generations', (v) => ({ model: 'sim-music', prompt: 'A tune', [p]: v })),
    })),
    ...['duration', 'duration_seconds', 'n', 'seed'].map((p) => ({
      name: `POST /v1/videos/generations ${p}`, param: p, send: json('/v1/videos/generations', (v) => ({ model: 'sim-video', prompt: 'A cat', [p]: v })),
    })),
    { name: 'POST /v1/videos seconds', param: 'seconds', send: json('/v1/videos', (v) => ({ model: 'sim-video', prompt: 'A cat', seconds: v })) },
    ...['rpm', 'daily_tokens', 'cost_cap'].map((p) => ({
      name: `POST /v1/organization/api_keys ${p}`, param: p, send: json('/v1/organization/api_keys', (v) => ({ name: 'k', [p]: v }), admin),
    })),
    ...['seed', 'max_tokens'].map((p) => ({
      name: `POST /api/playground/chats/:id/messages params.${p}`, param: p,
      send: async (v: number | string) => session.fetch(`/api/playground/chats/${chatId}/messages`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'Hello', params: { [p]: v } }),
      }),
    })),
    ...['credits', 'percent'].map((t) => ({
      name: `POST /v1/budget/alerts threshold (${t})`, param: 'threshold',
      send: json('/v1/budget/alerts', (v) => ({ threshold_type: t, threshold: v, channels: { email: { to: ['ops@example.com'] } } })),
    })),
  ];

  const queryCases: NumericCase[] = [
    ...['start_time', 'end_time'].flatMap((p) => ['/v1/organization/usage/completions', '/v1/organization/costs'].map((path) => ({
      name: `GET ${path} ${p}`, param: p, send: query(path, p, '', admin),
    }))),
    { name: 'GET /v1/files limit', param: 'limit', send: query('/v1/files', 'limit') },
    { name: 'GET /v1/videos limit', param: 'limit', send: query('/v1/videos', 'limit') },
    { name: 'GET /v1/responses/{id}/input_items limit', param: 'limit', send: query('/v1/responses/resp_x/input_items', 'limit') },
  ];

  it('a number out of range in a body is a 400 naming it, never a 500', async () => {
    const failures: string[] = [];
    for (const c of bodyCases) {
      for (const [label, value] of OUT_OF_RANGE) {
        const res = await c.send(value);
        const error = ((await res.json().catch(() => null)) as { error?: { type?: string; param?: string; message?: string } } | null)?.error;
        if (res.status !== 400 || error?.type !== 'invalid_request_error' || error.param !== c.param) failures.push(`${c.name} = ${label}: ${res.status} ${JSON.stringify(error)}`);
      }
    }
    expect(failures).to.deep.equal([]);
  });

  it('a number out of range in a query is a 400 naming it, never a 500', async () => {
    const failures: string[] = [];
    for (const c of queryCases) {
      for (const value of OUT_OF_RANGE_TEXT) {
        const res = await c.send(value);
        const error = ((await res.json().catch(() => null)) as { error?: { type?: string; param?: string } } | null)?.error;
        if (res.status !== 400 || error?.type !== 'invalid_request_error' || error.param !== c.param) failures.push(`${c.name} = ${value}: ${res.status} ${JSON.stringify(error)}`);
      }
    }
    expect(failures).to.deep.equal([]);
  });

  it('stored and charged nothing', async () => {
    const db = gateway.runtime.db;
    expect(await db('credit_ledger').where({ workspace_id: tenant.workspaceId }).whereNot({ kind: 'topup' }), 'ledger').to.deep.equal([]);
    expect(await db('usage_records').where({ workspace_id: tenant.workspaceId }), 'usage').to.deep.equal([]);
    expect(await db('video_jobs').where({ workspace_id: tenant.workspaceId }), 'video jobs').to.deep.equal([]);
    expect(await db('api_keys').where({ workspace_id: tenant.workspaceId }).pluck('name'), 'keys').to.have.members(['test', 'admin']);
    expect(await db('budget_alerts').where({ workspace_id: tenant.workspaceId }), 'alerts').to.deep.equal([]);
    expect(await db('playground_messages').where({ chat_id: chatId }), 'Playground messages').to.deep.equal([]);
  });
});
