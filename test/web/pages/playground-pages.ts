/** Page objects for the Playground: the chat list, a chat (composer, messages, receipts, sharing) and the compare view. */
import type { Locator, Page } from 'playwright-core';

export class PlaygroundPage {
  constructor(readonly page: Page, private readonly base: string) {}

  async open(chatId = ''): Promise<void> {
    await this.page.goto(`${this.base}/playground${chatId ? `/${chatId}` : ''}`);
  }

  async newChat(): Promise<string> {
    await this.open();
    await this.page.getByRole('button', { name: 'New chat' }).click();
    await this.page.getByRole('textbox', { name: 'Message' }).waitFor();
    return this.page.url().split('/').pop() as string;
  }

  /** Chooses the chat's model in its "Model and parameters" panel (opened if closed); resolves once it is saved. */
  async chooseModel(model: string): Promise<void> {
    const panel = this.page.locator('details.settings');
    if (!(await panel.evaluate((d: any) => d.open))) await panel.locator('summary').click();
    const saved = this.page.waitForResponse((res) => res.request().method() === 'PATCH' && res.url().includes('/api/playground/') && res.ok());
    // The picker's label wraps its select, so the select's name carries the chosen option too: found by its label's text.
    await panel.locator('label.field', { has: this.page.locator('span', { hasText: /^Model$/ }) }).locator('select').selectOption(model);
    await saved;
  }

  /** Opens the chat's "Model and parameters" panel (when closed) and returns its Model picker: the select and the line under it. */
  async modelPicker(): Promise<{ select: Locator; more: Locator }> {
    const panel = this.page.locator('details.settings');
    if (!(await panel.evaluate((d: any) => d.open))) await panel.locator('summary').click();
    const picker = panel.locator('.picker', { has: this.page.locator('span', { hasText: /^Model$/ }) });
    return { select: picker.locator('select'), more: picker.getByTestId('more-models') };
  }

  /** The values of a select's options (every group's). */
  async optionValues(select: Locator): Promise<string[]> {
    return select.locator('option').evaluateAll((options: any[]) => options.map((o) => o.value));
  }

  /** Sends a message and waits for its reply to fail; returns the reply's alert (its error and the fix's link). */
  async sendAndFail(text: string): Promise<Locator> {
    await this.send(text);
    const reply = this.page.locator('article.assistant').last();
    await reply.and(this.page.locator('[data-status="failed"]')).waitFor({ timeout: 90_000 });
    return reply.getByRole('alert');
  }

  /** Sends a message and waits until its reply is on the page (running or done). */
  async send(text: string): Promise<void> {
    const replies = this.page.locator('article.assistant');
    const before = await replies.count();
    await this.page.getByRole('textbox', { name: 'Message' }).fill(text);
    await this.page.getByRole('button', { name: 'Send' }).click();
    await replies.nth(before).waitFor();
  }

  /** Types lines as a person does (Shift+Enter between them) and sends with Enter alone; waits for the reply. */
  async sendByKeyboard(lines: string[]): Promise<void> {
    const replies = this.page.locator('article.assistant');
    const before = await replies.count();
    const box = this.page.getByRole('textbox', { name: 'Message' });
    await box.click();
    for (const [i, line] of lines.entries()) {
      if (i > 0) await this.page.keyboard.press('Shift+Enter');
      await this.page.keyboard.type(line);
    }
    await this.page.keyboard.press('Enter');
    await replies.nth(before).waitFor();
  }

  async attach(name: string, mimeType: string, buffer: Buffer): Promise<void> {
    await this.page.getByLabel('Attach file').setInputFiles({ name, mimeType, buffer });
    await this.page.getByText(`Attached: ${name}`).waitFor();
  }

  async generateImage(prompt: string): Promise<Locator> {
    await this.page.getByRole('textbox', { name: 'Message' }).fill(prompt);
    await this.page.getByRole('button', { name: 'Generate image' }).click();
    const image = this.page.getByRole('img', { name: 'Generated image' }).last();
    await image.waitFor();
    await this.page.waitForFunction((img: any) => img.complete && img.naturalWidth > 0, await image.elementHandle());
    return image;
  }

  /** Generates speech, video or music from the media panel with the given choices (labels as the panel shows them). */
  async generateMedia(kind: 'Speech' | 'Video' | 'Music', prompt: string, choices: Record<string, string> = {}): Promise<void> {
    await this.page.getByRole('textbox', { name: 'Message' }).fill(prompt);
    await this.page.getByLabel('Generation').selectOption({ label: kind });
    for (const [label, value] of Object.entries(choices)) await this.page.getByLabel(label, { exact: true }).selectOption(value);
    await this.page.getByRole('button', { name: `Generate ${kind.toLowerCase()}` }).click();
  }

  /** Records `ms` of the (fake) microphone in the media panel, then stops, which uploads and transcribes it. */
  async recordAndTranscribe(ms: number): Promise<void> {
    await this.page.getByLabel('Generation').selectOption({ label: 'Transcription' });
    await this.page.getByRole('button', { name: 'Record' }).click();
    await this.page.getByRole('status').filter({ hasText: 'Recording…' }).waitFor();
    await this.page.waitForTimeout(ms);
    await this.page.getByRole('button', { name: 'Stop and transcribe' }).click();
  }

  async regenerate(): Promise<void> {
    await this.page.getByRole('button', { name: 'Regenerate' }).click();
  }

