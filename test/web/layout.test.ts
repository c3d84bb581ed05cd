/**
 * Every page of the app at a phone's width (390x844) and a desktop's (1440x900), in the light and the dark
 * scheme (a chat with branches, an invitation link signed out among them): one h1 per page, no sideways scroll, and no serious or critical axe-core finding. Screenshots of the
 * phone layout in both schemes go to docs/screenshots/ (with UPDATE_SCREENSHOTS=1).
 */
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import type { TestGateway } from '../support/gateway';
import type { SmtpSink } from '../support/notification-sinks';
import { linkFromMail, signUp, uniqueEmail, type Session } from '../support/people';
import { axeViolations } from './axe';
import { browserSuite } from './browser';
import { PlaygroundPage } from './pages/playground-pages';

/** Browser globals, for the functions this file runs in the page (the tests compile without the DOM's types). */
declare const document: any;
declare const window: any;

const SIZES = [{ name: 'phone', width: 390, height: 844 }, { name: 'desktop', width: 1440, height: 900 }] as const;
const SIGNED_IN = ['/settings/members', '/settings/keys', '/settings/billing', '/settings/requests', '/settings/batches', '/settings/alerts', '/settings/fallbacks', '/settings/models', '/playground'];
const SIGNED_OUT = ['/sign-in', '/sign-up', '/forgot'];

/** Waits until the page's data arrived: its main region shown, no request in flight, nothing loading. */
async function settled(page: Page): Promise<void> {
  await page.locator('main').first().waitFor();
  await page.waitForLoadState('networkidle');
  await page.getByText(/^Loading /).first().waitFor({ state: 'detached', timeout: 10_000 });
}

async function pageFindings(page: Page, path: string): Promise<string[]> {
  const findings: string[] = [];
  const h1s = await page.locator('h1').count();
  if (h1s !== 1) findings.push(`${path}: ${h1s} h1 elements`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 0) findings.push(`${path}: scrolls sideways by ${overflow}px`);
  for (const v of await axeViolations(page)) {
    if (v.impact === 'serious' || v.impact === 'critical') findings.push(`${path}: ${v.id} (${v.impact}) ${v.help}: ${v.nodes.slice(0, 4).join(' ')}${v.nodes.length > 4 ? ` and ${v.nodes.length - 4} more` : ''}`);
  }
  return findings;
}

describe('web app: layout, dark mode and accessibility on every page', function () {
  this.timeout(300_000);
  const suite = browserSuite();
  let gateway: TestGateway;
  let smtp: SmtpSink;
  let owner: Session;
  let chatPath: string;
  let invitePath: string;

  before(async () => {
    ({ gateway, smtp } = suite);
    owner = await signUp(gateway.url, smtp, 'lana');
    const page = await suite.newPage({ viewport: { width: 1440, height: 900 }, cookie: owner.cookie });
    const playground = new PlaygroundPage(page, gateway.url);
    chatPath = `/playground/${await playground.newChat()}`;
    await playground.send('Show **bold** text and a `code` span');
    await playground.settledReply();
    // A reply asked again: the chat shows its branch switcher ("< 2/2 >").
    await playground.regenerateReply();
    await page.close();
    // An invitation link, as a signed-out person sees it.
    const guest = uniqueEmail('layout-guest');
    await owner.json('POST', '/v1/organization/invites', { email: guest, role: 'developer' });
    const link = await linkFromMail(smtp, guest, '/invite?token=');
    invitePath = `${link.pathname}${link.search}`;
  });

  for (const size of SIZES) {
    for (const colorScheme of ['light', 'dark'] as const) {
      it(`${size.name} (${size.width}x${size.height}), ${colorScheme}: one h1, no sideways scroll, no serious axe finding`, async () => {
        const findings: string[] = [];
        const signedIn = await suite.newPage({ viewport: size, cookie: owner.cookie, colorScheme });
        for (const path of [...SIGNED_IN, chatPath]) {
          await signedIn.goto(`${gateway.url}${path}`);
          await settled(signedIn);
          findings.push(...await pageFindings(signedIn, path));
          if (path === chatPath && size.name === 'phone') await suite.shot(signedIn, `phone-chat-${colorScheme}`, { fullPage: false });
          if (path === '/settings/billing' && size.name === 'phone') await suite.shot(signedIn, `phone-billing-${colorScheme}`, { fullPage: false });
        }
        const signedOut = await suite.newPage({ viewport: size, colorScheme });
        for (const path of [...SIGNED_OUT, invitePath]) {
          await signedOut.goto(`${gateway.url}${path}`);
          await settled(signedOut);
          findings.push(...await pageFindings(signedOut, path));
        }
        expect(findings).to.deep.equal([]);
      });
    }
  }

  it('switches the scheme from the top bar, remembered across a reload', async () => {
    const page = await suite.newPage({ viewport: { width: 1440, height: 900 }, cookie: owner.cookie, colorScheme: 'light' });
    await page.goto(`${gateway.url}/settings/members`);
    const background = () => page.evaluate(() => window.getComputedStyle(document.documentElement).backgroundColor);
    const light = await background();
    await page.getByLabel('Theme').selectOption('dark');
    expect(await background()).to.not.equal(light);
    await page.reload();
    await settled(page);
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).to.equal('dark');
    expect(await background()).to.not.equal(light);
    await page.getByLabel('Theme').selectOption('system');
    expect(await background()).to.equal(light);
    // Following the system: its scheme changing changes the page's.
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
  });
});
