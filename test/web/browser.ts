/**
 * Chromium for browser tests: Debian's package (/usr/bin/chromium), driven by playwright-core. Without it,
 * browser tests are skipped with a loud message on a developer machine, and fail in CI (.ci/run installs it).
 */
import fs from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function chromiumMissing(): string | null {
  if (fs.existsSync(CHROMIUM)) return null;
  const message = `Chromium not found at ${CHROMIUM}: browser tests need it (apt-get install chromium).`;
  if (process.env.CI === 'true') throw new Error(message);
  return message;
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** Console errors and uncaught exceptions of a page, to assert there were none. */
export function consoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (msg) => { if (msg.type() === 'error') errors.push(`${page.url()}: ${msg.text()}`); });
  page.on('pageerror', (err) => errors.push(`${page.url()}: ${err.message}`));
  return errors;
}