  /** Asks the last reply again (a new branch beside it) and waits for the new reply to settle. */
  async regenerateReply(): Promise<Locator> {
    const position = this.lastReply().getByTestId('branch-position');
    const before = await position.count() ? await position.textContent() : '1/1';
    const count = Number(before?.split('/')[1]);
    await this.regenerate();
    await this.page.getByRole('article', { name: 'assistant message' }).last().getByTestId('branch-position').filter({ hasText: `${count + 1}/${count + 1}` }).waitFor();
    return this.settledReply();
  }

  /** Edits a prompt and resends it (a new branch beside it); waits for its reply to settle. */
  async editPrompt(prompt: Locator, text: string): Promise<Locator> {
    await prompt.getByRole('button', { name: 'Edit' }).click();
    await prompt.getByRole('textbox', { name: 'Edit message' }).fill(text);
    await prompt.getByRole('button', { name: 'Resend' }).click();
    await this.page.getByRole('article', { name: 'user message' }).filter({ hasText: text }).waitFor();
    return this.settledReply();
  }

  /** "< i/n >" of a message: its position among its siblings. */
  async branchPosition(message: Locator): Promise<string> {
    return (await message.getByTestId('branch-position').textContent()) ?? '';
  }

  /** Switches a message to its previous or next sibling and waits until the position shown changed. */
  async switchBranch(message: Locator, to: 'Previous' | 'Next', expected: string): Promise<void> {
    const group = message.getByRole('group', { name: /^Versions of this/ });
    await group.getByRole('button', { name: new RegExp(`^${to} `) }).click();
    await this.page.getByTestId('branch-position').filter({ hasText: expected }).first().waitFor();
  }

  /** Sets a numeric parameter of the chat (Model and parameters) and waits until it is saved. */
  async setParam(name: string, value: string): Promise<void> {
    const details = this.page.locator('details.settings');
    if (!await details.evaluate((d: any) => d.open)) await details.locator('summary').click();
    const saved = this.page.waitForResponse((r) => r.request().method() === 'PATCH' && r.ok());
    await details.getByLabel(name, { exact: true }).fill(value);
    await saved;
  }

  /** The chat list's links (the chats shown: all but archived, or the archived ones in that view). */
  chatLinks(): Locator {
    return this.page.getByRole('navigation', { name: 'Chats' }).getByRole('listitem').getByRole('link');
  }

  async rename(title: string): Promise<void> {
    await this.page.getByRole('button', { name: 'Rename' }).click();
    await this.page.getByRole('textbox', { name: 'Chat title' }).fill(title);
    await this.page.getByRole('button', { name: 'Save title' }).click();
    await this.page.getByRole('heading', { level: 1, name: title }).waitFor();
  }

  /** Exports the chat and returns the downloaded file's name and text. */
  async exportChat(format: 'Markdown' | 'JSON'): Promise<{ name: string; text: string }> {
    const download = this.page.waitForEvent('download');
    await this.page.getByRole('button', { name: `Export ${format}` }).click();
    const file = await download;
    const chunks: Buffer[] = [];
    for await (const chunk of await file.createReadStream()) chunks.push(chunk as Buffer);
    return { name: file.suggestedFilename(), text: Buffer.concat(chunks).toString('utf8') };
  }

  /** Shows the archived chats in the list, or the others again. */
  async toggleArchivedView(on: boolean): Promise<void> {
    const toggle = this.page.getByRole('button', { name: 'Archived', exact: true });
    if ((await toggle.getAttribute('aria-pressed')) !== String(on)) await toggle.click();
    await this.page.getByRole('button', { name: 'Archived', exact: true, pressed: on }).waitFor();
  }

  lastReply(): Locator {
    return this.page.getByRole('article', { name: 'assistant message' }).last();
  }

  /** The last reply once its run settled (stored text and receipt shown). */
  async settledReply(): Promise<Locator> {
    const count = await this.page.locator('article.assistant').count();
    const reply = this.page.locator('article.assistant').nth(count - 1);
    await reply.and(this.page.locator('[data-status=completed]')).getByTestId('receipt-credits').waitFor({ timeout: 30_000 });
    return reply;
  }

  async receiptCredits(reply: Locator): Promise<number> {
    return Number((await reply.getByTestId('receipt-credits').textContent())?.replace(/,/g, ''));
  }

  async shareWith(email: string, access: 'read' | 'continue'): Promise<void> {
    await this.page.getByRole('button', { name: 'Share' }).click();
    const dialog = this.page.getByRole('dialog', { name: 'Share chat' });
    await dialog.getByLabel(`Access for ${email}`).selectOption(access);
    await dialog.getByRole('button', { name: 'Save sharing' }).click();
    await dialog.waitFor({ state: 'detached' });
  }

  async bookmarkLastReply(): Promise<void> {
    await this.lastReply().getByRole('button', { name: 'Bookmark' }).click();
    await this.lastReply().getByRole('button', { name: 'Bookmarked' }).waitFor();
  }

  bookmarks(): Locator {
    return this.page.getByRole('region', { name: 'Bookmarks' }).getByRole('link');
  }

  async compare(prompt: string, models: [string, string]): Promise<Locator[]> {
    await this.open('compare');
    await this.page.getByLabel('Model 1').selectOption(models[0]);
    await this.page.getByLabel('Model 2').selectOption(models[1]);
    await this.page.getByRole('textbox', { name: 'Prompt' }).fill(prompt);
    await this.page.getByRole('button', { name: 'Compare' }).click();
    const columns = this.page.locator('.compare-column');
    for (const i of [0, 1]) await columns.nth(i).locator('article.assistant[data-status=completed]').getByTestId('receipt-credits').waitFor({ timeout: 30_000 });
    return [columns.nth(0), columns.nth(1)];
  }
}
