/**
 * The request log (`GET /v1/organization/requests`): every API and Playground request of the workspace,
 * newest first, with key names and members; each filter, lookup by request id and the client's X-Request-Id,
 * cursor pages, CSV, bad parameters as 400s naming them, and role scoping (a Developer sees their own
 * keys' and Playground requests; a Viewer none; another workspace nothing).
 */
import { expect } from 'chai';
import { freePort } from '../../stack/processes';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { SmtpSink } from '../support/notification-sinks';
import { invitedMember, signUp, type Session } from '../support/people';

const json = { 'content-type': 'application/json' };

describe('the request log', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  let smtp: SmtpSink;
  let owner: Session;
  let dev: Session & { userId: string };
  let viewer: Session;
  let ownerKey: { id: string; value: string };
  let devKey: { id: string; value: string };
  const ids: Record<string, string> = {};

  const call = async (key: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { ...json, authorization: `Bearer ${key}`, ...headers }, body: JSON.stringify(body) });
    await res.arrayBuffer();
    return res;
  };
  const log = async (who: Session, query = '') => (await who.json('GET', `/v1/organization/requests${query}`)) as { status: number; body: any };

  before(async function () {
    this.timeout(240_000);
    smtp = new SmtpSink(await freePort());
    await smtp.start();
    gateway = await startTestGateway({ env: { SMTP_URL: smtp.url, CAPTCHA_MAX_COUNTER: '400' } });
    owner = await signUp(gateway.url, smtp, 'olga');
    dev = await invitedMember(gateway.url, smtp, owner, 'dora', 'developer');
    viewer = await invitedMember(gateway.url, smtp, owner, 'vic', 'viewer');
    const made = (await owner.json('POST', '/v1/organization/api_keys', { name: 'backend', preset: 'custom' })).body;
    ownerKey = { id: made.id, value: made.value };
    const devMade = (await dev.json('POST', '/v1/organization/api_keys', { name: 'dora-laptop', preset: 'custom' })).body;
    devKey = { id: devMade.id, value: devMade.value };

    ids.chat = (await call(ownerKey.value, '/v1/chat/completions', { model: 'sim-chat', messages: [{ role: 'user', content: 'hello log' }] }, { 'x-request-id': 'client-trace-42' })).headers.get('x-request-id')!;
    ids.embeddings = (await call(ownerKey.value, '/v1/embeddings', { model: 'sim-embed', input: 'vectors please' })).headers.get('x-request-id')!;
    const failed = await call(ownerKey.value, '/v1/chat/completions', { model: 'sim-chat', messages: [{ role: 'user', content: 'fail' }] }, { 'x-simulate-failure': '400' });
    expect(failed.status).to.equal(400);
    ids.failed = failed.headers.get('x-request-id')!;
    ids.dev = (await call(devKey.value, '/v1/chat/completions', { model: 'sim-chat-mini', messages: [{ role: 'user', content: 'from dora' }] })).headers.get('x-request-id')!;
    const devChat = (await dev.json('POST', '/api/playground/chats', { model: 'sim-chat' })).body;
    await dev.json('POST', `/api/playground/chats/${devChat.id}/messages`, { content: 'playground question' });
    // Playground replies run on: wait until the run is in the books.
    for (let i = 0; i < 100 && (await log(owner)).body.data.length < 5; i++) await new Promise((r) => setTimeout(r, 200));
  });
  after(async () => {
    await gateway?.stop();
    await smtp?.stop();
  });

  it('lists every request of the workspace newest first, with key names, members, tokens, credits and latency', async () => {
    const { status, body } = await log(owner);
    expect(status).to.equal(200);
    expect(body.object).to.equal('list');
    expect(body.data).to.have.length(5);
    const times = body.data.map((r: any) => r.created_at);
    expect(times).to.deep.equal([...times].sort((a: number, b: number) => b - a));
    const chat = body.data.find((r: any) => r.id === ids.chat);
    expect(chat).to.include({ object: 'request_log.entry', endpoint: 'chat.completions', model_requested: 'sim-chat', model_used: 'sim-chat', status: 'succeeded', source: 'api', client_request_id: 'client-trace-42' });
    expect(chat.api_key).to.deep.equal({ id: ownerKey.id, name: 'backend' });
    expect(chat.member.email).to.equal(owner.email);
    expect(chat.input_tokens).to.be.greaterThan(0);
    expect(chat.credits).to.be.greaterThan(0);
    expect(chat.latency_ms).to.be.a('number');
    const failed = body.data.find((r: any) => r.id === ids.failed);
    expect(failed).to.include({ status: 'failed', credits: 0 });
    expect(failed.error_code).to.be.a('string');
    const playground = body.data.find((r: any) => r.source === 'playground');
    expect(playground.api_key).to.equal(null);
    expect(playground.member).to.deep.include({ id: dev.userId, email: dev.email });
  });

  it('filters by model, key, member, status, endpoint, minimum cost and time', async () => {
    const idsOf = async (query: string) => (await log(owner, query)).body.data.map((r: any) => r.id).sort();
    expect(await idsOf('?model=sim-chat-mini')).to.deep.equal([ids.dev]);
    expect(await idsOf(`?api_key_id=${devKey.id}`)).to.deep.equal([ids.dev]);
    expect((await idsOf(`?user_id=${dev.userId}`))).to.have.length(2).and.include(ids.dev);
    expect(await idsOf('?status=failed')).to.deep.equal([ids.failed]);
    expect(await idsOf('?endpoint=embeddings')).to.deep.equal([ids.embeddings]);
    const all = (await log(owner)).body.data;
    const dearest = Math.max(...all.map((r: any) => r.credits));
    expect((await log(owner, `?min_credits=${dearest}`)).body.data.every((r: any) => r.credits >= dearest)).to.equal(true);
    const now = Math.floor(Date.now() / 1000);
    expect(await idsOf(`?start_time=${now + 60}`)).to.deep.equal([]);
    expect(await idsOf(`?start_time=${now - 3600}&end_time=${now + 60}`)).to.have.length(5);
  });

  it("finds a request by its id or by the client's X-Request-Id", async () => {
    expect((await log(owner, `?request_id=${ids.embeddings}`)).body.data.map((r: any) => r.id)).to.deep.equal([ids.embeddings]);
    expect((await log(owner, '?request_id=client-trace-42')).body.data.map((r: any) => r.id)).to.deep.equal([ids.chat]);
    expect((await log(owner, '?request_id=never-sent')).body.data).to.deep.equal([]);
  });

  it('pages with a cursor, and exports the same rows as CSV', async () => {
    const first = (await log(owner, '?limit=2')).body;
    expect(first.data).to.have.length(2);
    expect(first.has_more).to.equal(true);
    const second = (await log(owner, `?limit=2&after=${first.last_id}`)).body;
    const third = (await log(owner, `?limit=2&after=${second.last_id}`)).body;
    expect(third.has_more).to.equal(false);
    const paged = [...first.data, ...second.data, ...third.data].map((r: any) => r.id);
    expect(paged).to.deep.equal((await log(owner)).body.data.map((r: any) => r.id));

    const csv = await owner.fetch('/v1/organization/requests?format=csv');
    expect(csv.status).to.equal(200);
    expect(csv.headers.get('content-type')).to.match(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).to.include('requests.csv');
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines[0]).to.equal('time,request_id,client_request_id,endpoint,model_requested,model_used,fallback_depth,source,api_key,member,status,error_code,input_tokens,output_tokens,credits,latency_ms,key_source');
    expect(lines.slice(1).map((l) => l.split(',')[1])).to.deep.equal(paged);
    expect(lines.find((l) => l.includes(ids.dev))).to.include(',dora-laptop,').and.include(dev.email).and.match(/,platform$/);
  });

  it('answers bad parameters with a 400 naming them', async () => {
    for (const [query, param] of [['?limit=0', 'limit'], ['?limit=1000', 'limit'], ['?start_time=1e20', 'start_time'], ['?status=exploded', 'status'],
      ['?min_credits=-1', 'min_credits'], ['?model=%27%3B%20drop', 'model'], ['?format=xml', 'format'], ['?start_time=200&end_time=100', 'start_time']] as const) {
      const { status, body } = await log(owner, query);
      expect(status, query).to.equal(400);
      expect(body.error.param, query).to.equal(param);
    }
    const { status, body } = await log(owner, '?after=req_unknown');
    expect(status).to.equal(404);
    expect(body.error.code).to.equal('cursor_not_found');
  });

  it('opens one request: its outcome, for those who may see it in the log', async () => {
    const opened = await owner.json('GET', `/v1/organization/requests/${ids.failed}`);
    expect(opened.status).to.equal(200);
    expect(opened.body).to.include({ id: ids.failed, status: 'failed', credits_used: 0 });
    expect(opened.body.error.type).to.equal('invalid_request_error');
    expect((await owner.json('GET', '/v1/organization/requests/client-trace-42')).body.id).to.equal(ids.chat);
    expect((await dev.json('GET', `/v1/organization/requests/${ids.dev}`)).status).to.equal(200);
    expect((await dev.json('GET', `/v1/organization/requests/${ids.chat}`)).status).to.equal(404);
    expect((await owner.json('GET', '/v1/organization/requests/nothing-here')).status).to.equal(404);
  });

  it("shows a Developer only their own keys' and Playground requests, a Viewer nothing, another workspace nothing", async () => {
    const mine = (await log(dev)).body.data;
    expect(mine).to.have.length(2);
    expect(mine.every((r: any) => r.member?.id === dev.userId)).to.equal(true);
    expect((await log(dev, `?api_key_id=${ownerKey.id}`)).body.data).to.deep.equal([]);
    expect((await log(dev, `?request_id=${ids.chat}`)).body.data).to.deep.equal([]);
    expect((await log(viewer)).status).to.equal(403);
    const stranger = await signUp(gateway.url, smtp, 'sam');
    expect((await log(stranger, `?request_id=${ids.chat}`)).body.data).to.deep.equal([]);
    expect((await log(stranger)).body.data).to.deep.equal([]);
  });
});
