/** Page objects for the signed-out pages: sign-up (with the ALTCHA widget), sign-in, and an invitation link. */
import type { Page } from 'playwright-core';

export class SignUpPage {
  constructor(private readonly page: Page, private readonly base: string) {}

  async open(): Promise<void> {
    await this.page.goto(`${this.base}/sign-up`);
  }

  async fill(name: string, email: string, password: string): Promise<void> {
    await this.page.getByLabel('Name').fill(name);
    await this.page.getByLabel('E-mail').fill(email);
    await this.page.getByLabel('Password').fill(password);
  }

  /** Ticks the widget's checkbox and waits until the browser solved the proof of work. */
  async solveCaptcha(): Promise<void> {
    // With the keyboard, as a person without a mouse would (the checkbox's drawn tick covers the input).
    await this.page.locator('altcha-widget').getByRole('checkbox').press('Space');
    // The form enables its button once the widget reports a verified payload.
    await this.page.locator('button[type=submit]:enabled').waitFor({ timeout: 60_000 });
  }

  async submit(): Promise<void> {
    await this.page.getByRole('button', { name: 'Create account' }).click();
    await this.page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
  }
}

export class SignInPage {
  constructor(private readonly page: Page, private readonly base: string) {}

  async signIn(email: string, password: string): Promise<void> {
    await this.page.goto(`${this.base}/sign-in`);
    await this.page.getByLabel('E-mail').fill(email);
    await this.page.getByLabel('Password').fill(password);
    await this.page.getByRole('button', { name: 'Sign in' }).click();
    await this.page.getByRole('navigation', { name: 'Settings' }).waitFor();
  }
}

export class InvitePage {
  constructor(private readonly page: Page) {}

  async accept(link: string): Promise<void> {
    await this.page.goto(link);
    await this.page.getByRole('button', { name: 'Accept invitation' }).click();
    await this.page.getByRole('navigation', { name: 'Settings' }).waitFor();
  }
}
