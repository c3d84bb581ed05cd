/**
 * Model pickers and failed messages in Chromium. The gateway here has keys only for its simulated models and
 * takes workspaces' own provider keys: the Playground's model picker offers exactly the models GET /v1/models
 * says the workspace can use, names how many more need a provider key and links to Provider keys (a phone's
 * width too, with Fallback chains), and a new key's allow-list is picked from them; a failed reply links to its fix (a provider's throttling to Fallback chains
 * with the wait explained, no credits to Billing), as does a send refused for a model without a key. Both
 * sizes pass axe. A screenshot goes to docs/screenshots/model-picker.png (with UPDATE_SCREENSHOTS=1).
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { getBalance, reserve } from '../../domain/ledger';
import type { TestGateway } from '../support/gateway';
import type { SmtpSink } from '../support/notification-sinks';
import { signUp, type Session } from '../support/people';
import { axeViolations } from './axe';
import { browserSuite } from './browser';
import { PlaygroundPage } from './pages/playground-pages';

const serious = (v: { impact: string | null }) => v.impact === 'serious' || v.impact === 'critical';

interface Listed { id: string; available: boolean; needs_provider_key?: boolean }

describe('web app: usable models in pickers, and failures linked to their fix, in Chromium', function () {
  this.timeout(300_000);
  const suite = browserSuite({ env: { BYOK_KEY_RING: `k1:${randomBytes(32).toString('base64')}`, OPENAI_API_KEY: '', GROQ_API_KEY: '', ANTHROPIC_API_KEY: '' } });
  let gateway: TestGateway;
  let smtp: SmtpSink;
  let owner: Session;

  before(async () => {
    ({ gateway, smtp } = suite);
    owner = await signUp(gateway.url, smtp, 'pia');
  });

  const chatModels = async (session: Session): Promise<Listed[]> => (await session.json('GET', '/v1/models?modality=chat')).body.data;

  async function playgroundAt(viewport: { width: number; height: number }, session = owner): Promise<PlaygroundPage> {
    return new PlaygroundPage(await suite.newPage({ viewport, cookie: session.cookie }), gateway.url);
  }

  it('offers only the chat models the workspace can use, says how many more need a provider key, and links there', async () => {
    const listed = await chatModels(owner);
    const usable = listed.filter((m) => m.available).map((m) => m.id).sort();
    const others = listed.filter((m) => !m.available);
    expect(usable).to.include('sim-chat');
    expect(others.length).to.be.above(usable.length);

    const playground = await playgroundAt({ width: 1440, height: 900 });
    await playground.newChat();
    const { select, more } = await playground.modelPicker();
    expect((await playground.optionValues(select)).sort()).to.deep.equal(usable);
    const byKey = others.filter((m) => m.needs_provider_key).length;
    expect(byKey).to.be.above(0);
    const note = await more.textContent();
    expect(note).to.contain(`${others.length} more models are not available to this workspace: ${byKey} need a provider key (`);
    expect(note).to.contain('groq');
    expect(await select.getAttribute('aria-describedby')).to.equal(await more.getAttribute('id'));
    await suite.shot(playground.page, 'model-picker', { fullPage: false });
    expect((await axeViolations(playground.page)).filter(serious)).to.deep.equal([]);

    await more.getByRole('link', { name: 'Provider keys' }).click();
    await playground.page.getByRole('heading', { name: /provider keys/i }).first().waitFor();
    expect(new URL(playground.page.url()).pathname).to.equal('/settings/provider-keys');

    // A new key's allow-list is picked from the usable models (every modality).
    const page = playground.page;
    await page.goto(`${gateway.url}/settings/keys`);
    const form = page.getByRole('form', { name: 'Create an API key' });
    await form.locator('summary', { hasText: 'Allowed models' }).click();
    const everyUsable = ((await owner.json('GET', '/v1/models')).body.data as Listed[]).filter((m) => m.available).map((m) => m.id).sort();
    const group = form.getByRole('group', { name: 'Allowed models' });
    expect((await group.getByRole('checkbox').evaluateAll((boxes: any[]) => boxes.map((b) => b.value))).sort()).to.deep.equal(everyUsable);
    expect(await form.getByTestId('more-models').isVisible()).to.equal(true);
    await form.getByLabel('Name').fill('narrow');
    await group.getByRole('checkbox', { name: /^sim-chat-mini / }).check();
    await form.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('new-key').waitFor();
    const keys = (await owner.json('GET', '/v1/organization/api_keys')).body.data as Array<{ name: string; quotas: { models: string[] | null } }>;
    expect(keys.find((k) => k.name === 'narrow')?.quotas.models).to.deep.equal(['sim-chat-mini']);
    expect((await axeViolations(page)).filter(serious)).to.deep.equal([]);
    expect(suite.consoleErrors()).to.deep.equal([]);
  });

  it('at a phone width: fallback chains offer only usable models; failed replies and refused sends link to their fix', async () => {
    const playground = await playgroundAt({ width: 390, height: 844 });
    const page = playground.page;
    const usable = ((await owner.json('GET', '/v1/models')).body.data as Listed[]).filter((m) => m.available).map((m) => m.id);

    await page.goto(`${gateway.url}/settings/fallbacks`);
    const source = page.getByLabel('Source model');
    // The options come with the models' list, after the select itself.
    await source.locator('option[value="sim-chat"]').waitFor({ state: 'attached' });
    const offered = (await playground.optionValues(source)).filter(Boolean);
    expect(offered.sort()).to.deep.equal(usable.sort());
    expect(await page.getByTestId('more-models').getByRole('link', { name: 'Provider keys' }).isVisible()).to.equal(true);
    expect((await axeViolations(page)).filter(serious)).to.deep.equal([]);

    // A provider throttling on every attempt: the reply fails, says to wait, and links to Fallback chains.
    const throttled = await playground.newChat();
    await playground.chooseModel('sim-chat-fail-429');
    const waitOut = await playground.sendAndFail('Hello?');
    expect(await waitOut.textContent()).to.contain('wait a minute and send again');
    expect(await waitOut.getByRole('link', { name: 'Set a fallback chain' }).getAttribute('href')).to.equal('/settings/fallbacks');
    const stored = (await owner.json('GET', `/api/playground/chats/${throttled}`)).body.messages.at(-1);
    expect(stored).to.include({ status: 'failed', error_code: 'upstream_rate_limited' });

    // A model whose provider has no key: the send is refused before any reply, with the way to add one.
    expect((await owner.json('PATCH', `/api/playground/chats/${throttled}`, { model: 'gpt-4o-mini' })).status).to.equal(200);
    await playground.open(throttled);
    await page.getByRole('textbox', { name: 'Message' }).fill('Hello again');
    await page.getByRole('button', { name: 'Send' }).click();
    const refused = page.locator('form.composer').getByRole('alert');
    await refused.waitFor();
    expect(await refused.textContent()).to.contain("add this workspace's own openai key");
    expect(await refused.getByRole('link', { name: 'Add a key for this provider in Provider keys' }).getAttribute('href')).to.equal('/settings/provider-keys');
    expect((await axeViolations(page)).filter(serious)).to.deep.equal([]);

    // No credits left (all held): the reply fails with a link to Billing.
    const me = (await owner.json('GET', '/api/me')).body;
    const { totalMicro } = await getBalance(gateway.runtime.db, me.workspace.id);
    await reserve(gateway.runtime.db, { reservationId: `test-drain-${randomBytes(4).toString('hex')}`, workspaceId: me.workspace.id, amountMicro: totalMicro });
    await playground.newChat();
    const broke = await playground.sendAndFail('Anything?');
    expect(await broke.textContent()).to.contain('Insufficient credits');
    expect(await broke.getByRole('link', { name: 'Add credits in Billing' }).getAttribute('href')).to.equal('/settings/billing');
    expect((await axeViolations(page)).filter(serious)).to.deep.equal([]);
    expect(suite.consoleErrors().filter((e) => !/status of (402|503)/.test(e))).to.deep.equal([]);
  });
});
