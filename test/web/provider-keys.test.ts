/**
 * Bring your own key in Chromium, at a phone's width: an owner adds the workspace's own OpenAI key in
 * Settings (a wrong key is refused by the test call, a good one saved and shown by its last four), chats with
 * an OpenAI model in the Playground through it (the fake OpenAI host checks the bearer is that key), sees the
 * BYOK fee and "your key" on the receipt, and removes the key with the confirmation dialog.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { RecordedRequest } from '../support/fake-upstream';
import { FakeUpstream } from '../support/fake-upstream';
import { signUp } from '../support/people';
import { axeViolations } from './axe';
import { browserSuite } from './browser';
import { PlaygroundPage } from './pages/playground-pages';
import { RequestLogPage } from './pages/request-log-page';
import { ProviderKeysPage } from './pages/settings-pages';

/** Browser globals, for the functions this file runs in the page (the tests compile without the DOM's types). */
declare const document: any;
declare const window: any;

const PLATFORM_KEY = 'sk-platform-openai';
const WORKSPACE_KEY = `sk-proj-${randomBytes(16).toString('hex')}`;

function chunk(delta: Record<string, unknown>, finishReason: string | null = null) {
  return { id: 'chatcmpl-byok', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

/** OpenAI's host as far as this test needs it: the bearer checked, a short answer (streamed when asked) using 30 + 8 tokens. */
function answer(req: RecordedRequest) {
  if (![`Bearer ${PLATFORM_KEY}`, `Bearer ${WORKSPACE_KEY}`].includes(String(req.headers.authorization))) {
    return { status: 401, json: { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } } };
  }
  const usage = { prompt_tokens: 30, completion_tokens: 8, total_tokens: 38 };
  if (req.json?.stream) return { sse: [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hello from your key.' }), chunk({}, 'stop'), { ...chunk({}), choices: [], usage }, '[DONE]'] };
  return { json: { id: 'chatcmpl-byok', object: 'chat.completion', created: 1, model: req.json?.model, choices: [{ index: 0, message: { role: 'assistant', content: 'OK' }, finish_reason: 'length', logprobs: null }], usage } };
}

describe('web app: bring your own key in Chromium', function () {
  this.timeout(240_000);
  const openai = new FakeUpstream();
  const env: NodeJS.ProcessEnv = {};
  // Registered before the suite's own hook, which reads `env` when it starts the gateway.
  before(async () => {
    await openai.start();
    openai.on('POST /v1/chat/completions', answer);
    Object.assign(env, {
      OPENAI_BASE_URL: `${openai.url}/v1`, OPENAI_API_KEY: PLATFORM_KEY,
      BYOK_KEY_RING: `k1:${randomBytes(32).toString('base64')}`, BYOK_FEE_PERCENT: '10',
    });
  });
  after(() => openai.stop());
  const suite = browserSuite({ env });

  it('adds a key (a wrong one refused), chats through it with the fee on the receipt, and removes it', async () => {
    const owner = await signUp(suite.gateway.url, suite.smtp, 'byok');
    const page = await suite.newPage({ viewport: { width: 390, height: 844 }, cookie: owner.cookie });
    const keys = new ProviderKeysPage(page, suite.gateway.url);
    await keys.open();

    await keys.add('openai', 'sk-not-a-real-key-0000');
    expect(await keys.refusal()).to.match(/not saved.*openai.*refused the key \(HTTP 401\)/);
    expect(await keys.keys()).to.deep.equal([]);

    await keys.add('openai', WORKSPACE_KEY);
    expect(await keys.saved()).to.include(`ending in ${WORKSPACE_KEY.slice(-4)}`);
    expect(await keys.keys()).to.deep.equal([['openai', `…${WORKSPACE_KEY.slice(-4)}`]]);
    await page.reload();
    await page.getByRole('table', { name: 'Provider keys of this workspace' }).waitFor();
    expect(await page.content()).not.to.include(WORKSPACE_KEY);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).to.be.at.most(0);
    const serious = (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious).to.deep.equal([]);
    await suite.shot(page, 'provider-keys');

    openai.reset();
    openai.on('POST /v1/chat/completions', answer);
    const playground = new PlaygroundPage(page, suite.gateway.url);
    await playground.newChat();
    await playground.chooseModel('gpt-4o-mini');
    await playground.send('Hello');
    const reply = await playground.settledReply();
    expect(await reply.locator('.markdown').textContent()).to.include('Hello from your key.');
    const calls = openai.received('POST /v1/chat/completions');
    expect(calls.map((c) => c.headers.authorization)).to.deep.equal([`Bearer ${WORKSPACE_KEY}`]);
    // 30 x 15 + 8 x 60 credits per 1M tokens = 0.00093 credits at list price: the workspace's key pays 10% of it.
    expect(await playground.receiptCredits(reply)).to.equal(0.000093);
    expect(await reply.getByTestId('receipt-key-source').textContent()).to.equal('your key');
    const log = new RequestLogPage(page, suite.gateway.url);
    await log.open();
    expect(await log.rows().first().textContent()).to.include('0.000093 · your key');

    await keys.open();
    const dialog = await keys.askRemove('openai');
    expect(await dialog.name()).to.equal('Remove your openai key?');
    await dialog.confirm('Remove key');
    await page.getByText('No keys of your own').waitFor();
    expect(await keys.keys()).to.deep.equal([]);
    expect(suite.consoleErrors().filter((e) => !/status of 400/.test(e))).to.deep.equal([]);
  });
});
