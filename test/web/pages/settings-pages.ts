/** Page objects for Settings: the menu, members and invitations, API keys, billing. */
import type { Page } from 'playwright-core';

export class SettingsMenu {
  constructor(private readonly page: Page, private readonly base: string) {}

  async open(path: string): Promise<void> {
    await this.page.goto(`${this.base}${path}`);
    await this.page.getByRole('navigation', { name: 'Settings' }).waitFor();
  }

  async entries(): Promise<string[]> {
    return this.page.getByRole('navigation', { name: 'Settings' }).getByRole('link').allTextContents();
  }
}

export class MembersPage {
  constructor(private readonly page: Page, private readonly base: string) {}

  async open(): Promise<void> {
    await this.page.goto(`${this.base}/settings/members`);
    await this.page.getByRole('table', { name: 'People in this workspace' }).waitFor();
  }

  /** Invites with the keyboard only: type the address, pick the role, Enter submits. */
  async invite(email: string, role: string): Promise<void> {
    const form = this.page.getByRole('form', { name: 'Invite someone' });
    await form.getByLabel('E-mail').focus();
    await this.page.keyboard.type(email);
    await form.getByLabel('Role').selectOption(role);
    await form.getByLabel('E-mail').press('Enter');
    await this.page.getByText(`Invitation sent to ${email}.`).waitFor();
  }

  async setRole(email: string, role: string): Promise<void> {
    await this.page.getByLabel(`Role of ${email}`).selectOption(role);
    await this.page.waitForResponse((r) => r.url().includes('/v1/organization/users') && r.request().method() === 'GET');
  }

  async roleOf(email: string): Promise<string> {
    const row = this.page.getByRole('row').filter({ hasText: email });
    const select = row.getByRole('combobox');
    return (await select.count()) ? select.inputValue() : (await row.getByRole('cell').nth(2).textContent()) ?? '';
  }
}

export class KeysPage {
  constructor(private readonly page: Page, private readonly base: string) {}

  async open(): Promise<void> {
    await this.page.goto(`${this.base}/settings/keys`);
    await this.page.getByRole('heading', { name: 'API keys' }).waitFor();
  }

  /** Creates a key with a quota preset and returns its secret, shown once. */
  async create(name: string, preset: string): Promise<string> {
    const form = this.page.getByRole('form', { name: 'Create an API key' });
    await form.getByLabel('Name').fill(name);
    await form.getByLabel('Quota preset').selectOption(preset);
    await form.getByRole('button', { name: 'Create key' }).click();
    const secret = (await this.page.getByTestId('new-key').textContent()) ?? '';
    await this.page.getByRole('table', { name: 'Keys of this workspace' }).getByRole('row').filter({ hasText: name }).waitFor();
    return secret;
  }

  async revoke(name: string): Promise<void> {
    await this.page.getByRole('button', { name: `Revoke ${name}` }).click();
    await this.page.getByRole('row').filter({ hasText: name }).getByText('revoked').waitFor();
  }
}

export class BillingPage {
  constructor(private readonly page: Page, private readonly base: string) {}

  async open(): Promise<void> {
    await this.page.goto(`${this.base}/settings/billing`);
    await this.page.getByTestId('balance').waitFor();
  }

  async spent(): Promise<number> {
    return Number((await this.page.getByTestId('spent').textContent())?.replace(/,/g, ''));
  }

  /** The usage bars grouped as the tab `group` (e.g. 'By member') shows them: label -> credits. */
  async usageBars(group: string): Promise<Map<string, number>> {
    await this.page.getByRole('tab', { name: group }).click();
    const bars = this.page.getByRole('list', { name: 'Credits charged' }).getByRole('listitem');
    await bars.first().waitFor();
    const rows = new Map<string, number>();
    for (const bar of await bars.all()) {
      rows.set((await bar.locator('.bar-label').textContent()) ?? '', Number((await bar.locator('.bar-value').textContent())?.replace(/,/g, '')));
    }
    return rows;
  }

  async ledgerKinds(): Promise<string[]> {
    await this.page.getByRole('table', { name: 'Latest credit movements' }).waitFor();
    return this.page.getByRole('table', { name: 'Latest credit movements' }).locator('tbody tr td:nth-child(2)').allTextContents();
  }
}
