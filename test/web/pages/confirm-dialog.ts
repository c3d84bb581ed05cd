/** The confirmation dialog (web/src/confirm.tsx) as a person meets it: its name, focus, typing, Escape. */
import type { Locator, Page } from 'playwright-core';

/** Browser globals, for the functions this file runs in the page (the tests compile without the DOM's types). */
declare const document: any;

export class ConfirmDialogPage {
  constructor(private readonly page: Page) {}

  get dialog(): Locator {
    return this.page.getByRole('alertdialog');
  }

  /** Waits for the dialog and returns its name (the text of the title that labels it). */
  async name(): Promise<string> {
    await this.dialog.waitFor();
    return this.dialog.evaluate((d) => document.getElementById(d.getAttribute('aria-labelledby') ?? '')?.textContent ?? '');
  }

  async isModal(): Promise<boolean> {
    return (await this.dialog.getAttribute('aria-modal')) === 'true' && (await this.dialog.evaluate((d) => (d as { open: boolean }).open && d.matches(':modal')));
  }

  /** Whether the focused element is inside the dialog. */
  async hasFocus(): Promise<boolean> {
    return this.dialog.evaluate((d) => d.contains(document.activeElement));
  }

  /** The label (or text) of the focused element. */
  async focused(): Promise<string> {
    return this.page.evaluate(() => {
      const el = document.activeElement;
      return el?.getAttribute('aria-label') ?? el?.textContent?.trim() ?? '';
    });
  }

  /** Presses Tab `n` times (Shift+Tab when `back`), answering whether focus stayed inside after each. */
  async tabStaysInside(n: number, back = false): Promise<boolean> {
    for (let i = 0; i < n; i += 1) {
      await this.page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
      if (!(await this.hasFocus())) return false;
    }
    return true;
  }

  async type(text: string): Promise<void> {
    await this.dialog.getByRole('textbox').fill(text);
  }

  async confirmEnabled(label: string): Promise<boolean> {
    return this.dialog.getByRole('button', { name: label }).isEnabled();
  }

  async confirm(label: string): Promise<void> {
    await this.dialog.getByRole('button', { name: label }).click();
    await this.dialog.waitFor({ state: 'detached' });
  }

  async cancel(): Promise<void> {
    await this.dialog.getByRole('button', { name: 'Cancel' }).click();
    await this.dialog.waitFor({ state: 'detached' });
  }

  async escape(): Promise<void> {
    await this.page.keyboard.press('Escape');
    await this.dialog.waitFor({ state: 'detached' });
  }
}
