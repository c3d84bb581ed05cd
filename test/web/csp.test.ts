/**
 * The web app under its Content-Security-Policy (no inline scripts; the ALTCHA widget's blob: worker the one
 * outside source): a person signs up (the CAPTCHA solved in the page), confirms the address, walks the
 * Settings pages and chats in the Playground, and not one CSP violation is reported. Token pages send
 * `Referrer-Policy: no-referrer`.
 */
import { expect } from 'chai';
import { APP_CONTENT_SECURITY_POLICY } from '../../api/http/static';
import type { TestGateway } from '../support/gateway';
import type { SmtpSink } from '../support/notification-sinks';
import { PASSWORD, linkFromMail, uniqueEmail } from '../support/people';
import { browserSuite } from './browser';
import { SignUpPage } from './pages/auth-pages';
import { PlaygroundPage } from './pages/playground-pages';
import { SettingsMenu } from './pages/settings-pages';

/** Browser globals, for the functions this file runs in the page (the tests compile without the DOM's types). */
declare const document: any;
declare const window: any;

describe('web app: Content-Security-Policy in Chromium', function () {
  this.timeout(240_000);
  const suite = browserSuite();
  let gateway: TestGateway;
  let smtp: SmtpSink;
  before(() => { ({ gateway, smtp } = suite); });

  it('serves every page with the policy, and no inline script', async () => {
    for (const path of ['/', '/sign-up', '/settings/members', '/playground']) {
      const res = await fetch(`${gateway.url}${path}`);
      expect(res.headers.get('content-security-policy'), path).to.equal(APP_CONTENT_SECURITY_POLICY);
      const html = await res.text();
      const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
      expect(scripts.length, path).to.be.greaterThan(0);
      for (const [, attributes, body] of scripts) {
        expect(attributes, 'scripts are files').to.match(/\ssrc="\/assets\//);
        expect(body.trim(), 'no inline script').to.equal('');
      }
    }
    expect(APP_CONTENT_SECURITY_POLICY).to.include("script-src 'self'").and.not.include('unsafe-inline').and.not.include('unsafe-eval');
  });

  it('sends Referrer-Policy: no-referrer on the token pages', async () => {
    for (const path of ['/verify?token=abc', '/reset?token=abc', '/invite?token=abc', '/forgot', '/playground/chat_x']) {
      const res = await fetch(`${gateway.url}${path}`);
      expect(res.status, path).to.equal(200);
      expect(res.headers.get('referrer-policy'), path).to.equal('no-referrer');
    }
  });

  it('signs up (CAPTCHA solved in a worker), confirms, walks Settings and chats without one CSP violation', async () => {
    const page = await suite.newPage({ viewport: { width: 1280, height: 860 } });
    // Reported by the browser to the page itself: collected from before the app's first script.
    await page.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { cspViolations: string[] }).cspViolations = seen;
      document.addEventListener('securitypolicyviolation', (e: { violatedDirective: string; blockedURI: string; sourceFile: string; lineNumber: number }) => seen.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`));
    });
    const violations: string[] = [];
    const collect = async () => violations.push(...await page.evaluate(() => (window as unknown as { cspViolations?: string[] }).cspViolations ?? []));
    page.on('console', (msg) => { if (/Content.Security.Policy/i.test(msg.text())) violations.push(msg.text()); });

    const email = uniqueEmail('csp');
    const signUp = new SignUpPage(page, gateway.url);
    await signUp.open();
    await signUp.fill('Cy Policy', email, PASSWORD);
    await signUp.solveCaptcha();
    await signUp.submit();
    await collect();
    await page.goto((await linkFromMail(smtp, email, '/verify?token=')).toString());
    await page.getByRole('navigation', { name: 'Settings' }).waitFor();
    await collect();
    const menu = new SettingsMenu(page, gateway.url);
    for (const path of ['/settings/members', '/settings/keys', '/settings/billing', '/settings/alerts', '/settings/fallbacks', '/settings/models']) {
      await menu.open(path);
      await page.locator('.card').first().waitFor();
      await collect();
    }
    const playground = new PlaygroundPage(page, gateway.url);
    await playground.newChat();
    await playground.send('Hello, **world**');
    await page.locator('article.assistant').last().getByText(/\S/).first().waitFor();
    await collect();
    expect(violations).to.deep.equal([]);
    expect(suite.consoleErrors(), 'console errors').to.deep.equal([]);
  });
});
