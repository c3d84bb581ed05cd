/**
 * Billing's usage chart and ledger in Chromium, at a desktop's width (light) and a phone's (dark): the chart
 * names keys and members (not their ids), and its text alternative (its accessible name, and a table of the
 * values) says what it draws, equal to the costs API; the ledger names the member on a Playground row and the
 * key on an API row, and shows a request's hold with its release and charge, or with its refund, as one row.
 * axe-core finds nothing serious. A screenshot goes to docs/screenshots/usage-chart.png (UPDATE_SCREENSHOTS=1).
 */
import { expect } from 'chai';
import { invitedMember, signUp, type Session } from '../support/people';
import { newChat, settledChat } from '../support/playground';
import { axeViolations } from './axe';
import { browserSuite } from './browser';
import { BillingPage } from './pages/settings-pages';

const serious = (v: { impact: string | null }) => v.impact === 'serious' || v.impact === 'critical';
/** WCAG's contrast ratio of two rgb() colours. */
function contrast(a: string, b: string): number {
  const luminance = (rgb: string) => {
    const [r, g, bl] = rgb.match(/[\d.]+/g)!.slice(0, 3).map((c) => Number(c) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (light + 0.05) / (dark + 0.05);
}
const shown = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 6 });

describe('web app: usage chart and ledger in Chromium', function () {
  this.timeout(300_000);
  const suite = browserSuite();
  let owner: Session;
  let dev: Session & { userId: string };
  let keyId: string;
  let member: string;

  before(async function () {
    this.timeout(240_000);
    const { gateway, smtp } = suite;
    owner = await signUp(gateway.url, smtp, 'olga');
    dev = await invitedMember(gateway.url, smtp, owner, 'dora', 'developer');
    member = `dora (${dev.email})`;
    const key = (await dev.json('POST', '/v1/organization/api_keys', { name: 'dora-laptop', preset: 'custom' })).body;
    keyId = key.id;
    const chat = (headers: Record<string, string> = {}) => fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key.value}`, ...headers },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'Hello there' }] }),
    }).then(async (res) => { await res.arrayBuffer(); return res.status; });
    expect(await chat()).to.equal(200);
    expect(await chat({ 'x-simulate-failure': '400' })).to.equal(400);
    const c = await newChat(dev, { model: 'sim-chat' });
    expect((await dev.json('POST', `/api/playground/chats/${c.id}/messages`, { content: 'Hello from the Playground' })).status).to.equal(202);
    await settledChat(dev, c.id);
  });

  const sizes = [
    { name: 'desktop', viewport: { width: 1440, height: 900 }, colorScheme: 'light' as const },
    { name: 'phone', viewport: { width: 390, height: 844 }, colorScheme: 'dark' as const },
  ];
  for (const size of sizes) {
    it(`${size.name} (${size.viewport.width}x${size.viewport.height}, ${size.colorScheme}): the chart names keys and members, with its values in words and as a table`, async () => {
      const page = await suite.newPage({ viewport: size.viewport, cookie: owner.cookie, colorScheme: size.colorScheme });
      const billing = new BillingPage(page, suite.gateway.url);
      await billing.open();

      const costs = async (group: string) => ((await owner.json('GET', `/v1/organization/costs?group_by=${group}`)).body.data as any[]).flatMap((b) => b.results);
      const keyCost = (await costs('api_key_id')).find((r) => r.api_key_id === keyId).amount.value as number;
      const byKey = await billing.usageBars('By key');
      expect(byKey.get('dora-laptop')).to.equal(Number(shown(keyCost).replace(/,/g, '')));
      expect([...byKey.keys()]).to.not.include(keyId);
      expect(await billing.usageChartLabels()).to.include('dora-laptop');
      expect(await billing.usageChartDescription()).to.contain(`dora-laptop, ${shown(keyCost)}`);
      expect((await axeViolations(page)).filter(serious), 'axe, usage by key').to.deep.equal([]);
      // axe does not judge the chart's SVG: its labels are text (4.5:1 on the card), its bars graphics (3:1).
      const colours = await billing.usageChartColours();
      expect(contrast(colours.text, colours.background), `axis labels ${colours.text} on ${colours.background}`).to.be.at.least(4.5);
      expect(contrast(colours.bar, colours.background), `bars ${colours.bar} on ${colours.background}`).to.be.at.least(3);

      const byMember = await billing.usageBars('By member');
      expect([...byMember.keys()]).to.have.members([member, `${member} · Playground`]);
      for (const value of byMember.values()) expect(value).to.be.above(0);
      const description = await billing.usageChartDescription();
      expect(description).to.contain(`${member} · Playground, `);
      expect(description).to.not.contain(dev.userId);
      expect((await axeViolations(page)).filter(serious), 'axe, usage by member').to.deep.equal([]);
      if (size.name === 'desktop') {
        await page.getByRole('region', { name: 'Usage (last 30 days)' }).scrollIntoViewIfNeeded();
        await suite.shot(page, 'usage-chart', { fullPage: false });
      }

      const overflow = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth - (globalThis as any).innerWidth);
      expect(overflow, 'no sideways scroll').to.equal(0);
      expect(suite.consoleErrors(), 'console errors').to.deep.equal([]);
    });

    it(`${size.name} (${size.viewport.width}x${size.viewport.height}, ${size.colorScheme}): the ledger names the Playground member and the key, each hold with what ended it`, async () => {
      const page = await suite.newPage({ viewport: size.viewport, cookie: owner.cookie, colorScheme: size.colorScheme });
      const billing = new BillingPage(page, suite.gateway.url);
      await billing.open();
      const entries = await billing.ledgerEntries();
      const api = (await owner.json('GET', '/v1/billing/ledger')).body.data as any[];
      const [playgroundRun, refused, answered] = api;

      // Newest first: the Playground run, the refused API call, the answered one, the plan's grant.
      expect(entries.map((e) => [e.kind, e.madeBy])).to.deep.equal([
        ['settle', `${member} · Playground`], ['refund', 'key dora-laptop'], ['settle', 'key dora-laptop'], ['grant', '—'],
      ]);
      const held = (e: any) => shown(e.hold.held);
      expect(entries[0].request).to.equal(`sim-chat | held ${held(playgroundRun)} · released ${held(playgroundRun)} · charged ${shown(playgroundRun.hold.charged)}`);
      expect(entries[0].credits).to.equal(shown(-playgroundRun.hold.charged));
      expect(entries[1].request).to.equal(`sim-chat | held ${held(refused)} · refunded ${held(refused)}`);
      expect(entries[1].credits).to.equal('0');
      expect(entries[2].request).to.equal(`sim-chat | held ${held(answered)} · released ${held(answered)} · charged ${shown(answered.hold.charged)}`);

      expect((await axeViolations(page)).filter(serious), 'axe, ledger').to.deep.equal([]);
      const overflow = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth - (globalThis as any).innerWidth);
      expect(overflow, 'no sideways scroll').to.equal(0);
      expect(suite.consoleErrors(), 'console errors').to.deep.equal([]);
    });
  }
});
