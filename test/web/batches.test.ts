/**
 * Settings > Batches in Chromium, on the simulated chat models: at a desktop's width the owner uploads a JSONL
 * file, creates a batch, watches it complete without reloading, sees its counts and its cost (what the balance
 * lost), downloads the output and the errors; at a phone's width, a slow batch is cancelled through the
 * confirmation dialog and ends cancelled with part of its lines done. A screenshot goes to
 * docs/screenshots/batches.png (with UPDATE_SCREENSHOTS=1).
 */
import { expect } from 'chai';
import type { TestGateway } from '../support/gateway';
import type { SmtpSink } from '../support/notification-sinks';
import { signUp, type Session } from '../support/people';
import { axeViolations } from './axe';
import { browserSuite } from './browser';
import { BatchesPage } from './pages/batches-page';

const line = (customId: string, model: string, content: string) =>
  JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content }], max_tokens: 16 } });

const serious = (v: { impact: string | null }) => v.impact === 'serious' || v.impact === 'critical';

describe('web app: batches in Chromium', function () {
  this.timeout(300_000);
  // Two lines of a batch at a time: the slow batch is still running when its cancel arrives.
  const suite = browserSuite({ env: { BATCH_CONCURRENCY: '2' } });
  let gateway: TestGateway;
  let smtp: SmtpSink;
  let owner: Session;

  const balance = async (): Promise<number> => (await owner.json('GET', '/v1/billing/balance')).body.balance;

  before(async () => {
    ({ gateway, smtp } = suite);
    owner = await signUp(gateway.url, smtp, 'bea');
  });

  it('uploads a JSONL file, creates a batch, sees it complete with counts and cost, downloads output and errors', async () => {
    const batches = new BatchesPage(await suite.newPage({ viewport: { width: 1440, height: 900 }, cookie: owner.cookie }), gateway.url);
    await batches.open();
    expect(await batches.page.getByText('No batch yet.').isVisible()).to.equal(true);
    const before = await balance();

    // Three lines for the simulated chat model, and one whose model is rate limited upstream on every attempt: its own error, not the batch's.
    const ok = ['greet-1', 'greet-2', 'greet-3'];
    const jsonl = [...ok.map((id, i) => line(id, 'sim-chat', `Hello number ${i + 1}`)), line('throttled-1', 'sim-chat-fail-429', 'never answered')].join('\n');
    const id = await batches.create({ jsonl, filename: 'greetings.jsonl', endpoint: '/v1/chat/completions', description: 'greetings' });
    expect(id).to.match(/^batch_/);
    await batches.waitForStatus(id, 'completed');
    expect(await batches.counts(id)).to.equal('3 completed · 1 failed of 4');

    // The cost shown is the API's, and is what the workspace's balance lost (every hold settled or released).
    const api = (await owner.json('GET', `/v1/batches/${id}`)).body;
    expect(api.request_counts).to.deep.equal({ total: 4, completed: 3, failed: 1 });
    expect(api.credits_used).to.be.above(0);
    expect(await batches.cost(id)).to.equal(`${api.credits_used.toLocaleString('en-US', { maximumFractionDigits: 6 })} credits`);
    expect(before - (await balance())).to.be.closeTo(api.credits_used, 1e-9);

    const output = (await batches.download(id, 'Download output')).trim().split('\n').map((l) => JSON.parse(l));
    expect(output.map((o) => o.custom_id).sort()).to.deep.equal(ok);
    for (const o of output) {
      expect(o.response.status_code).to.equal(200);
      expect(o.response.body.choices[0].message.content).to.be.a('string').and.not.equal('');
    }
    const errors = (await batches.download(id, 'Download errors')).trim().split('\n').map((l) => JSON.parse(l));
    expect(errors.map((e) => e.custom_id)).to.deep.equal(['throttled-1']);
    expect(errors[0].response.status_code).to.equal(429);

    // The uploaded file is offered again for the next batch.
    expect((await batches.inputFileOptions()).some((o) => o.startsWith('greetings.jsonl'))).to.equal(true);
    await suite.shot(batches.page, 'batches', { fullPage: false });
    expect((await axeViolations(batches.page)).filter(serious)).to.deep.equal([]);
    expect(suite.consoleErrors()).to.deep.equal([]);
  });

  it('cancels a running batch through the confirmation dialog at a phone width, in the dark scheme', async () => {
    const batches = new BatchesPage(await suite.newPage({ viewport: { width: 390, height: 844 }, cookie: owner.cookie, colorScheme: 'dark' }), gateway.url);
    await batches.open();
    // Slow lines (about 1.5 s each upstream, two at a time): about 30 s of work.
    const jsonl = Array.from({ length: 40 }, (_, i) => line(`slow-${i}`, 'sim-chat-slow', `Slow ${i}`)).join('\n');
    const id = await batches.create({ jsonl, filename: 'slow.jsonl', endpoint: '/v1/chat/completions', description: 'slow lines' });
    await batches.waitForStatus(id, 'in progress');
    expect((await axeViolations(batches.page)).filter(serious)).to.deep.equal([]);

    expect(await batches.cancel(id)).to.equal(`Cancel the batch ${id}?`);
    await batches.waitForStatus(id, 'cancelled');
    expect(await batches.page.getByRole('button', { name: `Cancel ${id}` }).count()).to.equal(0);
    const api = (await owner.json('GET', `/v1/batches/${id}`)).body;
    expect(api.status).to.equal('cancelled');
    expect(api.request_counts.total).to.equal(40);
    expect(api.request_counts.completed).to.be.below(40);
    expect(await batches.counts(id)).to.equal(`${api.request_counts.completed} completed · ${api.request_counts.failed} failed of 40`);
    const overflow = await batches.page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth - (globalThis as any).innerWidth);
    expect(overflow).to.equal(0);
    expect(suite.consoleErrors()).to.deep.equal([]);
  });
});
