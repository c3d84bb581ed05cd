import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { SmtpSink } from '../support/notification-sinks';
import { freePort } from '../../stack/processes';
import { invitedMember, signUp, type Session } from '../support/people';
import { newChat, settledChat } from '../support/playground';
import { creditsToMicro } from '../../core/money';
import { ApiKeyIdKey, RequestIdKey } from '../../workflows/contracts';

describe('Playground API: chats, receipts, sharing and roles', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  let smtp: SmtpSink;
  let base: string;
  let owner: Session;
  let teammate: Session & { userId: string };
  let third: Session & { userId: string };
  let viewer: Session & { userId: string };

  before(async function () {
    this.timeout(180_000);
    smtp = new SmtpSink(await freePort());
    await smtp.start();
    gateway = await startTestGateway({ env: { SMTP_URL: smtp.url, CAPTCHA_MAX_COUNTER: '400' } });
    base = gateway.url;
    owner = await signUp(base, smtp, 'olga');
    teammate = await invitedMember(base, smtp, owner, 'tom', 'developer');
    third = await invitedMember(base, smtp, owner, 'tess', 'developer');
    viewer = await invitedMember(base, smtp, owner, 'vic', 'viewer');
  });
  after(async () => {
    await gateway?.stop();
    await smtp?.stop();
  });

  it('runs a message through the request workflow and shows a receipt equal to the ledger and to an API call', async () => {
    const chat = await newChat(owner, { model: 'sim-chat', system_prompt: 'Answer briefly.' });
    const sent = await owner.json('POST', `/api/playground/chats/${chat.id}/messages`, { content: 'Explain **durable** runs' });
    expect(sent.status).to.equal(202);
    expect(sent.body.assistant).to.include({ status: 'running', role: 'assistant' });

    const settled = await settledChat(owner, chat.id);
    const reply = settled.messages[1];
    expect(reply.status).to.equal('completed');
    expect(reply.content).to.match(/^Simulated reply to .*durable/);
    expect(settled.title, 'a short title, markdown removed').to.equal('Explain durable runs');
    const ledger = await gateway.runtime.db('credit_ledger').where({ request_id: reply.request_id, kind: 'settle' }).sum({ total: 'amount_micro' }).first();
    expect(creditsToMicro(reply.receipt.credits)).to.equal(-Number(ledger?.total)).and.to.be.greaterThan(0);
    expect(reply.receipt).to.include({ modelUsed: 'sim-chat', fallbackDepth: 0, status: 'succeeded' });
    expect(reply.receipt.ledger.map((l: any) => l.kind)).to.include.members(['reserve', 'settle']);
    expect(settled.total_credits).to.equal(reply.receipt.credits);
    const usage = await gateway.runtime.db('usage_records').where({ request_id: reply.request_id }).first();
    expect(usage).to.include({ api_key_id: null, endpoint: 'chat.completions' });
    // Operators search runs by key: a member's Playground run has none (a session is not a key).
    const run = await gateway.runtime.temporal.client.workflow.getHandle(`req-${reply.request_id}`).describe();
    expect(run.typedSearchAttributes.get(ApiKeyIdKey)).to.equal(undefined);
    expect(run.typedSearchAttributes.get(RequestIdKey)).to.equal(reply.request_id);

    // The same request through the API with a key costs the same, in the same ledger.
    const key = await owner.json('POST', '/v1/organization/api_keys', { name: 'same', preset: 'custom' });
    const api = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key.body.value}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'system', content: 'Answer briefly.' }, { role: 'user', content: 'Explain **durable** runs' }] }),
    });
    expect(api.status).to.equal(200);
    expect(Number(api.headers.get('x-credits-used'))).to.equal(reply.receipt.credits);

    const timeline = await owner.json('GET', `/api/playground/messages/${reply.id}/timeline`);
    expect(timeline.body.data.map((s: any) => s.step)).to.include.members(['started', 'held', 'called', 'settled', 'completed']);
  });

  it('validates parameters by the model and edits-and-resends from a message', async () => {
    const chat = await newChat(owner);
    const bad = await owner.json('POST', `/api/playground/chats/${chat.id}/messages`, { content: 'hi', params: { temperature: 'hot' } });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.type).to.equal('invalid_request_error');
    expect((await settledChat(owner, chat.id)).messages).to.deep.equal([]);

    await owner.json('POST', `/api/playground/chats/${chat.id}/messages`, { content: 'first try' });
    const first = await settledChat(owner, chat.id);
    await owner.json('POST', `/api/playground/chats/${chat.id}/messages`, { content: 'second try', from: first.messages[0].id, params: { response_format: { type: 'json_object' } } });
    const edited = await settledChat(owner, chat.id);
    expect(edited.messages.map((m: any) => m.content[0] === '{' ? 'json' : m.content)).to.deep.equal(['second try', 'json']);
    expect(JSON.parse(edited.messages[1].content).answer).to.match(/second try/);
  });

  it('shares a chat with a named teammate, whom the third member cannot join, and revokes it', async () => {
    const chat = await newChat(owner);
    await owner.json('POST', `/api/playground/chats/${chat.id}/messages`, { content: 'our plan' });
    await settledChat(owner, chat.id);
    expect((await teammate.json('GET', `/api/playground/chats/${chat.id}`)).status).to.equal(404);

    const shared = await owner.json('PUT', `/api/playground/chats/${chat.id}/sharing`, { visibility: 'private', members: [{ user_id: teammate.userId, access: 'read' }] });
    expect(shared.status).to.equal(200);
    const read = await teammate.json('GET', `/api/playground/chats/${chat.id}`);
    expect(read.status).to.equal(200);
    expect(read.body.messages[1].content).to.match(/our plan/);
    expect(read.body.access).to.equal('read');
    expect((await teammate.json('POST', `/api/playground/chats/${chat.id}/messages`, { content: 'me too' })).status).to.equal(403);
    expect((await third.json('GET', `/api/playground/chats/${chat.id}`)).status).to.equal(404);
    expect((await third.json('GET', '/api/playground/chats')).body.data.map((c: any) => c.id)).to.not.include(chat.id);

    await owner.json('PUT', `/api/playground/chats/${chat.id}/sharing`, { visibility: 'private', members: [] });
    expect((await teammate.json('GET', `/api/playground/chats/${chat.id}`)).status).to.equal(404);
  });

  it('lets a Viewer read a chat shared with the workspace, never send in it', async () => {
    const chat = await newChat(owner);
    await owner.json('PUT', `/api/playground/chats/${chat.id}/sharing`, { visibility: 'workspace', workspace_access: 'continue' });
    expect((await viewer.json('GET', `/api/playground/chats/${chat.id}`)).status).to.equal(200);
    const refused = await viewer.json('POST', `/api/playground/chats/${chat.id}/messages`, { content: 'spend' });
    expect(refused.status).to.equal(403);
    expect(refused.body.error.code).to.equal('role_cannot_use_models');
    expect((await viewer.json('POST', '/api/playground/chats', { model: 'sim-chat' })).status).to.equal(403);
    // A developer may continue it, spending the workspace's credits.
    expect((await third.json('POST', `/api/playground/chats/${chat.id}/messages`, { content: 'continuing' })).status).to.equal(202);
    await settledChat(third, chat.id);
  });

  it('keeps attached files with the chat: used by the model, readable by exactly who reads the chat', async () => {
    const chat = await newChat(owner);
    const png = await import('sharp').then((m) => m.default({ create: { width: 8, height: 6, channels: 3, background: '#f00' } }).png().toBuffer());
    const file = await owner.json('POST', `/api/playground/chats/${chat.id}/files`, { filename: 'red.png', content_type: 'image/png', data: png.toString('base64') });
    expect(file.status).to.equal(201);
    await owner.json('POST', `/api/playground/chats/${chat.id}/messages`, { content: 'What is this?', files: [file.body.id] });
    const settled = await settledChat(owner, chat.id);
    expect(settled.messages[1].content).to.match(/I see 1 image: a 8x6 PNG image/);
    expect((await owner.fetch(`/api/playground/files/${file.body.id}`)).status).to.equal(200);
    expect((await third.fetch(`/api/playground/files/${file.body.id}`)).status).to.equal(404);
    const apiFiles = await owner.json('GET', '/v1/files');
    expect((apiFiles.body?.data ?? []).map((f: any) => f.id)).to.not.include(file.body.id);
  });

  it('generates an image into the chat, and bookmarks chats and messages', async () => {
    const chat = await newChat(owner, { model: 'sim-chat', title: 'Pictures' });
    expect((await owner.json('POST', `/api/playground/chats/${chat.id}/images`, { model: 'sim-image', prompt: 'a red fox', size: '256x256' })).status).to.equal(202);
    const settled = await settledChat(owner, chat.id);
    const image = settled.messages[1];
    expect(image).to.include({ kind: 'image', status: 'completed' });
    expect(image.receipt.credits).to.be.greaterThan(0);
    const bytes = await owner.fetch(`/api/playground/files/${image.files[0]}`);
    expect(bytes.headers.get('content-type')).to.equal('image/png');

    await owner.json('PUT', `/api/playground/chats/${chat.id}/bookmark`);
    await owner.json('PUT', `/api/playground/chats/${chat.id}/messages/${image.id}/bookmark`);
    const marks = await owner.json('GET', '/api/playground/bookmarks');
    expect(marks.body.data.filter((m: any) => m.chat_id === chat.id).map((m: any) => m.message_id)).to.have.members([null, image.id]);
    expect((await owner.json('GET', '/api/playground/chats')).body.data[0].id).to.equal(chat.id);
    expect((await owner.json('GET', '/api/playground/chats?search=Pictures')).body.data.map((c: any) => c.id)).to.deep.equal([chat.id]);
  });
});
