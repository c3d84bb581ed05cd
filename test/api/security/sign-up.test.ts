/**
 * Who may come in: SIGNUP_MODE (open, invite-only, closed) and the allowed e-mail domains; a workspace made
 * at sign-up gets its plan's credits only once the address is confirmed, and nothing is spent before (a
 * key or a session of it is refused with 403 `email_not_verified`).
 */
import { expect } from 'chai';
import { SESSION_COOKIE } from '../../../api/http/session';
import { cycleOf } from '../../../domain/billing-cycle';
import { createSession, createUser, userByEmail } from '../../../domain/accounts';
import { getBalance } from '../../../domain/ledger';
import { createWorkspaceWithOwner, workspacesOfUser } from '../../../domain/members';
import { grantCycleBatch } from '../../../domain/plan-grants';
import { createApiKey } from '../../../domain/workspaces';
import { freePort } from '../../../stack/processes';
import { startTestGateway, type TestGateway } from '../../support/gateway';
import { SmtpSink } from '../../support/notification-sinks';
import { PASSWORD, cookieOf, linkFromMail, post, sessionFor, solvedCaptcha, uniqueEmail, type Session } from '../../support/people';

type ErrorBody = { error: { type: string; code: string; param: string | null; message: string } };

/** An owner made the way the CLI makes one (confirmed), with a session in their workspace. */
async function ownerSession(gateway: TestGateway, name: string): Promise<Session & { workspaceId: string }> {
  const db = gateway.runtime.db;
  const user = await createUser(db, { email: uniqueEmail(name), password: PASSWORD, verified: true, actor: 'test' });
  const workspace = await createWorkspaceWithOwner(db, { name: `${name}'s workspace`, userId: user.id });
  const { token } = await createSession(db, user.id);
  return { ...sessionFor(gateway.url, user.email, `${SESSION_COOKIE}=${token}`), workspaceId: workspace.id };
}

async function signUpBody(base: string, body: Record<string, unknown>): Promise<Response> {
  return post(base, '/api/auth/signup', { password: PASSWORD, altcha: await solvedCaptcha(base), ...body });
}

