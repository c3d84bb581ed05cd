import { expect } from 'chai';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import { waitFor, WebhookSink } from '../../support/notification-sinks';

const PUBLIC_HOOK = 'https://93.184.215.14/services/T0/B0/x';

describe('security: budget alert webhooks', function () {
  this.timeout(180_000);

  describe('at creation, the delivery rules (public unicast http(s) only)', () => {
    let gateway: TestGateway;
    let tenant: Tenant;
    before(async function () {
      this.timeout(180_000);
      gateway = await startTestGateway({ worker: false, env: { ALLOW_PRIVATE_WEBHOOKS: 'false' } });
      tenant = await gateway.newTenant();
    });
    after(() => gateway?.stop());

    const create = (url: string) => tenant.fetch('/v1/budget/alerts', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ threshold_type: 'credits', threshold: 5, channels: { webhook: { url } } }),
    });

    it('refuses loopback, private, link-local, metadata and unresolvable targets with a 400, storing nothing', async () => {
      const cases: Array<[string, string]> = [
        ['http://127.0.0.1/hook', 'webhook_address_not_allowed'],
        ['http://127.1.2.3:8080/hook', 'webhook_address_not_allowed'],
        ['http://localhost:9000/hook', 'webhook_address_not_allowed'],
        ['http://169.254.169.254/latest/meta-data/', 'webhook_address_not_allowed'],
        ['http://[fd00:ec2::254]/latest/meta-data/', 'webhook_address_not_allowed'],
        ['http://10.0.0.7/hook', 'webhook_address_not_allowed'],
        ['http://192.168.1.1/hook', 'webhook_address_not_allowed'],
        ['http://100.64.0.1/hook', 'webhook_address_not_allowed'],
        ['http://0.0.0.0/hook', 'webhook_address_not_allowed'],
        ['http://[::1]/hook', 'webhook_address_not_allowed'],
        ['http://[::ffff:127.0.0.1]/hook', 'webhook_address_not_allowed'],
        ['http://[fe80::1]/hook', 'webhook_address_not_allowed'],
        ['http://224.0.0.1/hook', 'webhook_address_not_allowed'],
        ['http://2130706433/hook', 'webhook_address_not_allowed'],
        ['http://0x7f000001/hook', 'webhook_address_not_allowed'],
        ['http://metadata.google.internal/computeMetadata/v1/', 'webhook_host_unresolvable'],
        ['http://no-such-host.invalid/hook', 'webhook_host_unresolvable'],
        ['ftp://93.184.215.14/hook', 'invalid_url'],
        ['https://user:secret@93.184.215.14/hook', 'invalid_url'],
        ['not a url at all', 'invalid_url'],
      ];
      for (const [url, code] of cases) {
        const res = await create(url);
        const { error } = (await res.json()) as { error: { type: string; code: string; param: string } };
        expect(res.status, url).to.equal(400);
        expect(error, url).to.include({ type: 'invalid_request_error', code, param: 'channels.webhook.url' });
      }
      expect(await gateway.runtime.db('budget_alerts').where({ workspace_id: tenant.workspaceId })).to.deep.equal([]);
    });

    it('takes a public address', async () => {
      const res = await create(PUBLIC_HOOK);
      expect(res.status).to.equal(201);
      expect(((await res.json()) as { channels: unknown }).channels).to.deep.equal({ webhook: { url: PUBLIC_HOOK } });
    });
  });

  describe('with ALLOW_PRIVATE_WEBHOOKS, and a delivery that keeps failing', () => {
    let gateway: TestGateway;
    const webhook = new WebhookSink();
    before(async function () {
      this.timeout(180_000);
      await webhook.start();
      // No SMTP server: e-mail deliveries fail too. Deliveries give up after 3 seconds.
      gateway = await startTestGateway({ env: { ALLOW_PRIVATE_WEBHOOKS: 'true', ALERT_DELIVERY_GIVE_UP_SECONDS: '3', SMTP_URL: '' } });
    });
    after(async () => {
      await gateway?.stop();
      await webhook.stop();
    });

    it('gives up after the bounded time and shows the deliveries as failed', async () => {
      const tenant = await gateway.newTenant({ credits: 100 });
      webhook.down.add('/hooks/dead');
      const created = await tenant.fetch('/v1/budget/alerts', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ threshold_type: 'credits', threshold: 0.000001, channels: { email: { to: ['ops@dead.test'] }, webhook: { url: `${webhook.url}/hooks/dead` } } }),
      });
      expect(created.status).to.equal(201);
      const alert = (await created.json()) as { id: string; deliveries: unknown[] };
      expect(alert.deliveries).to.deep.equal([]);

      await tenant.client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'spend a little' }] });

      type View = { deliveries: Array<{ channel: string; status: string; error: string; at: number; cycle: string }> };
      const view = await waitFor('both deliveries to be given up', async () => {
        const res = await tenant.fetch(`/v1/budget/alerts/${alert.id}`);
        const body = (await res.json()) as View;
        return body.deliveries.length === 2 && body.deliveries.every((d) => d.status !== 'sending') ? body : null;
      }, 60_000);
      const [email, hook] = view.deliveries;
      expect(email).to.include({ channel: 'email', status: 'failed' });
      expect(email.error).to.match(/^Given up after retrying/);
      expect(email.error).not.to.match(/ECONNREFUSED|127\.0\.0\.1|smtp/i);
      expect(hook).to.include({ channel: 'webhook', status: 'failed' });
      // The window may close while the last attempt is still in flight (a busy machine): then the timeout is the last failure.
      expect(hook.error, hook.error).to.match(/^Given up after retrying for 3 s; last failure: (.*HTTP 503|activity ScheduleToClose timeout)/);

      // The list shows the same, and no attempt follows the give-up.
      const list = (await (await tenant.fetch('/v1/budget/alerts')).json()) as { data: View[] };
      expect(list.data[0].deliveries).to.deep.equal(view.deliveries);
      const attempts = webhook.calls.filter((c) => c.path === '/hooks/dead').length;
      expect(attempts).to.be.greaterThan(0);
      await new Promise((r) => setTimeout(r, 3000));
      expect(webhook.calls.filter((c) => c.path === '/hooks/dead').length).to.equal(attempts);
    });

    it('takes a private webhook when the setting allows it', async () => {
      const tenant = await gateway.newTenant();
      const res = await tenant.fetch('/v1/budget/alerts', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ threshold_type: 'percent', threshold: 50, channels: { webhook: { url: `${webhook.url}/hooks/local` } } }),
      });
      expect(res.status).to.equal(201);
    });
  });
});
