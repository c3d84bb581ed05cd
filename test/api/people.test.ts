import { expect } from 'chai';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { SmtpSink } from '../support/notification-sinks';
import { freePort } from '../../stack/processes';
import http from 'node:http';

function rawPost(url: string, headers: Record<string, string>, body: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
import { PASSWORD, cookieOf, invitedMember, linkFromMail, post, sessionFor, signUp, solvedCaptcha, uniqueEmail, type Session } from '../support/people';

describe('people: accounts, sessions, members, invitations and keys', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  let smtp: SmtpSink;
  let base: string;
  before(async function () {
    this.timeout(180_000);
    smtp = new SmtpSink(await freePort());
    await smtp.start();
    gateway = await startTestGateway({ env: { SMTP_URL: smtp.url, CAPTCHA_MAX_COUNTER: '400' } });
    base = gateway.url;
  });
  after(async () => {
    await gateway?.stop();
    await smtp?.stop();
  });

  const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0 });
  const chat = (key: string) => openai(key).chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] });

  describe('sign-up and sign-in', () => {
    it('signs up with a solved CAPTCHA, verifies by e-mail, and lands in an own workspace with credits', async () => {
      const owner = await signUp(base, smtp, 'ada');
      const me = await owner.json('GET', '/api/me');
      expect(me.status).to.equal(200);
      expect(me.body.user.email).to.equal(owner.email);
      expect(me.body.workspace).to.include({ role: 'owner', plan: 'free' });
      expect(me.body.workspace.permissions).to.include('members.manage');
      const balance = await owner.json('GET', '/v1/billing/balance');
      expect(balance.body.plan_credits).to.equal(500);
    });

    it('refuses a missing, wrong or replayed CAPTCHA', async () => {
      const email = uniqueEmail('bot');
      const missing = await post(base, '/api/auth/signup', { email, password: PASSWORD });
      expect(missing.status).to.equal(400);
      expect(((await missing.json()) as any).error).to.include({ code: 'captcha_failed', param: 'altcha' });
      const solved = await solvedCaptcha(base);
      const tampered = JSON.parse(Buffer.from(solved, 'base64').toString());
      tampered.solution.derivedKey = tampered.solution.derivedKey.replace(/.$/, (c: string) => (c === '0' ? '1' : '0'));
      const wrong = await post(base, '/api/auth/signup', { email, password: PASSWORD, altcha: Buffer.from(JSON.stringify(tampered)).toString('base64') });
      expect(wrong.status).to.equal(400);
      expect((await post(base, '/api/auth/signup', { email, password: PASSWORD, altcha: solved })).status).to.equal(201);
      const replay = await post(base, '/api/auth/signup', { email: uniqueEmail('bot'), password: PASSWORD, altcha: solved });
      expect(replay.status).to.equal(400);
      expect(((await replay.json()) as any).error.message).to.match(/already used/);
    });

    it('keeps unverified accounts out, and signs in with the password once verified', async () => {
      const email = uniqueEmail('bob');
      await post(base, '/api/auth/signup', { email, password: PASSWORD, altcha: await solvedCaptcha(base) });
      const early = await post(base, '/api/auth/signin', { email, password: PASSWORD });
      expect(early.status).to.equal(403);
      expect(((await early.json()) as any).error.code).to.equal('email_not_verified');
      const link = await linkFromMail(smtp, email, '/verify?token=');
      expect((await post(base, '/api/auth/verify', { token: link.searchParams.get('token') })).status).to.equal(200);
      expect((await post(base, '/api/auth/verify', { token: link.searchParams.get('token') })).status, 'a link works once').to.equal(400);
      const wrong = await post(base, '/api/auth/signin', { email, password: 'not the password' });
      expect(wrong.status).to.equal(401);
      const ok = await post(base, '/api/auth/signin', { email: email.toUpperCase(), password: PASSWORD });
      expect(ok.status).to.equal(200);
      const cookie = ok.headers.getSetCookie().find((c) => c.startsWith('gw_session='))!;
      expect(cookie).to.match(/HttpOnly/i).and.match(/SameSite=Lax/i);
      const stored = await gateway.runtime.db('sessions').select('token_hash');
      const token = cookie.split(';')[0].split('=')[1];
      expect(stored.map((s) => s.token_hash)).to.not.include(token);
    });

    it('throttles sign-in attempts per account', async () => {
      const email = uniqueEmail('target');
      const statuses: number[] = [];
      for (let i = 0; i < 11; i += 1) statuses.push((await post(base, '/api/auth/signin', { email, password: `guess-${i}-xxxxxx` })).status);
      expect(statuses.slice(0, 10)).to.deep.equal(Array(10).fill(401));
      expect(statuses[10]).to.equal(429);
    });

    it('resets a password by e-mail, which ends every session', async () => {
      const person = await signUp(base, smtp, 'cyd');
      expect((await post(base, '/api/auth/forgot', { email: person.email })).status).to.equal(202);
      const link = await linkFromMail(smtp, person.email, '/reset?token=');
      const newPassword = 'another long password';
      expect((await post(base, '/api/auth/reset', { token: link.searchParams.get('token'), password: newPassword })).status).to.equal(200);
      expect((await person.json('GET', '/api/me')).body.user, 'old session ended').to.equal(null);
      expect((await post(base, '/api/auth/signin', { email: person.email, password: PASSWORD })).status).to.equal(401);
      expect((await post(base, '/api/auth/signin', { email: person.email, password: newPassword })).status).to.equal(200);
    });

    it('signs out everywhere', async () => {
      const first = await signUp(base, smtp, 'dee');
      const second = sessionFor(base, first.email, cookieOf(await post(base, '/api/auth/signin', { email: first.email, password: PASSWORD })));
      expect((await second.json('POST', '/api/auth/signout-all')).body.signed_out).to.equal(2);
      expect((await first.json('GET', '/api/me')).body.user).to.equal(null);
      expect((await second.json('GET', '/v1/organization/users')).status).to.equal(401);
    });

    it('refuses cross-origin state changes made with a session', async () => {
      const person = await signUp(base, smtp, 'eve');
      const evil = await person.fetch('/v1/organization/invites', {
        method: 'POST', headers: { origin: 'https://evil.example', 'content-type': 'application/json' }, body: JSON.stringify({ email: 'x@example.com', role: 'viewer' }),
      });
      expect(evil.status).to.equal(403);
      expect(((await evil.json()) as any).error.code).to.equal('cross_origin_request');
      // fetch() may not set Sec-Fetch-Site (a browser-controlled header); a raw request can.
      const site = await rawPost(`${base}/api/workspaces`, { cookie: person.cookie, 'sec-fetch-site': 'cross-site', origin: base }, { name: 'x' });
      expect(site).to.equal(403);
      expect(await rawPost(`${base}/api/workspaces`, { cookie: person.cookie }, { name: 'x' }), 'no Origin at all').to.equal(403);
      expect(await rawPost(`${base}/api/workspaces`, { cookie: person.cookie, 'sec-fetch-site': 'same-origin' }, { name: 'x' })).to.equal(201);
      expect((await person.json('GET', '/v1/organization/users')).status, 'reads are fine').to.equal(200);
    });
  });

  describe('workspaces, members and invitations', () => {
    let owner: Session;
    before(async () => { owner = await signUp(base, smtp, 'olga'); });

    it('invites a developer who accepts; the audit log has every step', async () => {
      const dev = await invitedMember(base, smtp, owner, 'dan', 'developer');
      const users = await owner.json('GET', '/v1/organization/users');
      expect(users.body.data.map((u: any) => [u.email, u.role])).to.deep.include.members([[owner.email, 'owner'], [dev.email, 'developer']]);
      const invites = await owner.json('GET', '/v1/organization/invites');
      expect(invites.body.data.find((i: any) => i.email === dev.email)).to.include({ object: 'organization.invite', status: 'accepted', role: 'developer' });
      const audit = await owner.json('GET', '/v1/organization/audit_logs');
      expect(audit.body.data.map((e: any) => e.type)).to.include.members(['invite.create', 'invite.accept', 'member.add', 'workspace.create']);
    });

    it('revokes an invitation, and an invitation is only for its own address', async () => {
      const other = await signUp(base, smtp, 'ivy');
      const created = await owner.json('POST', '/v1/organization/invites', { email: uniqueEmail('someone'), role: 'viewer' });
      const link = await linkFromMail(smtp, created.body.email, '/invite?token=');
      const wrongPerson = await other.json('POST', '/api/invites/accept', { token: link.searchParams.get('token') });
      expect(wrongPerson.status).to.equal(403);
      expect((await owner.json('DELETE', `/v1/organization/invites/${created.body.id}`)).status).to.equal(200);
      expect((await owner.json('GET', `/v1/organization/invites/${created.body.id}`)).body.status).to.equal('revoked');
      expect((await other.json('GET', `/api/invites/${link.searchParams.get('token')}`)).body.status).to.equal('revoked');
    });

    it('expires invitations after their time', async () => {
      const email = uniqueEmail('late');
      const invited = await owner.json('POST', '/v1/organization/invites', { email, role: 'viewer' });
      await gateway.runtime.db('invitations').where({ id: invited.body.id }).update({ expires_at: new Date(Date.now() - 1000) });
      const link = await linkFromMail(smtp, email, '/invite?token=');
      const late = await signUp(base, smtp, 'late');
      // The invited address differs from `late`'s, but an expired invitation is refused before that.
      const res = await late.json('POST', '/api/invites/accept', { token: link.searchParams.get('token') });
      expect(res.status).to.equal(409);
      expect(res.body.error.code).to.equal('invite_expired');
    });

    it('keeps an owner: the last owner cannot leave or be demoted; ownership moves by transfer', async () => {
      const me = (await owner.json('GET', '/api/me')).body.user;
      const leave = await owner.json('DELETE', `/v1/organization/users/${me.id}`);
      expect(leave.status).to.equal(409);
      expect(leave.body.error.code).to.equal('last_owner');
      const admin = await invitedMember(base, smtp, owner, 'amy', 'admin');
      expect((await admin.json('POST', `/v1/organization/users/${me.id}`, { role: 'viewer' })).status, 'an admin may not demote an owner').to.equal(403);
      expect((await owner.json('POST', `/v1/organization/users/${admin.userId}`, { role: 'owner' })).status, 'owner only by transfer').to.equal(403);
      const moved = await owner.json('POST', '/v1/organization/transfer_ownership', { user_id: admin.userId });
      expect(moved.status).to.equal(200);
      const roles = Object.fromEntries(moved.body.data.map((u: any) => [u.id, u.role]));
      expect(roles[admin.userId]).to.equal('owner');
      expect(roles[me.id]).to.equal('admin');
      expect((await admin.json('POST', '/v1/organization/transfer_ownership', { user_id: me.id })).status).to.equal(200);
    });

    it('creates, renames and switches workspaces', async () => {
      const person = await signUp(base, smtp, 'sam');
      const created = await person.json('POST', '/api/workspaces', { name: 'Second' });
      expect(created.status).to.equal(201);
      expect((await person.json('GET', '/v1/organization')).body.name).to.equal('Second');
      expect((await person.json('POST', '/v1/organization', { name: 'Renamed' })).body.name).to.equal('Renamed');
      const me = (await person.json('GET', '/api/me')).body;
      expect(me.workspaces.map((w: any) => w.name)).to.deep.equal(["sam's workspace", 'Renamed']);
      expect((await person.json('POST', '/api/workspaces/switch', { workspace_id: me.workspaces[0].id })).status).to.equal(200);
      expect((await person.json('GET', '/v1/organization')).body.name).to.equal("sam's workspace");
      const stranger = await signUp(base, smtp, 'tom');
      expect((await stranger.json('POST', '/api/workspaces/switch', { workspace_id: me.workspaces[0].id })).status).to.equal(403);
    });

    it('gives the free plan\'s credits to one workspace per person: the second gets no plan and no grant', async () => {
      const person = await signUp(base, smtp, 'una');
      expect((await person.json('GET', '/v1/billing/balance')).body).to.deep.include({ plan_credits: 500 });
      const second = await person.json('POST', '/api/workspaces', { name: 'Side project' });
      expect(second.status).to.equal(201);
      expect(second.body).to.include({ role: 'owner', plan: null });
      const balance = (await person.json('GET', '/v1/billing/balance')).body;
      expect(balance).to.deep.include({ workspace_id: second.body.id, balance: 0, plan_credits: 0, plan: null });
      expect(await gateway.runtime.db('credit_ledger').where({ workspace_id: second.body.id })).to.deep.equal([]);
      // Nor a third; and the monthly grant, which takes workspaces on a plan, passes them by.
      const third = await person.json('POST', '/api/workspaces', { name: 'Third' });
      expect(third.body.plan).to.equal(null);
      expect(await gateway.runtime.db('workspaces').whereIn('id', [second.body.id, third.body.id]).pluck('plan_id')).to.deep.equal([null, null]);
    });
  });

  describe('API keys of members', () => {
    it('a developer creates a key with a preset; it calls the API, shows usage, and is revoked at once', async () => {
      const owner = await signUp(base, smtp, 'kim');
      const dev = await invitedMember(base, smtp, owner, 'kai', 'developer');
      const presets = await dev.json('GET', '/v1/organization/api_key_presets');
      expect(presets.body.data.map((p: any) => p.id)).to.include.members(['free', 'pro', 'custom']);
      const created = await dev.json('POST', '/v1/organization/api_keys', { name: 'ci', preset: 'starter', models: ['sim-chat'] });
      expect(created.status).to.equal(201);
      expect(created.body.value).to.match(/^sk-gw-/);
      expect(created.body).to.deep.include({ preset: 'starter', role: 'developer', quotas: { rpm: 60, daily_tokens: 2_000_000, models: ['sim-chat'], cost_cap: null } });
      expect(created.body.redacted_value).to.equal(`sk-gw-…${created.body.value.slice(-4)}`);

      const completion = await chat(created.body.value);
      expect(completion.choices[0].message.content).to.be.a('string');
      const listed = (await dev.json('GET', '/v1/organization/api_keys')).body.data;
      expect(listed).to.have.length(1);
      expect(listed[0]).to.not.have.property('value');
      expect(listed[0].usage.requests).to.equal(1);
      expect(listed[0].usage.credits).to.be.greaterThan(0);
      expect(listed[0].last_used_at).to.be.a('number');
      expect(listed[0].owner.user.email).to.equal(dev.email);

      const costs = await owner.json('GET', '/v1/organization/costs?group_by=model,api_key_id,user_id');
      const results = costs.body.data.flatMap((b: any) => b.results);
      expect(results).to.have.length(1);
      expect(results[0]).to.deep.include({ model: 'sim-chat', api_key_id: created.body.id, user_id: dev.userId, line_item: 'sim-chat' });
      expect(results[0].amount.value).to.equal(listed[0].usage.credits);
      const usage = await owner.json('GET', '/v1/organization/usage/completions?group_by=api_key_id');
      expect(usage.body.data.flatMap((b: any) => b.results)[0]).to.include({ num_model_requests: 1, api_key_id: created.body.id });

      expect((await owner.json('DELETE', `/v1/organization/api_keys/${created.body.id}`)).status).to.equal(200);
      const after = await chat(created.body.value).then(() => null, (err) => err);
      expect(after?.status).to.equal(401);
      expect(after.code).to.equal('revoked_api_key');
    });

    it('a key never outranks its creator, and stops working when the creator leaves', async () => {
      const owner = await signUp(base, smtp, 'lou');
      const admin = await invitedMember(base, smtp, owner, 'lee', 'admin');
      const key = (await admin.json('POST', '/v1/organization/api_keys', { name: 'ops', preset: 'custom', role: 'admin' })).body.value;
      const tenantFetch = (path: string) => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
      expect((await tenantFetch('/v1/budget/alerts')).status, 'admin key reads budget alerts').to.equal(200);
      await owner.json('POST', `/v1/organization/users/${admin.userId}`, { role: 'developer' });
      const demoted = await tenantFetch('/v1/budget/alerts');
      expect(demoted.status, 'the creator was demoted: so is the key').to.equal(403);
      await owner.json('DELETE', `/v1/organization/users/${admin.userId}`);
      const gone = await tenantFetch('/v1/models');
      expect(gone.status).to.equal(401);
      expect(((await gone.json()) as any).error.code).to.equal('key_owner_removed');
    });

    it('a viewer gets no keys; a developer sees only their own', async () => {
      const owner = await signUp(base, smtp, 'vic');
      const viewer = await invitedMember(base, smtp, owner, 'val', 'viewer');
      for (const [method, path] of [['GET', '/v1/organization/api_keys'], ['POST', '/v1/organization/api_keys']] as const) {
        const res = await viewer.json(method, path, method === 'POST' ? { name: 'x' } : undefined);
        expect(res.status, `${method} ${path}`).to.equal(403);
        expect(res.body.error).to.include({ type: 'permission_error', code: 'insufficient_role' });
      }
      const dev = await invitedMember(base, smtp, owner, 'dev', 'developer');
      const ownersKey = (await owner.json('POST', '/v1/organization/api_keys', { name: 'owner key' })).body;
      expect((await dev.json('GET', '/v1/organization/api_keys')).body.data).to.deep.equal([]);
      expect((await dev.json('DELETE', `/v1/organization/api_keys/${ownersKey.id}`)).status).to.equal(404);
    });

    it('admin keys automate the organization API and nothing else; project keys may not use it', async () => {
      const owner = await signUp(base, smtp, 'ari');
      const admin = await owner.json('POST', '/v1/organization/admin_api_keys', { name: 'terraform' });
      expect(admin.status).to.equal(201);
      expect(admin.body.value).to.match(/^sk-admin-/);
      const headers = { authorization: `Bearer ${admin.body.value}`, 'content-type': 'application/json' };
      const users = await fetch(`${base}/v1/organization/users`, { headers });
      expect(users.status).to.equal(200);
      const invite = await fetch(`${base}/v1/organization/invites`, { method: 'POST', headers, body: JSON.stringify({ email: uniqueEmail('bot'), role: 'developer' }) });
      expect(invite.status, 'no session: no same-origin check for keys').to.equal(201);
      expect((await fetch(`${base}/v1/models`, { headers })).status).to.equal(403);
      const project = (await owner.json('POST', '/v1/organization/api_keys', { name: 'app' })).body.value;
      const refused = await fetch(`${base}/v1/organization/users`, { headers: { authorization: `Bearer ${project}` } });
      expect(refused.status).to.equal(403);
      expect(((await refused.json()) as any).error.code).to.equal('admin_key_required');
    });
  });
});
