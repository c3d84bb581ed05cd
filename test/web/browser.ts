/**
 * Chromium for browser tests: Debian's package (/usr/bin/chromium), driven by playwright-core. Without it,
 * browser tests are skipped with a loud message on a developer machine, and fail in CI (.ci/run installs it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { repoRoot } from '../../core/paths';
import type { ProviderOptions } from '../../providers/types';
import { freePort } from '../../stack/processes';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { SmtpSink } from '../support/notification-sinks';

const SCREENSHOTS = path.join(repoRoot, 'docs', 'screenshots');

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function chromiumMissing(): string | null {
  if (fs.existsSync(CHROMIUM)) return null;
  const message = `Chromium not found at ${CHROMIUM}: browser tests need it (apt-get install chromium).`;
  if (process.env.CI === 'true') throw new Error(message);
  return message;
}

/**
 * Media capture is faked (a synthetic tone for the microphone, a test pattern for the camera) and its
 * permission prompt granted, so recording in a page works headless and is the same on every machine.
 */
const FAKE_MEDIA = ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream'];

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage', ...FAKE_MEDIA] });
}

/** Console errors and uncaught exceptions of a page, to assert there were none. */
export function consoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (msg) => { if (msg.type() === 'error') errors.push(`${page.url()}: ${msg.text()}`); });
  page.on('pageerror', (err) => errors.push(`${page.url()}: ${err.message}`));
  return errors;
}

export interface BrowserSuite {
  gateway: TestGateway;
  smtp: SmtpSink;
  /** A page in a context of its own (cookies given are set on the gateway's origin), its console watched unless told not to. */
  newPage(opts: { viewport: { width: number; height: number }; cookie?: string; watchConsole?: boolean; colorScheme?: 'light' | 'dark' }): Promise<Page>;
  /** Every watched page's console errors and uncaught exceptions. */
  consoleErrors(): string[];
  /**
   * A screenshot for docs/screenshots/<name>.png, taken only with UPDATE_SCREENSHOTS=1 so that a test run
   * never rewrites the committed pictures (`UPDATE_SCREENSHOTS=1 npm test` refreshes them).
   */
  shot(page: Page, name: string, opts?: { fullPage?: boolean }): Promise<void>;
}

/**
 * The shared set-up of a browser test file: Chromium (skipped loudly outside CI when missing), a local SMTP
 * sink, a real gateway sending its e-mail there, and teardown of all of it. Registers mocha hooks; the
 * returned object is filled once the `before` hook ran.
 */
export function browserSuite(opts: { env?: NodeJS.ProcessEnv; providerOverrides?: Record<string, Partial<ProviderOptions>> } = {}): BrowserSuite {
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  const errors: string[][] = [];
  const suite = {
    async newPage({ viewport, cookie, watchConsole = true, colorScheme = 'light' }) {
      const context = await browser!.newContext({ viewport, colorScheme });
      contexts.push(context);
      if (cookie) {
        const [name, value] = cookie.split('=');
        await context.addCookies([{ name, value, url: suite.gateway.url, httpOnly: true, sameSite: 'Lax' }]);
      }
      const page = await context.newPage();
      if (watchConsole) errors.push(consoleErrors(page));
      return page;
    },
    consoleErrors: () => errors.flat(),
    async shot(page, name, shotOpts = {}) {
      if (process.env.UPDATE_SCREENSHOTS !== '1') return;
      fs.mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: shotOpts.fullPage ?? true });
    },
  } as BrowserSuite;

  before(async function () {
    const missing = chromiumMissing();
    if (missing) {
      console.warn(`\n  !!! SKIPPING BROWSER TESTS: ${missing}\n`);
      this.skip();
    }
    suite.smtp = new SmtpSink(await freePort());
    await suite.smtp.start();
    suite.gateway = await startTestGateway({
      env: { SMTP_URL: suite.smtp.url, CAPTCHA_MAX_COUNTER: '400', ...(opts.env ?? {}) }, providerOverrides: opts.providerOverrides,
    });
    browser = await launchChromium();
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await suite.gateway?.stop();
    await suite.smtp?.stop();
  });
  return suite;
}
