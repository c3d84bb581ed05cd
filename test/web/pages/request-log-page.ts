/** Page object for Settings > Requests: the filters, the rows, a row's details and the CSV link. */
import type { Locator, Page } from 'playwright-core';

export class RequestLogPage {
  constructor(readonly page: Page, private readonly base: string) {}

  async open(): Promise<void> {
    await this.page.goto(`${this.base}/settings/requests`);
    await this.page.getByRole('heading', { name: 'Requests', level: 1 }).waitFor();
    await this.settled();
  }

  /** Fills the filters given (by their labels; selects by option label) and searches. */
  async search(filters: Record<string, string>): Promise<void> {
    const form = this.page.getByRole('form', { name: 'Request log filters' });
    for (const [label, value] of Object.entries(filters)) {
      const field = form.getByLabel(label, { exact: true });
      if (await field.evaluate((el: any) => el.tagName === 'SELECT')) await field.selectOption({ label: value });
      else await field.fill(value);
    }
    await form.getByRole('button', { name: 'Search' }).click();
    await this.settled();
  }

  private async settled(): Promise<void> {
    await this.page.waitForLoadState('networkidle');
    await this.page.getByText('Loading requests…').waitFor({ state: 'detached' });
  }

  rows(): Locator {
    return this.page.locator('tr[data-request-id]');
  }

  async requestIds(): Promise<string[]> {
    return this.rows().evaluateAll((rows: any[]) => rows.map((r) => r.dataset.requestId));
  }

  async empty(): Promise<boolean> {
    return this.page.getByText('No request matches these filters.').isVisible();
  }

  async details(requestId: string): Promise<Locator> {
    await this.page.getByRole('button', { name: `Details of ${requestId}` }).click();
    const details = this.page.locator(`dl[aria-label="Request ${requestId}"]`);
    await details.getByText('Charged').waitFor();
    return details;
  }

  async csvHref(): Promise<string> {
    return (await this.page.getByRole('link', { name: 'Export CSV' }).getAttribute('href'))!;
  }
}
