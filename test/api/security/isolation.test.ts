/**
 * Found from outside: another workspace's Playground message is one 404 on every sub-route (timeline,
 * stream, video, stop) that names nothing of the other workspace; a key's stored role never ranks above
 * its creator's role (400 naming it), not only its effective role.
 */
import { expect } from 'chai';
import { playgroundGateway, newChat, settledChat } from '../../support/playground';
import { invitedMember, signUp, type Session } from '../../support/people';
import type { TestGateway } from '../../support/gateway';
import type { SmtpSink } from '../../support/notification-sinks';

type ErrorBody = { error: { type: string; code: string; param: string | null; message: string } };

describe('security: isolation between workspaces and roles', function () {
  this.timeout(180_000);
  let gateway: TestGateway;
  let smtp: SmtpSink;
  let stop: () => Promise<void>;
  before(async function () {
    this.timeout(180_000);
    ({ gateway, smtp, stop } = await playgroundGateway());
  });
  after(() => stop?.());

  describe("another workspace's Playground message", () => {
    let owner: Session;
    let outsider: Session;
    let colleague: Session;
    let chat: { id: string };
    let messageIds: string[];
    let ownerWorkspace: string;
    before(async () => {
      owner = await signUp(gateway.url, smtp, 'pg-owner');
      outsider = await signUp(gateway.url, smtp, 'pg-outsider');
      // A member of the same workspace whose chat is private to its owner.
      colleague = await invitedMember(gateway.url, smtp, owner, 'pg-colleague', 'developer');
      ownerWorkspace = (await owner.json('GET', '/api/me')).body.workspace.id;
      chat = await newChat(owner);
      expect((await owner.json('POST', `/api/playground/chats/${chat.id}/messages`, { content: 'Hello' })).status).to.equal(202);
      const settled = await settledChat(owner, chat.id);
      messageIds = settled.messages.map((m: { id: string }) => m.id);
      expect(messageIds).to.have.length(2);
    });

    const subRoutes = (id: string): Array<[string, string]> => [
      ['GET', `/api/playground/messages/${id}/timeline`],
      ['GET', `/api/playground/messages/${id}/stream`],
      ['GET', `/api/playground/messages/${id}/video`],
      ['POST', `/api/playground/messages/${id}/stop`],
    ];

    it('is the 404 of a message that does not exist, on every sub-route, naming only the id asked for', async () => {
      const missing = 'msg_doesnotexist0000000000';
      for (const [reader, label] of [[outsider, 'another workspace'], [colleague, 'a private chat of the same workspace']] as const) {
        for (const id of messageIds) {
          for (const [index, [method, path]] of subRoutes(id).entries()) {
            const res = await reader.fetch(path, { method });
            const body = (await res.json()) as ErrorBody;
            expect(res.status, `${label}: ${method} ${path}`).to.equal(404);
            expect(body.error).to.include({ type: 'not_found_error', code: 'message_not_found' });
            const text = JSON.stringify(body);
            for (const secret of [chat.id, ownerWorkspace]) expect(text, `${label}: ${method} ${path}`).to.not.include(secret);
            const [, missingPath] = subRoutes(missing)[index];
            const unknown = (await (await reader.fetch(missingPath, { method })).json()) as ErrorBody;
            expect(body.error.message.replace(id, '<id>')).to.equal(unknown.error.message.replace(missing, '<id>'));
          }
        }
      }
      // The owner still reads them.
      expect((await owner.fetch(`/api/playground/messages/${messageIds[1]}/timeline`)).status).to.equal(200);
    });
  });

  describe("a key's role", () => {
    it('may not rank above its creator: a 400 naming the role, nothing stored', async () => {
      const owner = await signUp(gateway.url, smtp, 'role-owner');
      const developer = await invitedMember(gateway.url, smtp, owner, 'role-dev', 'developer');
      for (const role of ['owner', 'admin']) {
        const res = await developer.json('POST', '/v1/organization/api_keys', { name: `too-high-${role}`, role });
        expect(res.status, role).to.equal(400);
        expect((res.body as ErrorBody).error).to.include({ type: 'invalid_request_error', param: 'role', code: 'role_above_creator' });
        expect((res.body as ErrorBody).error.message).to.include("'developer'").and.include(`'${role}'`);
      }
      const names = await gateway.runtime.db('api_keys').where({ created_by_user_id: developer.userId }).pluck('name');
      expect(names).to.deep.equal([]);
      // Up to their own role is fine, and stored as asked.
      for (const role of ['developer', 'viewer']) {
        const res = await developer.json('POST', '/v1/organization/api_keys', { name: `ok-${role}`, role });
        expect(res.status, role).to.equal(201);
        expect(res.body.role).to.equal(role);
      }
      // An admin key carries its creator's rank: an admin's admin key may not make an owner key.
      const admin = await invitedMember(gateway.url, smtp, owner, 'role-admin', 'admin');
      const adminKey = (await admin.json('POST', '/v1/organization/admin_api_keys', { name: 'automation' })).body.value as string;
      const viaKey = await fetch(`${gateway.url}/v1/organization/api_keys`, {
        method: 'POST', headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'owner-by-key', role: 'owner' }),
      });
      expect(viaKey.status).to.equal(400);
      expect(((await viaKey.json()) as ErrorBody).error).to.include({ param: 'role', code: 'role_above_creator' });
      const stored = await gateway.runtime.db('api_keys').where({ workspace_id: (await owner.json('GET', '/api/me')).body.workspace.id, role: 'owner' }).pluck('name');
      expect(stored).to.deep.equal([]);
    });
  });
});
