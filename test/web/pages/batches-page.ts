/** Page object for Settings > Batches: the create form, a batch's item (status, counts, cost), cancel and downloads. */
import fs from 'node:fs';
import type { Locator, Page } from 'playwright-core';
import { ConfirmDialogPage } from './confirm-dialog';

export class BatchesPage {
  constructor(readonly page: Page, private readonly base: string) {}

  async open(): Promise<void> {
    await this.page.goto(`${this.base}/settings/batches`);
    await this.page.getByRole('heading', { name: 'Batches', level: 1 }).waitFor();
    await this.page.waitForLoadState('networkidle');
    await this.page.getByText('Loading batches…').waitFor({ state: 'detached' });
  }

  private get form(): Locator {
    return this.page.getByRole('form', { name: 'Create a batch' });
  }

  /** Uploads `jsonl` as a new input file and creates a batch on `endpoint`; returns the new batch's id. */
  async create(opts: { jsonl: string; filename: string; endpoint: string; description: string }): Promise<string> {
    await this.form.getByLabel('Input file', { exact: true }).selectOption({ label: 'Upload a JSONL file' });
    await this.form.getByLabel('JSONL file', { exact: true }).setInputFiles({ name: opts.filename, mimeType: 'application/jsonl', buffer: Buffer.from(opts.jsonl) });
    await this.form.getByLabel('Endpoint', { exact: true }).selectOption(opts.endpoint);
    await this.form.getByLabel('Description (optional)', { exact: true }).fill(opts.description);
    await this.form.getByRole('button', { name: 'Create batch' }).click();
    const item = this.page.getByRole('listitem', { name: new RegExp(`^Batch ${escape(opts.description)} \\(`) });
    await item.waitFor();
    return (await item.getAttribute('data-batch-id'))!;
  }

  /** The choices of the input file: uploading one, then the API files with purpose batch. */
  async inputFileOptions(): Promise<string[]> {
    return this.form.getByLabel('Input file', { exact: true }).locator('option').allTextContents();
  }

  item(id: string): Locator {
    return this.page.locator(`li[data-batch-id="${id}"]`);
  }

  async status(id: string): Promise<string> {
    return (await this.item(id).getByTestId('batch-status').textContent())!.trim();
  }

  /** Waits (the page refreshes itself while a batch runs; no reload here) until the batch shows `status`. */
  async waitForStatus(id: string, status: string | RegExp, timeout = 120_000): Promise<void> {
    try {
      await this.item(id).getByTestId('batch-status').filter({ hasText: status }).waitFor({ timeout });
    } catch (err) {
      // Say where the batch stood, not only that the wait ran out.
      throw new Error(`${id} never showed '${status}': it shows '${await this.status(id)}', ${await this.counts(id)} (${(err as Error).message.split('\n')[0]})`);
    }
  }

  async counts(id: string): Promise<string> {
    return (await this.item(id).getByTestId('batch-counts').textContent())!.trim();
  }

  async cost(id: string): Promise<string> {
    return (await this.item(id).getByTestId('batch-credits').textContent())!.trim();
  }

  /** Clicks a download link of the batch and returns the downloaded file's text. */
  async download(id: string, link: 'Download output' | 'Download errors'): Promise<string> {
    const [download] = await Promise.all([this.page.waitForEvent('download'), this.item(id).getByRole('link', { name: link }).click()]);
    return fs.readFileSync((await download.path())!, 'utf8');
  }

  /** Cancels through the confirmation dialog; returns the dialog's name. */
  async cancel(id: string): Promise<string> {
    await this.page.getByRole('button', { name: `Cancel ${id}` }).click();
    const dialog = new ConfirmDialogPage(this.page);
    const name = await dialog.name();
    await dialog.confirm('Cancel batch');
    return name;
  }
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
