/**
 * The web app end to end in Chromium: sign-up with the CAPTCHA solved by the widget, verification by
 * e-mail, an invited developer who makes a key with a preset, the key's charge on the billing page, a
 * viewer without keys, and a revoked key. An invitation link opened signed out, whose "create an account"
 * carries the invitation through sign-up and verification into the inviting workspace. Screenshots of the main pages go to docs/screenshots/ (with UPDATE_SCREENSHOTS=1).
 */
import { expect } from 'chai';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import type { TestGateway } from '../support/gateway';
import type { SmtpSink } from '../support/notification-sinks';
import { PASSWORD, linkFromMail, uniqueEmail } from '../support/people';
import { browserSuite } from './browser';
import { InvitePage, SignUpPage } from './pages/auth-pages';
import { BillingPage, KeysPage, MembersPage, SettingsMenu } from './pages/settings-pages';

describe('web app: people and Settings in Chromium', function () {
  this.timeout(240_000);
  const suite = browserSuite();
  let gateway: TestGateway;
  let smtp: SmtpSink;
  before(() => { ({ gateway, smtp } = suite); });

  const person = () => suite.newPage({ viewport: { width: 1280, height: 860 } });
  // The catalog is long: its screenshot shows the first screen only.
  const shot = (page: Page, name: string) => suite.shot(page, name, { fullPage: name !== 'models' });

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

  it('carries an invitation through sign-up: a signed-out person who creates an account from the link joins the inviting workspace', async () => {
    const owner = await person();
    await signUpAndVerify(owner, 'Ines Inviter', uniqueEmail('inviter'));
    const guestEmail = uniqueEmail('guest');
    const members = new MembersPage(owner, gateway.url);
    await members.open();
    await members.invite(guestEmail, 'developer');
    const invite = await linkFromMail(smtp, guestEmail, '/invite?token=');

    const guest = await person();
    await guest.goto(invite.toString());
    await guest.getByText("You are invited to Ines Inviter's workspace as developer").waitFor();
    // Both ways to an account on the page carry the invitation.
    for (const name of ['create an account', 'Create an account']) {
      expect(await guest.getByRole('link', { name, exact: true }).getAttribute('href')).to.include(`invite=${invite.searchParams.get('token')}`);
    }
    await guest.getByRole('link', { name: 'create an account', exact: true }).click();
    await guest.getByRole('heading', { name: 'Create your account' }).waitFor();
    expect(await guest.getByLabel('E-mail').inputValue(), 'the invited address, filled in').to.equal(guestEmail);
    const signUp = new SignUpPage(guest, gateway.url);
    await signUp.fill('Gus Guest', guestEmail, PASSWORD);
    await signUp.solveCaptcha();
    await signUp.submit();
    const verify = await linkFromMail(smtp, guestEmail, '/verify?token=');
    expect(verify.searchParams.get('invite'), 'the invitation rides on the verification link').to.equal(invite.searchParams.get('token'));
    await guest.goto(verify.toString());
    await guest.getByRole('navigation', { name: 'Settings' }).waitFor();
    await guest.getByText(`${guestEmail} · developer`).waitFor();
    const me = (page: Page) => page.evaluate(() => (globalThis as any).fetch('/api/me').then((r: any) => r.json()));
    const [mine, inviter] = [await me(guest), await me(owner)];
    expect(mine.workspace).to.include({ id: inviter.workspace.id, name: "Ines Inviter's workspace", role: 'developer' });
    // The invitation is used: opening its link again says so.
    await guest.goto(invite.toString());
    await guest.getByRole('alert').filter({ hasText: 'This invitation is accepted.' }).waitFor();
  });

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
    expect(suite.consoleErrors(), 'console errors').to.deep.equal([]);
  });
});
