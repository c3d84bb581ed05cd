/** Page objects for Settings: the menu, members and invitations, API keys, billing, alerts, fallback chains. */
import type { Page } from 'playwright-core';
import { ConfirmDialogPage } from './confirm-dialog';

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

  /** Picks a role in the member's row; the change waits for the confirmation dialog. */
  async pickRole(email: string, role: string): Promise<ConfirmDialogPage> {
    await this.page.getByLabel(`Role of ${email}`).selectOption(role);
    return new ConfirmDialogPage(this.page);
  }

  /** Picks a role and confirms it. */
  async setRole(email: string, role: string): Promise<void> {
    const dialog = await this.pickRole(email, role);
    const refreshed = this.page.waitForResponse((r) => r.url().includes('/v1/organization/users') && r.request().method() === 'GET');
    await dialog.confirm(`Make ${role}`);
    await refreshed;
  }

  /** Clicks the row's action (`Make owner`, `Remove`): its confirmation dialog opens. */
  async ask(action: 'Make owner' | 'Remove', email: string): Promise<ConfirmDialogPage> {
    await this.page.getByRole('button', { name: action === 'Make owner' ? `Make ${email} owner` : `Remove ${email}` }).click();
    return new ConfirmDialogPage(this.page);
  }

  async members(): Promise<string[]> {
    return this.page.getByRole('table', { name: 'People in this workspace' }).locator('tbody tr td:nth-child(2)').allTextContents();
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
    await this.page.getByRole('heading', { name: 'API keys', level: 2 }).waitFor();
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

  /** Clicks the key's Revoke: its confirmation dialog opens. */
  async askRevoke(name: string): Promise<ConfirmDialogPage> {
    await this.page.getByRole('button', { name: `Revoke ${name}` }).click();
    return new ConfirmDialogPage(this.page);
  }

  async revoke(name: string): Promise<void> {
    await (await this.askRevoke(name)).confirm('Revoke key');
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

  /** Shows usage grouped as the tab `group` says (e.g. 'By member') and waits for its chart to be drawn. */
  async usageChart(group: string): Promise<void> {
    await this.page.getByRole('tab', { name: group }).click();
    await this.page.getByRole('tab', { name: group, selected: true }).waitFor();
    const chart = this.page.getByTestId('usage-chart');
    await chart.locator('.recharts-bar-rectangle').first().waitFor();
    await chart.locator('.recharts-cartesian-axis-tick-value').first().waitFor();
  }

  /** The chart's text alternative as a screen reader announces it (its accessible name). */
  async usageChartDescription(): Promise<string> {
    return (await this.page.getByRole('img', { name: /^Bar chart of credits charged/ }).getAttribute('aria-label')) ?? '';
  }

  /** The category labels drawn on the chart's axis (cut when long). */
  async usageChartLabels(): Promise<string[]> {
    return this.page.getByTestId('usage-chart').locator('.recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value').allTextContents();
  }

  /** The computed colours of the chart's axis labels and bars, and of the card behind them (rgb() strings). */
  async usageChartColours(): Promise<{ text: string; bar: string; background: string }> {
    return this.page.getByTestId('usage-chart').evaluate((chart: any) => {
      const style = (el: unknown) => (globalThis as any).getComputedStyle(el);
      return {
        text: style(chart.querySelector('.recharts-cartesian-axis-tick-value')).fill,
        bar: style(chart.querySelector('.recharts-bar-rectangle path')).fill,
        background: style(chart.closest('.card')).backgroundColor,
      };
    });
  }

  /** The usage chart grouped as the tab `group` says, read from its table of values: label -> credits. */
  async usageBars(group: string): Promise<Map<string, number>> {
    await this.usageChart(group);
    const details = this.page.locator('details.chart-values');
    if (!(await details.getAttribute('open'))) await details.getByText('The values as a table').click();
    const table = this.page.getByRole('table', { name: `Credits charged, ${group.toLowerCase()}` });
    await table.waitFor();
    const rows = new Map<string, number>();
    for (const row of await table.locator('tbody tr').all()) {
      rows.set((await row.locator('th').textContent()) ?? '', Number((await row.locator('td').textContent())?.replace(/,/g, '')));
    }
    return rows;
  }

  async ledgerKinds(): Promise<string[]> {
    await this.page.getByRole('table', { name: 'Latest credit movements' }).waitFor();
    return this.page.getByRole('table', { name: 'Latest credit movements' }).locator('tbody tr td:nth-child(2)').allTextContents();
  }

  /** The ledger's rows as the reader sees them: kind, credits, source, the request (model, its hold) and who made it. */
  async ledgerEntries(): Promise<Array<{ kind: string; credits: string; source: string; request: string; madeBy: string }>> {
    const table = this.page.getByRole('table', { name: 'Latest credit movements' });
    await table.waitFor();
    return Promise.all((await table.locator('tbody tr').all()).map(async (row) => {
      const [, kind, credits, source, , madeBy] = await row.locator('td').allTextContents();
      const request = await row.locator('td').nth(4).innerText();
      return { kind, credits, source, request: request.replace(/\s*\n\s*/g, ' | ').trim(), madeBy };
    }));
  }

  /** The ledger's rows as [kind, credits, source]. */
  async ledgerRows(): Promise<string[][]> {
    const table = this.page.getByRole('table', { name: 'Latest credit movements' });
    await table.waitFor();
    return Promise.all((await table.locator('tbody tr').all()).map(async (row) => (await row.locator('td').allTextContents()).slice(1, 4)));
  }

  /** The section where credits are bought (absent without a payment processor). */
  buySection() {
    return this.page.getByRole('region', { name: 'Buy credits' });
  }

  /** Asks for `credits` and sends the browser to the checkout (resolves once the click went through). */
  async buy(credits: number): Promise<void> {
    const section = this.buySection();
    await section.getByLabel('Credits').fill(String(credits));
    await section.getByRole('button', { name: 'Buy credits' }).click();
  }

  /** Who adds credits, when they cannot be bought here (null: the note is absent). */
  async addedByNote(): Promise<string | null> {
    const note = this.page.getByTestId('credits-added-by');
    return (await note.count()) ? note.textContent() : null;
  }

  /** The payments table's rows as [date, amount paid, credits, status, receipt link or '—']. */
  async payments(): Promise<string[][]> {
    const table = this.page.getByRole('table', { name: 'Payments' });
    await table.waitFor();
    return Promise.all((await table.locator('tbody tr').all()).map(async (row) => {
      const cells = await row.locator('td').allTextContents();
      const link = row.getByRole('link', { name: 'Receipt' });
      return [...cells.slice(0, 4), (await link.count()) ? (await link.getAttribute('href')) ?? '' : '—'];
    }));
  }
}

export class BudgetAlertsPage {
  constructor(private readonly page: Page, private readonly base: string) {}

  async open(): Promise<void> {
    await this.page.goto(`${this.base}/settings/alerts`);
    await this.page.getByRole('heading', { name: 'Budget alerts', level: 2 }).waitFor();
  }

  /** Clicks Delete on the alert at `threshold` (as the table shows it, e.g. '50 credits'). */
  async askDelete(threshold: string): Promise<ConfirmDialogPage> {
    await this.page.getByRole('button', { name: `Delete the alert at ${threshold}` }).click();
    return new ConfirmDialogPage(this.page);
  }

  async thresholds(): Promise<string[]> {
    const table = this.page.getByRole('table', { name: 'Alerts of this workspace' });
    return (await table.count()) ? table.locator('tbody tr td:first-child').allTextContents() : [];
  }
}

export class FallbackChainsPage {
  constructor(private readonly page: Page, private readonly base: string) {}

  async open(): Promise<void> {
    await this.page.goto(`${this.base}/settings/fallbacks`);
    await this.page.getByRole('heading', { name: 'Fallback chains', level: 2 }).waitFor();
  }

  async askRemove(model: string): Promise<ConfirmDialogPage> {
    await this.page.getByRole('button', { name: `Remove the chain of ${model}` }).click();
    return new ConfirmDialogPage(this.page);
  }

  async models(): Promise<string[]> {
    const table = this.page.getByRole('table', { name: 'Chains of this workspace' });
    return (await table.count()) ? table.locator('tbody tr td:first-child').allTextContents() : [];
  }
}

export class ProviderKeysPage {
  constructor(private readonly page: Page, private readonly base: string) {}

  async open(): Promise<void> {
    await this.page.goto(`${this.base}/settings/provider-keys`);
    await this.page.getByRole('heading', { name: 'Provider keys', level: 2 }).waitFor();
    await this.page.getByRole('form', { name: 'Add a provider key' }).getByLabel('Provider').locator('option', { hasText: 'openai' }).waitFor({ state: 'attached', timeout: 10_000 })
      .catch(async (err) => { throw new Error(`${err.message}\nPAGE: ${await this.page.locator('main').textContent()}`); });
  }

  /** Picks the provider, types the key and submits; resolves once the gateway answered (saved or refused). */
  async add(provider: string, key: string): Promise<void> {
    const form = this.page.getByRole('form', { name: 'Add a provider key' });
    await form.getByLabel('Provider').selectOption(provider);
    await form.getByLabel('API key').fill(key);
    await form.getByRole('button', { name: 'Test and save key' }).click();
    await form.getByRole('button', { name: 'Test and save key' }).waitFor();
  }

  /** The error shown under the form, or the confirmation of a saved key. */
  async refusal(): Promise<string> {
    const note = this.page.getByRole('region', { name: 'Add a provider key' }).getByRole('alert');
    await note.waitFor();
    return (await note.textContent()) ?? '';
  }

  async saved(): Promise<string> {
    const status = this.page.getByRole('region', { name: 'Add a provider key' }).getByRole('status');
    await status.waitFor();
    return (await status.textContent()) ?? '';
  }

  /** The table's rows as [provider, key as shown]. */
  async keys(): Promise<string[][]> {
    const table = this.page.getByRole('table', { name: 'Provider keys of this workspace' });
    if (!(await table.count())) return [];
    return Promise.all((await table.locator('tbody tr').all()).map(async (row) => (await row.locator('td').allTextContents()).slice(0, 2)));
  }

  async askRemove(provider: string): Promise<ConfirmDialogPage> {
    await this.page.getByRole('button', { name: `Remove the ${provider} key` }).click();
    return new ConfirmDialogPage(this.page);
  }
}
