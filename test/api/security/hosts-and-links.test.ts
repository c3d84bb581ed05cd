/**
 * DNS rebinding and poisoned links: every link in an e-mail (verification, reset, invitation) is built from
 * PUBLIC_URL (outside production, the listen address), never from the request's Host header; production
 * refuses to start without PUBLIC_URL; a Host the gateway does not answer for is a 421 in the route's
 * error shape, before anything is read or charged.
 */
import { expect } from 'chai';
import http from 'node:http';
import { ConfigError, loadConfig } from '../../../config/env';
import { freePort } from '../../../stack/processes';
import { startTestGateway, type TestGateway } from '../../support/gateway';
import { SmtpSink, waitFor } from '../../support/notification-sinks';
import { PASSWORD, linkFromMail, signUp, solvedCaptcha, uniqueEmail } from '../../support/people';

const PUBLIC_URL = 'https://gateway.example.test';

/** A request naming `host` in its Host header (fetch() sets Host itself). */
function withHost(base: string, host: string, opts: { method?: string; path: string; body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const req = http.request(`${base}${opts.path}`, {
      method: opts.method ?? 'GET',
      headers: { host, ...(payload ? { 'content-type': 'application/json' } : {}), ...(opts.headers ?? {}) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try { body = JSON.parse(text); } catch { /* not JSON */ }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

describe('security: allowed hosts and the links in e-mails', function () {
  this.timeout(180_000);
  let smtp: SmtpSink;
  before(async () => {
    smtp = new SmtpSink(await freePort());
    await smtp.start();
  });
  after(() => smtp?.stop());

  describe('with PUBLIC_URL and ALLOWED_HOSTS', () => {
    let gateway: TestGateway;
    let port: string;
    before(async function () {
      this.timeout(180_000);
      gateway = await startTestGateway({ env: { SMTP_URL: smtp.url, CAPTCHA_MAX_COUNTER: '400', PUBLIC_URL, ALLOWED_HOSTS: 'api.internal, [fd00::1]' } });
      port = new URL(gateway.url).port;
    });
    after(() => gateway?.stop());

    it('answers another Host with 421 in the route\'s error shape, before authenticating or charging', async () => {
      const tenant = await gateway.newTenant({ credits: 10 });
      for (const host of ['evil.example', `evil.example:${port}`, 'gateway.example.test.evil.example', '10.0.0.8']) {
        const chat = await withHost(gateway.url, host, {
          method: 'POST', path: '/v1/chat/completions', headers: { authorization: `Bearer ${tenant.key}` },
          body: { model: 'sim-chat', messages: [{ role: 'user', content: 'Hello' }] },
        });
        expect(chat.status, host).to.equal(421);
        expect(chat.body.error).to.deep.include({ type: 'invalid_request_error', code: 'host_not_allowed', param: null });
        for (const path of ['/api/me', '/settings/members', '/healthz', '/metrics']) {
          const res = await withHost(gateway.url, host, { path });
          expect(res.status, `${host} ${path}`).to.equal(421);
          expect(res.body.error.code).to.equal('host_not_allowed');
        }
      }
      expect(await gateway.runtime.db('usage_records').where({ workspace_id: tenant.workspaceId })).to.deep.equal([]);
      expect(await gateway.runtime.db('credit_ledger').where({ workspace_id: tenant.workspaceId }).whereNot({ kind: 'topup' })).to.deep.equal([]);
    });

    it('answers PUBLIC_URL\'s host, the listed ones, the listen address and the loopback names', async () => {
      const tenant = await gateway.newTenant({ credits: 10 });
      for (const host of ['gateway.example.test', 'GATEWAY.example.test.', 'api.internal:8080', '[fd00::1]:8080', `127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
        const res = await withHost(gateway.url, host, { path: '/v1/models', headers: { authorization: `Bearer ${tenant.key}` } });
        expect(res.status, host).to.equal(200);
      }
    });

    it('builds verification, reset and invitation links from PUBLIC_URL, whatever Host the request named', async () => {
      const email = uniqueEmail('linked');
      const signUpRes = await withHost(gateway.url, 'localhost', {
        method: 'POST', path: '/api/auth/signup', headers: { origin: 'http://localhost' },
        body: { email, password: PASSWORD, altcha: await solvedCaptcha(gateway.url) },
      });
      expect(signUpRes.status).to.equal(201);
      expect((await linkFromMail(smtp, email, '/verify?token=')).origin).to.equal(PUBLIC_URL);

      expect((await withHost(gateway.url, 'api.internal', { method: 'POST', path: '/api/auth/forgot', headers: { origin: 'http://api.internal' }, body: { email } })).status).to.equal(202);
      expect((await linkFromMail(smtp, email, '/reset?token=')).origin).to.equal(PUBLIC_URL);

      const owner = await signUp(gateway.url, smtp, 'linker');
      const invited = uniqueEmail('invited');
      expect((await owner.json('POST', '/v1/organization/invites', { email: invited, role: 'viewer' })).status).to.equal(201);
      expect((await linkFromMail(smtp, invited, '/invite?token=')).origin).to.equal(PUBLIC_URL);
      for (const mail of smtp.messages) expect(mail.text).to.not.match(/https?:\/\/(localhost|api\.internal|127\.0\.0\.1)/);
    });
  });

  describe('without PUBLIC_URL (outside production)', () => {
    let gateway: TestGateway;
    before(async function () {
      this.timeout(180_000);
      gateway = await startTestGateway({ worker: false, env: { SMTP_URL: smtp.url, CAPTCHA_MAX_COUNTER: '400', PUBLIC_URL: undefined, ALLOWED_HOSTS: undefined } });
    });
    after(() => gateway?.stop());

    it('links to the listen address, not to the Host a request named', async () => {
      const email = uniqueEmail('listen');
      const port = new URL(gateway.url).port;
      const res = await withHost(gateway.url, `localhost:${port}`, {
        method: 'POST', path: '/api/auth/signup', headers: { origin: `http://localhost:${port}` },
        body: { email, password: PASSWORD, altcha: await solvedCaptcha(gateway.url) },
      });
      expect(res.status).to.equal(201);
      const mail = await waitFor('the verification e-mail', () => smtp.messages.find((m) => m.to.includes(email)), 15_000);
      expect(mail.text).to.include(`${gateway.url}/verify?token=`);
      expect(gateway.runtime.publicUrl).to.equal(gateway.url);
      expect((await withHost(gateway.url, 'rebound.example', { path: '/api/me' })).status).to.equal(421);
    });
  });

  describe('configuration', () => {
    const secrets = { TEMPORAL_CODEC_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}` };

    it('refuses to start in production without PUBLIC_URL', () => {
      expect(() => loadConfig({ NODE_ENV: 'production', ...secrets })).to.throw(ConfigError, /PUBLIC_URL is required in production/);
      expect(loadConfig({ NODE_ENV: 'production', ...secrets, PUBLIC_URL }).publicUrl).to.equal(PUBLIC_URL);
    });

    it('allows PUBLIC_URL\'s host, the listed hosts, a specific listen address and the loopback names', () => {
      const config = loadConfig({ PUBLIC_URL: 'https://Gateway.Example.com/app', ALLOWED_HOSTS: 'api, [FD00::1], internal.example.', HOST: '10.1.2.3' });
      expect(config.allowedHosts).to.have.members(['gateway.example.com', 'api', 'fd00::1', 'internal.example', '10.1.2.3', 'localhost', '127.0.0.1', '::1']);
      expect(loadConfig({ HOST: '0.0.0.0' }).allowedHosts, 'a wildcard listen address names no host').to.have.members(['localhost', '127.0.0.1', '::1']);
      for (const bad of ['evil example', 'https://x.example', 'a,,b', 'host:8080']) {
        expect(() => loadConfig({ ALLOWED_HOSTS: bad }), bad).to.throw(ConfigError, /ALLOWED_HOSTS/);
      }
      expect(() => loadConfig({ PUBLIC_URL: 'https://gateway.example.com/' }), 'no trailing slash').to.throw(ConfigError, /PUBLIC_URL/);
    });
  });
});
