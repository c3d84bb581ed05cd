/**
 * Settings > Requests in Chromium: the owner finds every request of the workspace with key names and members,
 * narrows it by status and by the client's X-Request-Id, opens a failed request's details, downloads the same
 * rows as CSV; a Developer sees only their own. A screenshot goes to docs/screenshots/request-log.png.
 */
import { expect } from 'chai';
import type { TestGateway } from '../support/gateway';
import type { SmtpSink } from '../support/notification-sinks';
import { invitedMember, signUp, type Session } from '../support/people';
import { axeViolations } from './axe';
import { browserSuite } from './browser';
import { RequestLogPage } from './pages/request-log-page';

describe('web app: the request log in Chromium', function () {
  this.timeout(240_000);
  const suite = browserSuite();
  let gateway: TestGateway;
  let smtp: SmtpSink;
  let owner: Session;
  let dev: Session & { userId: string };
  const ids: Record<string, string> = {};

  const call = async (key: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers }, body: JSON.stringify(body) });
    await res.arrayBuffer();
    return res.headers.get('x-request-id')!;
  };

  before(async () => {
    ({ gateway, smtp } = suite);
    owner = await signUp(gateway.url, smtp, 'rhea');
    dev = await invitedMember(gateway.url, smtp, owner, 'remy', 'developer');
    const ownerKey = (await owner.json('POST', '/v1/organization/api_keys', { name: 'billing-service', preset: 'custom' })).body.value;
    const devKey = (await dev.json('POST', '/v1/organization/api_keys', { name: 'remy-notebook', preset: 'custom' })).body.value;
    ids.traced = await call(ownerKey, { model: 'sim-chat', messages: [{ role: 'user', content: 'traced' }] }, { 'x-request-id': 'checkout-7781' });
    ids.failed = await call(ownerKey, { model: 'sim-chat', messages: [{ role: 'user', content: 'bad' }] }, { 'x-simulate-failure': '400' });
    ids.dev = await call(devKey, { model: 'sim-chat-mini', messages: [{ role: 'user', content: 'mine' }] });
  });

  it('lists, filters, finds by X-Request-Id, opens details and exports CSV', async () => {
    const log = new RequestLogPage(await suite.newPage({ viewport: { width: 1440, height: 900 }, cookie: owner.cookie }), gateway.url);
    await log.open();
    expect((await log.requestIds()).sort()).to.deep.equal([ids.traced, ids.failed, ids.dev].sort());
    await log.rows().filter({ hasText: 'remy-notebook' }).filter({ hasText: dev.email }).waitFor();
    await suite.shot(log.page, 'request-log', { fullPage: false });

    await log.search({ Status: 'Failed' });
    expect(await log.requestIds()).to.deep.equal([ids.failed]);
    const details = await log.details(ids.failed);
    expect(await details.textContent()).to.include('invalid_request_error');

    await log.search({ Status: 'Any status', 'Request id or X-Request-Id': 'checkout-7781' });
    expect(await log.requestIds()).to.deep.equal([ids.traced]);
    await log.search({ 'Request id or X-Request-Id': 'never-seen' });
    expect(await log.empty()).to.equal(true);

    await log.search({ 'Request id or X-Request-Id': '', Endpoint: 'chat.completions' });
    const csv = await log.page.request.get(`${gateway.url}${await log.csvHref()}`);
    expect(csv.status()).to.equal(200);
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines.slice(1).map((l) => l.split(',')[1]).sort()).to.deep.equal([ids.traced, ids.failed, ids.dev].sort());
    expect((await axeViolations(log.page)).filter((v) => v.impact === 'serious' || v.impact === 'critical')).to.deep.equal([]);
  });

  it('shows a Developer only their own requests, without the member filter', async () => {
    const log = new RequestLogPage(await suite.newPage({ viewport: { width: 390, height: 844 }, cookie: dev.cookie }), gateway.url);
    await log.open();
    expect(await log.requestIds()).to.deep.equal([ids.dev]);
    expect(await log.page.getByLabel('Member', { exact: true }).count()).to.equal(0);
  });
});