describe('security: who may sign up', function () {
  this.timeout(180_000);
  let smtp: SmtpSink;
  before(async () => {
    smtp = new SmtpSink(await freePort());
    await smtp.start();
  });
  after(() => smtp?.stop());

  describe('open (the default): the plan grant waits for the confirmed address, and nothing is spent before it', () => {
    let gateway: TestGateway;
    before(async function () {
      this.timeout(180_000);
      gateway = await startTestGateway({ env: { SMTP_URL: smtp.url, CAPTCHA_MAX_COUNTER: '400' } });
    });
    after(() => gateway?.stop());

    it('says who may sign up', async () => {
      const policy = await (await fetch(`${gateway.url}/api/auth/signup-policy`)).json();
      expect(policy).to.deep.equal({ object: 'signup_policy', mode: 'open', allowed_domains: [] });
    });

    it('grants nothing until the address is confirmed; a key or a session of the workspace cannot spend before', async () => {
      const db = gateway.runtime.db;
      const email = uniqueEmail('unconfirmed');
      expect((await signUpBody(gateway.url, { email, name: 'Una' })).status).to.equal(201);
      const user = (await userByEmail(db, email))!;
      const [workspace] = await workspacesOfUser(db, user.id);
      expect(workspace.planId).to.equal('free');
      expect(await db('credit_ledger').where({ workspace_id: workspace.id }), 'no grant yet').to.deep.equal([]);
      expect((await getBalance(db, workspace.id)).totalMicro).to.equal(0);

      // The monthly run passes it by, too.
      const batch = await grantCycleBatch(db, { cycle: cycleOf(new Date()), after: null, limit: 100_000 });
      expect(batch.outcomes.map((o) => o.workspaceId)).to.not.include(workspace.id);

      // An operator's key and a session (however they came to be) are refused before anything is held.
      const key = await createApiKey(db, { workspaceId: workspace.id, name: 'early', role: 'owner', actor: 'test' });
      const chat = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST', headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'Hello' }] }),
      });
      expect(chat.status).to.equal(403);
      expect(((await chat.json()) as ErrorBody).error).to.include({ type: 'permission_error', code: 'email_not_verified' });
      const session = sessionFor(gateway.url, email, `${SESSION_COOKIE}=${(await createSession(db, user.id)).token}`);
      const playground = await session.json('POST', '/api/playground/chats', { model: 'sim-chat' });
      expect(playground.status).to.equal(403);
      expect(playground.body.error.code).to.equal('email_not_verified');
      expect(await db('usage_records').where({ workspace_id: workspace.id }), 'usage').to.deep.equal([]);
      expect(await db('reservations').where({ workspace_id: workspace.id }), 'holds').to.deep.equal([]);

      // Confirmed: the plan's credits arrive, and the same key spends.
      const link = await linkFromMail(smtp, email, '/verify?token=');
      expect((await post(gateway.url, '/api/auth/verify', { token: link.searchParams.get('token') })).status).to.equal(200);
      expect((await getBalance(db, workspace.id)).planMicro).to.equal(500_000_000);
      const grants = await db('credit_ledger').where({ workspace_id: workspace.id, kind: 'grant' });
      expect(grants).to.have.length(1);
      const served = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST', headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'Hello' }] }),
      });
      expect(served.status).to.equal(200);
      expect((await session.json('POST', '/api/playground/chats', { model: 'sim-chat' })).status).to.equal(201);

      // Confirming again (a reset link also proves the address) grants nothing more.
      expect((await post(gateway.url, '/api/auth/forgot', { email })).status).to.equal(202);
      const reset = await linkFromMail(smtp, email, '/reset?token=');
      expect((await post(gateway.url, '/api/auth/reset', { token: reset.searchParams.get('token'), password: 'another long password' })).status).to.equal(200);
      expect(await db('credit_ledger').where({ workspace_id: workspace.id, kind: 'grant' })).to.have.length(1);
    });
  });

  describe('invite-only, at allowed domains', () => {
    let gateway: TestGateway;
    before(async function () {
      this.timeout(180_000);
      gateway = await startTestGateway({ worker: false, env: { SMTP_URL: smtp.url, CAPTCHA_MAX_COUNTER: '400', SIGNUP_MODE: 'invite-only', SIGNUP_ALLOWED_DOMAINS: 'Example.com, @corp.example' } });
    });
    after(() => gateway?.stop());

    it('says who may sign up', async () => {
      const policy = await (await fetch(`${gateway.url}/api/auth/signup-policy`)).json();
      expect(policy).to.deep.equal({ object: 'signup_policy', mode: 'invite-only', allowed_domains: ['example.com', 'corp.example'] });
    });

    it('refuses an address at another domain, whatever else the request holds', async () => {
      const res = await signUpBody(gateway.url, { email: 'someone@elsewhere.org' });
      expect(res.status).to.equal(403);
      expect(((await res.json()) as ErrorBody).error).to.include({ type: 'permission_error', code: 'email_domain_not_allowed', param: 'email' });
    });

    it('takes only a person holding an invitation to the address, who joins the inviting workspace and gets none of their own', async () => {
      const db = gateway.runtime.db;
      const owner = await ownerSession(gateway, 'inviter');
      const email = uniqueEmail('invitee');
      expect((await owner.json('POST', '/v1/organization/invites', { email, role: 'developer' })).status).to.equal(201);
      const inviteToken = (await linkFromMail(smtp, email, '/invite?token=')).searchParams.get('token')!;

      const refused = async (body: Record<string, unknown>) => {
        const res = await signUpBody(gateway.url, { email, ...body });
        expect(res.status, JSON.stringify(body)).to.equal(403);
        expect(((await res.json()) as ErrorBody).error).to.include({ code: 'invitation_required', param: 'invite_token' });
      };
      await refused({});
      await refused({ invite_token: 'not-a-token' });
      // Someone else's invitation does not open the door for this address.
      const other = uniqueEmail('other');
      await owner.json('POST', '/v1/organization/invites', { email: other, role: 'viewer' });
      await refused({ invite_token: (await linkFromMail(smtp, other, '/invite?token=')).searchParams.get('token') });
      expect(await userByEmail(db, email), 'no account made').to.equal(null);

      expect((await signUpBody(gateway.url, { email, invite_token: inviteToken })).status).to.equal(201);
      const verify = await linkFromMail(smtp, email, '/verify?token=');
      expect(verify.searchParams.get('invite'), 'the link leads back to the invitation').to.equal(inviteToken);
      const verified = await post(gateway.url, '/api/auth/verify', { token: verify.searchParams.get('token') });
      expect(verified.status).to.equal(200);
      const person = sessionFor(gateway.url, email, cookieOf(verified));
      const user = (await userByEmail(db, email))!;
      expect(await workspacesOfUser(db, user.id), 'no workspace of their own').to.deep.equal([]);
      expect((await person.json('POST', '/api/invites/accept', { token: inviteToken })).body).to.deep.equal({ workspace_id: owner.workspaceId, role: 'developer' });
      expect((await workspacesOfUser(db, user.id)).map((w) => w.id)).to.deep.equal([owner.workspaceId]);

      // A revoked invitation opens nothing either.
      const late = uniqueEmail('late');
      const invite = await owner.json('POST', '/v1/organization/invites', { email: late, role: 'viewer' });
      const lateToken = (await linkFromMail(smtp, late, '/invite?token=')).searchParams.get('token');
      await owner.json('DELETE', `/v1/organization/invites/${invite.body.id}`);
      const res = await signUpBody(gateway.url, { email: late, invite_token: lateToken });
      expect(res.status).to.equal(403);
    });
  });

  describe('closed', () => {
    let gateway: TestGateway;
    before(async function () {
      this.timeout(180_000);
      gateway = await startTestGateway({ worker: false, env: { SMTP_URL: smtp.url, CAPTCHA_MAX_COUNTER: '400', SIGNUP_MODE: 'closed' } });
    });
    after(() => gateway?.stop());

    it('refuses every sign-up, an invited address too; people already in still sign in', async () => {
      const owner = await ownerSession(gateway, 'closed-owner');
      const email = uniqueEmail('shut-out');
      await owner.json('POST', '/v1/organization/invites', { email, role: 'developer' });
      const inviteToken = (await linkFromMail(smtp, email, '/invite?token=')).searchParams.get('token');
      for (const body of [{ email }, { email, invite_token: inviteToken }, { email: owner.email }]) {
        const res = await signUpBody(gateway.url, body);
        expect(res.status).to.equal(403);
        expect(((await res.json()) as ErrorBody).error).to.include({ type: 'permission_error', code: 'signup_closed' });
      }
      expect(await userByEmail(gateway.runtime.db, email)).to.equal(null);
      expect((await post(gateway.url, '/api/auth/signin', { email: owner.email, password: PASSWORD })).status).to.equal(200);
      expect(((await (await fetch(`${gateway.url}/api/auth/signup-policy`)).json()) as { mode: string }).mode).to.equal('closed');
    });
  });

  it('refuses an unknown SIGNUP_MODE or a malformed domain list at boot', async () => {
    const { loadConfig, ConfigError } = await import('../../../config/env');
    expect(() => loadConfig({ SIGNUP_MODE: 'maybe' })).to.throw(ConfigError, /SIGNUP_MODE/);
    expect(() => loadConfig({ SIGNUP_ALLOWED_DOMAINS: 'example.com, not a domain' })).to.throw(ConfigError, /SIGNUP_ALLOWED_DOMAINS/);
    expect(loadConfig({}).signupMode).to.equal('open');
  });
});
