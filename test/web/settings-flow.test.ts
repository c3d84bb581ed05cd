/**
 * The web app end to end in Chromium: sign-up with the CAPTCHA solved by the widget, verification by
 * e-mail, an invited developer who makes a key with a preset, the key's charge on the billing page, a
 * viewer without keys, and a revoked key. Screenshots of the main pages go to docs/screenshots/.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { repoRoot } from '../../core/paths';
import { freePort } from '../../stack/processes';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { SmtpSink } from '../support/notification-sinks';
import { PASSWORD, linkFromMail, uniqueEmail } from '../support/people';
import { chromiumMissing, consoleErrors, launchChromium } from './browser';
import { InvitePage, SignUpPage } from './pages/auth-pages';
import { BillingPage, KeysPage, MembersPage, SettingsMenu } from './pages/settings-pages';

const SCREENSHOTS = path.join(repoRoot, 'docs', 'screenshots');

describe('web app: people and Settings in Chromium', function () {
  this.timeout(240_000);
  let gateway: TestGateway;
  let smtp: SmtpSink;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const pageErrors: string[][] = [];

  before(async function () {
    const missing = chromiumMissing();
    if (missing) {
      console.warn(`\n  !!! SKIPPING BROWSER TESTS: ${missing}\n`);
      this.skip();
    }
    smtp = new SmtpSink(await freePort());
    await smtp.start();
    gateway = await startTestGateway({ env: { SMTP_URL: smtp.url, CAPTCHA_MAX_COUNTER: '400' } });
    browser = await launchChromium();
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await gateway?.stop();
    await smtp?.stop();
  });

  async function person(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    contexts.push(context);
    const page = await context.newPage();
    pageErrors.push(consoleErrors(page));
    return page;
  }
  // The catalog is long: its screenshot shows the first screen only.
  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: name !== 'models' });

  async function signUpAndVerify(page: Page, name: string, email: string, screenshot?: string): Promise<void> {
    const signUp = new SignUpPage(page, gateway.url);
    await signUp.open();
    await signUp.fill(name, email, PASSWORD);
    await signUp.solveCaptcha();
    if (screenshot) await shot(page, screenshot);
    await signUp.submit();
    const link = await linkFromMail(smtp, email, '/verify?token=');
    await page.goto(link.toString());
    await page.getByRole('navigation', { name: 'Settings' }).waitFor();
  }

  it('signs up, invites a developer who makes a key, sees the charge, and revokes the key', async () => {
    const ownerEmail = uniqueEmail('owner');
    const devEmail = uniqueEmail('developer');
    const owner = await person();
    await signUpAndVerify(owner, 'Olivia Owner', ownerEmail, 'sign-up');

    const members = new MembersPage(owner, gateway.url);
    await members.open();
    await members.invite(devEmail, 'developer');

    const dev = await person();
    await signUpAndVerify(dev, 'Dev Eloper', devEmail);
    await new InvitePage(dev).accept((await linkFromMail(smtp, devEmail, '/invite?token=')).toString());
    expect(await dev.getByText(`${devEmail} · developer`).count()).to.equal(1);

    const keys = new KeysPage(dev, gateway.url);
    await keys.open();
    const key = await keys.create('ci', 'starter');
    expect(key).to.match(/^sk-gw-/);
    await shot(dev, 'api-keys');

    const client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'Hello' }] });
    expect(completion.choices[0].message.content).to.be.a('string');

    const billing = new BillingPage(owner, gateway.url);
    await billing.open();
    expect(await billing.spent()).to.be.greaterThan(0);
    expect(await billing.ledgerKinds()).to.include('settle');
    await shot(owner, 'billing');

    await members.open();
    await members.setRole(devEmail, 'viewer');
    expect(await members.roleOf(devEmail)).to.equal('viewer');
    await shot(owner, 'members');

    const menu = new SettingsMenu(dev, gateway.url);
    await menu.open('/settings/members');
    expect(await menu.entries()).to.not.include('API keys');
    const viewerApi = await dev.request.get(`${gateway.url}/v1/organization/api_keys`);
    expect(viewerApi.status()).to.equal(403);

    const ownerKeys = new KeysPage(owner, gateway.url);
    await ownerKeys.open();
    await ownerKeys.revoke('ci');
    const refused = await client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'Hello' }] }).then(() => null, (err) => err);
    expect(refused?.status).to.equal(401);

    for (const [pagePath, name] of [['/settings/models', 'models'], ['/settings/fallbacks', 'fallback-chains'], ['/settings/alerts', 'budget-alerts']] as const) {
      await new SettingsMenu(owner, gateway.url).open(pagePath);
      await owner.getByRole('table').first().or(owner.locator('.empty').first()).waitFor();
      await shot(owner, name);
    }
    expect(pageErrors.flat(), 'console errors').to.deep.equal([]);
  });
});
