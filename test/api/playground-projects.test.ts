/**
 * Playground projects over the API: create, rename, pin, delete; instructions sent as the system message
 * (asserted on what the upstream received); project files readable by exactly the owner and those who can
 * read one of the project's chats; and Playground files counted in the workspace's storage, refused over
 * the limit with the API's own error, and given back when a file, chat or project is deleted.
 */
import { expect } from 'chai';
import { FakeUpstream } from '../support/fake-upstream';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { SmtpSink } from '../support/notification-sinks';
import { freePort } from '../../stack/processes';
import { invitedMember, signUp, type Session } from '../support/people';
import { newChat, settledChat } from '../support/playground';

function chunk(content: string, finish: string | null = null) {
  return { id: 'chatcmpl-p', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content }, finish_reason: finish }] };
}
const reply = {
  sse: [chunk('Bonjour'), chunk('', 'stop'), { id: 'chatcmpl-p', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 } }, '[DONE]'],
};

describe('Playground API: projects, their instructions and files, and the storage quota', function () {
  this.timeout(120_000);
  let upstream: FakeUpstream;
  let gateway: TestGateway;
  let smtp: SmtpSink;
  let owner: Session;
  let teammate: Session & { userId: string };
  let third: Session & { userId: string };

  before(async function () {
    this.timeout(180_000);
    upstream = new FakeUpstream();
    await upstream.start();
    smtp = new SmtpSink(await freePort());
    await smtp.start();
    gateway = await startTestGateway({ env: { SMTP_URL: smtp.url, CAPTCHA_MAX_COUNTER: '400', OPENAI_BASE_URL: `${upstream.url}/v1`, OPENAI_API_KEY: 'sk-upstream' } });
    owner = await signUp(gateway.url, smtp, 'piet');
    teammate = await invitedMember(gateway.url, smtp, owner, 'pam', 'developer');
    third = await invitedMember(gateway.url, smtp, owner, 'pol', 'developer');
  });
  after(async () => {
    await gateway?.stop();
    await smtp?.stop();
    await upstream?.stop();
  });

  const lastSent = () => upstream.received('POST /v1/chat/completions').at(-1)!.json;
  const upload = (s: Session, path: string, filename: string, data: Buffer, contentType = 'text/plain') =>
    s.json('POST', path, { filename, content_type: contentType, data: data.toString('base64') });

  it('creates, renames, pins and deletes a project, which is its owner\'s alone; its chats outlive it', async () => {
    expect((await owner.json('POST', '/api/playground/projects', { name: ' ' })).body.error).to.include({ param: 'name', type: 'invalid_request_error' });
    const b = (await owner.json('POST', '/api/playground/projects', { name: 'Beta' })).body;
    const a = await owner.json('POST', '/api/playground/projects', { name: 'Alpha', instructions: 'Be kind.' });
    expect(a.status).to.equal(201);
    expect(a.body).to.include({ name: 'Alpha', instructions: 'Be kind.', pinned: false });
    expect((await owner.json('GET', '/api/playground/projects')).body.data.map((p: any) => p.name)).to.deep.equal(['Alpha', 'Beta']);

    expect((await owner.json('PATCH', `/api/playground/projects/${b.id}`, { pinned: true })).body).to.include({ name: 'Beta', pinned: true });
    expect((await owner.json('PATCH', `/api/playground/projects/${a.body.id}`, { name: 'Alpha 2' })).body).to.include({ name: 'Alpha 2', instructions: 'Be kind.' });
    expect((await owner.json('GET', '/api/playground/projects')).body.data.map((p: any) => p.name)).to.deep.equal(['Beta', 'Alpha 2']);
    expect((await owner.json('PATCH', `/api/playground/projects/${b.id}`, { pinned: 'yes' })).status).to.equal(400);

    expect((await teammate.json('GET', '/api/playground/projects')).body.data).to.deep.equal([]);
    expect((await teammate.json('GET', `/api/playground/projects/${b.id}`)).status).to.equal(404);
    expect((await teammate.json('PATCH', `/api/playground/projects/${b.id}`, { name: 'Mine' })).status).to.equal(404);
    expect((await teammate.json('DELETE', `/api/playground/projects/${b.id}`)).status).to.equal(404);
    expect((await teammate.json('POST', '/api/playground/chats', { model: 'sim-chat', project_id: b.id })).status).to.equal(404);

    const chat = await newChat(owner, { model: 'sim-chat', project_id: b.id });
    expect((await owner.json('GET', `/api/playground/chats?project_id=${b.id}`)).body.data.map((c: any) => c.id)).to.deep.equal([chat.id]);
    expect((await owner.json('DELETE', `/api/playground/projects/${b.id}`)).body).to.include({ deleted: true });
    expect((await owner.json('GET', `/api/playground/projects/${b.id}`)).status).to.equal(404);
    expect((await owner.json('GET', `/api/playground/chats/${chat.id}`)).body.project_id).to.equal(null);
  });

  it('sends the project\'s instructions, then the chat\'s system prompt, as the system message of every chat in it', async () => {
    upstream.on('POST /v1/chat/completions', reply);
    const project = (await owner.json('POST', '/api/playground/projects', { name: 'French', instructions: 'Always answer in French.' })).body;
    const chat = await newChat(owner, { model: 'gpt-4o-mini', project_id: project.id, system_prompt: 'Be brief.' });
    await owner.json('POST', `/api/playground/chats/${chat.id}/messages`, { content: 'Hello' });
    const settled = await settledChat(owner, chat.id);
    expect(settled.messages[1]).to.include({ status: 'completed', content: 'Bonjour' });
    expect(settled.messages[1].receipt).to.include({ inputTokens: 12, modelUsed: 'gpt-4o-mini' });
    expect(lastSent().messages).to.deep.equal([{ role: 'system', content: 'Always answer in French.\n\nBe brief.' }, { role: 'user', content: 'Hello' }]);

    // Changed instructions apply to the next message; a teammate who may continue the chat sends them too.
    await owner.json('PATCH', `/api/playground/projects/${project.id}`, { instructions: 'Answer in German.' });
    await owner.json('PUT', `/api/playground/chats/${chat.id}/sharing`, { visibility: 'private', members: [{ user_id: teammate.userId, access: 'continue' }] });
    await teammate.json('POST', `/api/playground/chats/${chat.id}/messages`, { content: 'Again' });
    await settledChat(owner, chat.id);
    expect(lastSent().messages[0]).to.deep.equal({ role: 'system', content: 'Answer in German.\n\nBe brief.' });

    // Only the owner moves a chat; out of the project, only its own system prompt is left.
    expect((await teammate.json('PATCH', `/api/playground/chats/${chat.id}`, { project_id: null })).body.error.code).to.equal('not_chat_owner');
    expect((await owner.json('PATCH', `/api/playground/chats/${chat.id}`, { project_id: null })).body.project_id).to.equal(null);
    await owner.json('POST', `/api/playground/chats/${chat.id}/messages`, { content: 'Once more' });
    await settledChat(owner, chat.id);
    expect(lastSent().messages[0]).to.deep.equal({ role: 'system', content: 'Be brief.' });
  });

  it('offers a project\'s files to its chats, readable by the owner and by exactly those who can read one of its chats', async () => {
    upstream.on('POST /v1/chat/completions', reply);
    const project = (await owner.json('POST', '/api/playground/projects', { name: 'Docs' })).body;
    const file = await upload(owner, `/api/playground/projects/${project.id}/files`, 'notes.txt', Buffer.from('The launch is on Tuesday.'));
    expect(file.status).to.equal(201);
    expect(file.body).to.include({ filename: 'notes.txt', project_id: project.id, chat_id: null, bytes: 25 });
    expect((await upload(teammate, `/api/playground/projects/${project.id}/files`, 'x.txt', Buffer.from('x'))).status).to.equal(404);
    expect((await owner.json('GET', `/api/playground/projects/${project.id}`)).body.files.map((f: any) => f.id)).to.deep.equal([file.body.id]);

    const chat = await newChat(owner, { model: 'gpt-4o-mini', project_id: project.id });
    await owner.json('POST', `/api/playground/chats/${chat.id}/messages`, { content: 'When is the launch?', files: [file.body.id] });
    await settledChat(owner, chat.id);
    expect(lastSent().messages.at(-1).content).to.deep.equal([{ type: 'text', text: 'When is the launch?' }, { type: 'text', text: 'File notes.txt:\nThe launch is on Tuesday.' }]);
    const elsewhere = await newChat(owner, { model: 'gpt-4o-mini' });
    expect((await owner.json('POST', `/api/playground/chats/${elsewhere.id}/messages`, { content: 'And?', files: [file.body.id] })).body.error.code).to.equal('file_not_found');

    const readers = async () => Promise.all([owner, teammate, third].map(async (s) => (await s.fetch(`/api/playground/files/${file.body.id}`)).status));
    expect(await readers()).to.deep.equal([200, 404, 404]);
    await owner.json('PUT', `/api/playground/chats/${chat.id}/sharing`, { visibility: 'private', members: [{ user_id: teammate.userId, access: 'read' }] });
    expect(await readers()).to.deep.equal([200, 200, 404]);
    expect(await (await teammate.fetch(`/api/playground/files/${file.body.id}`)).text()).to.equal('The launch is on Tuesday.');
    expect((await teammate.json('GET', `/api/playground/projects/${project.id}`)).body).to.include({ name: 'Docs', owned: false });
    expect((await teammate.json('DELETE', `/api/playground/files/${file.body.id}`)).status).to.equal(403);
    expect((await third.json('GET', `/api/playground/projects/${project.id}/files`)).status).to.equal(404);
    await owner.json('PUT', `/api/playground/chats/${chat.id}/sharing`, { visibility: 'workspace', workspace_access: 'read' });
    expect(await readers()).to.deep.equal([200, 200, 200]);
    await owner.json('PUT', `/api/playground/chats/${chat.id}/sharing`, { visibility: 'private' });
    expect(await readers()).to.deep.equal([200, 404, 404]);

    // Deleted, the file is gone for everyone, and the message that carried it no longer lists it.
    expect((await owner.json('DELETE', `/api/playground/files/${file.body.id}`)).body).to.include({ deleted: true });
    expect(await readers()).to.deep.equal([404, 404, 404]);
    expect((await owner.json('GET', `/api/playground/chats/${chat.id}`)).body.messages[0].files).to.deep.equal([]);
  });

  it('counts Playground files in the workspace\'s storage: refused over the limit as API uploads are, given back on deletion', async () => {
    const workspaceId = (await owner.json('GET', '/api/me')).body.workspace.id;
    const storage = async () => (await owner.json('GET', '/api/playground/storage')).body;
    const before = await storage();
    expect(before.used_bytes).to.be.at.least(before.playground_bytes);
    await gateway.runtime.db('workspaces').where({ id: workspaceId }).update({ storage_limit_bytes: before.used_bytes + 1000 });

    const chat = await newChat(owner);
    const first = await upload(owner, `/api/playground/chats/${chat.id}/files`, 'a.txt', Buffer.alloc(700, 'a'));
    expect(first.status).to.equal(201);
    expect(await storage()).to.include({ used_bytes: before.used_bytes + 700, playground_bytes: before.playground_bytes + 700 });
    const apiKey = (await owner.json('POST', '/v1/organization/api_keys', { name: 'files', preset: 'custom' })).body.value;
    const apiFetch = (path: string, init: RequestInit = {}) => fetch(`${gateway.url}${path}`, { ...init, headers: { authorization: `Bearer ${apiKey}` } });
    const listed = await apiFetch('/v1/files');
    expect(listed.status).to.equal(200);
    expect(Number(listed.headers.get('x-storage-used-bytes'))).to.equal(before.used_bytes + 700);

    const refused = await upload(owner, `/api/playground/chats/${chat.id}/files`, 'b.txt', Buffer.alloc(400, 'b'));
    expect(refused.status).to.equal(413);
    expect(refused.body.error).to.include({ type: 'invalid_request_error', code: 'storage_limit_exceeded' });
    expect(refused.body.error.message).to.match(/does not fit in the workspace's storage/);
    const project = (await owner.json('POST', '/api/playground/projects', { name: 'Full' })).body;
    expect((await upload(owner, `/api/playground/projects/${project.id}/files`, 'b.txt', Buffer.alloc(400, 'b'))).body.error.code).to.equal('storage_limit_exceeded');
    // The API's own upload sees the same storage.
    const form = new FormData();
    form.append('purpose', 'user_data');
    form.append('file', new Blob([Buffer.alloc(400, 'c')], { type: 'text/plain' }), 'c.txt');
    const apiUpload = await apiFetch('/v1/files', { method: 'POST', body: form });
    expect(apiUpload.status).to.equal(413);
    expect(((await apiUpload.json()) as any).error.code).to.equal('storage_limit_exceeded');

    // A generation does not start when no storage is left.
    await gateway.runtime.db('workspaces').where({ id: workspaceId }).update({ storage_limit_bytes: before.used_bytes + 700 });
    const image = await owner.json('POST', `/api/playground/chats/${chat.id}/images`, { model: 'sim-image', prompt: 'a fox', size: '256x256' });
    expect(image.status).to.equal(413);
    expect(image.body.error.code).to.equal('storage_limit_exceeded');
    expect((await settledChat(owner, chat.id)).messages).to.deep.equal([]);

    // Deleting the file, or the chat holding it, gives the space back.
    await gateway.runtime.db('workspaces').where({ id: workspaceId }).update({ storage_limit_bytes: before.used_bytes + 1000 });
    expect((await owner.json('DELETE', `/api/playground/files/${first.body.id}`)).status).to.equal(200);
    expect((await storage()).used_bytes).to.equal(before.used_bytes);
    const second = await upload(owner, `/api/playground/chats/${chat.id}/files`, 'b.txt', Buffer.alloc(900, 'b'));
    expect(second.status).to.equal(201);
    const key = (await gateway.runtime.db('playground_files').where({ id: second.body.id }).first()).storage_key;
    expect(await gateway.runtime.storage.exists(key)).to.equal(true);
    await owner.json('DELETE', `/api/playground/chats/${chat.id}`);
    expect((await storage()).used_bytes).to.equal(before.used_bytes);
    expect(await gateway.runtime.storage.exists(key)).to.equal(false);

    // And so does deleting a project with its files.
    const projectFile = await upload(owner, `/api/playground/projects/${project.id}/files`, 'p.txt', Buffer.alloc(900, 'p'));
    expect(projectFile.status).to.equal(201);
    expect((await storage()).used_bytes).to.equal(before.used_bytes + 900);
    await owner.json('DELETE', `/api/playground/projects/${project.id}`);
    expect(await storage()).to.deep.include({ used_bytes: before.used_bytes, playground_bytes: before.playground_bytes });
  });
});
