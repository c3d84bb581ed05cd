/**
 * Destructive actions ask first, in one accessible dialog: transferring ownership asks to type the
 * workspace's name; changing a role, removing a member, revoking a key, deleting a budget alert and removing
 * a fallback chain ask once. Each dialog is a labelled modal alertdialog that takes the focus and keeps it,
 * closes on Escape (nothing done) with the focus back on its opener, and passes axe-core.
 */
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import type { TestGateway } from '../support/gateway';
import type { SmtpSink } from '../support/notification-sinks';
import { invitedMember, signUp, type Session } from '../support/people';
import { axeViolations } from './axe';
import { browserSuite } from './browser';
import type { ConfirmDialogPage } from './pages/confirm-dialog';
import { BudgetAlertsPage, FallbackChainsPage, KeysPage, MembersPage } from './pages/settings-pages';

/** Browser globals, for the functions this file runs in the page (the tests compile without the DOM's types). */
declare const document: any;

describe('web app: confirmations in Chromium', function () {
  this.timeout(240_000);
  const suite = browserSuite();
  let gateway: TestGateway;
  let smtp: SmtpSink;
  let owner: Session;
  let page: Page;
  let workspaceName: string;
  before(async () => {
    ({ gateway, smtp } = suite);
    owner = await signUp(gateway.url, smtp, 'confirmer');
    workspaceName = (await owner.json('GET', '/api/me')).body.workspace.name;
    page = await suite.newPage({ viewport: { width: 1280, height: 860 }, cookie: owner.cookie });
  });

  const roleOf = async (email: string) => ((await owner.json('GET', '/v1/organization/users')).body.data as Array<{ email: string; role: string }>).find((u) => u.email === email)?.role;

  /** What every confirmation must be: a labelled modal alertdialog holding the focus, clean under axe. */
  async function expectAccessibleDialog(dialog: ConfirmDialogPage, title: string | RegExp): Promise<void> {
    const name = await dialog.name();
    if (typeof title === 'string') expect(name).to.equal(title);
    else expect(name).to.match(title);
    expect(await dialog.isModal(), 'aria-modal, shown modal').to.equal(true);
    expect(await dialog.hasFocus(), 'focus moved in').to.equal(true);
    expect(await dialog.tabStaysInside(5), 'Tab stays inside').to.equal(true);
    expect(await dialog.tabStaysInside(5, true), 'Shift+Tab stays inside').to.equal(true);
    expect(await axeViolations(page, 'dialog[open]'), 'axe, the dialog').to.deep.equal([]);
  }

  /** Escape closes it with nothing done, and the focus is back on what opened it. */
  async function expectEscapeReturnsFocus(dialog: ConfirmDialogPage, opener: string): Promise<void> {
    await dialog.escape();
    expect(await dialog.focused()).to.equal(opener);
  }

  it('changing a role asks once; Cancel and Escape leave it as it was', async () => {
    const member = await invitedMember(gateway.url, smtp, owner, 'role-target', 'viewer');
    const members = new MembersPage(page, gateway.url);
    await members.open();
    let dialog = await members.pickRole(member.email, 'developer');
    await expectAccessibleDialog(dialog, `Change the role of ${member.email}?`);
    await expectEscapeReturnsFocus(dialog, `Role of ${member.email}`);
    expect(await roleOf(member.email)).to.equal('viewer');
    expect(await members.roleOf(member.email), 'the select shows the role as it is').to.equal('viewer');
    dialog = await members.pickRole(member.email, 'developer');
    await dialog.cancel();
    expect(await roleOf(member.email)).to.equal('viewer');
    await members.setRole(member.email, 'developer');
    expect(await roleOf(member.email)).to.equal('developer');
    expect(await members.roleOf(member.email)).to.equal('developer');
  });

  it('removing a member asks once', async () => {
    const member = await invitedMember(gateway.url, smtp, owner, 'remove-target', 'developer');
    const members = new MembersPage(page, gateway.url);
    await members.open();
    const dialog = await members.ask('Remove', member.email);
    await expectAccessibleDialog(dialog, `Remove ${member.email}?`);
    await expectEscapeReturnsFocus(dialog, `Remove ${member.email}`);
    expect(await roleOf(member.email)).to.equal('developer');
    await (await members.ask('Remove', member.email)).confirm('Remove member');
    await page.getByRole('button', { name: `Remove ${member.email}` }).waitFor({ state: 'detached' });
    expect(await members.members()).to.not.include(member.email);
    expect(await roleOf(member.email)).to.equal(undefined);
  });

  it('revoking a key asks once', async () => {
    const created = await owner.json('POST', '/v1/organization/api_keys', { name: 'doomed', preset: 'custom' });
    expect(created.status).to.equal(201);
    const keys = new KeysPage(page, gateway.url);
    await keys.open();
    const dialog = await keys.askRevoke('doomed');
    await expectAccessibleDialog(dialog, 'Revoke the key “doomed”?');
    await expectEscapeReturnsFocus(dialog, 'Revoke doomed');
    const live = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${created.body.value}` } });
    expect(live.status, 'not revoked by Escape').to.equal(200);
    await keys.revoke('doomed');
    expect((await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${created.body.value}` } })).status).to.equal(401);
  });

  it('deleting a budget alert asks once', async () => {
    const alert = await owner.json('POST', '/v1/budget/alerts', { threshold_type: 'credits', threshold: 50, channels: { email: { to: ['ops@example.com'] } } });
    expect(alert.status).to.equal(201);
    const alerts = new BudgetAlertsPage(page, gateway.url);
    await alerts.open();
    const dialog = await alerts.askDelete('50 credits');
    await expectAccessibleDialog(dialog, 'Delete this budget alert?');
    await expectEscapeReturnsFocus(dialog, 'Delete the alert at 50 credits');
    expect(await alerts.thresholds()).to.deep.equal(['50 credits']);
    await (await alerts.askDelete('50 credits')).confirm('Delete alert');
    await page.getByText('No alerts').waitFor();
    expect((await owner.json('GET', '/v1/budget/alerts')).body.data).to.deep.equal([]);
  });

  it('removing a fallback chain asks once', async () => {
    expect((await owner.json('PUT', '/v1/fallback-chains/sim-chat', { chain: ['sim-chat-mini'] })).status).to.equal(200);
    const chains = new FallbackChainsPage(page, gateway.url);
    await chains.open();
    const dialog = await chains.askRemove('sim-chat');
    await expectAccessibleDialog(dialog, 'Remove the fallback chain of sim-chat?');
    await expectEscapeReturnsFocus(dialog, 'Remove the chain of sim-chat');
    expect(await chains.models()).to.deep.equal(['sim-chat']);
    await (await chains.askRemove('sim-chat')).confirm('Remove chain');
    await page.getByText('No fallback chains').waitFor();
    expect((await owner.json('GET', '/v1/fallback-chains')).body.data).to.deep.equal([]);
  });

  it("transferring ownership asks to type the workspace's name", async () => {
    const viewer = await invitedMember(gateway.url, smtp, owner, 'heir', 'viewer');
    const members = new MembersPage(page, gateway.url);
    await members.open();
    const dialog = await members.ask('Make owner', viewer.email);
    await expectAccessibleDialog(dialog, `Transfer ownership to ${viewer.email}?`);
    expect(await page.evaluate(() => document.activeElement?.tagName), 'the name field has the focus').to.equal('INPUT');
    expect(await dialog.confirmEnabled('Transfer ownership'), 'nothing typed').to.equal(false);
    await dialog.type(workspaceName.toUpperCase());
    expect(await dialog.confirmEnabled('Transfer ownership'), 'not the exact name').to.equal(false);
    await page.keyboard.press('Enter');
    expect(await roleOf(viewer.email), 'Enter with the wrong name does nothing').to.equal('viewer');
    await expectEscapeReturnsFocus(dialog, `Make ${viewer.email} owner`);
    expect(await roleOf(viewer.email)).to.equal('viewer');

    const again = await members.ask('Make owner', viewer.email);
    await again.type(workspaceName);
    expect(await again.confirmEnabled('Transfer ownership')).to.equal(true);
    await again.confirm('Transfer ownership');
    await page.getByRole('button', { name: `Make ${viewer.email} owner` }).waitFor({ state: 'detached' });
    expect(await roleOf(viewer.email)).to.equal('owner');
    expect(await roleOf(owner.email)).to.equal('admin');
    expect(suite.consoleErrors(), 'console errors').to.deep.equal([]);
  });
});
