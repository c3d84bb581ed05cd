/**
 * Accessibility checks with axe-core in the page under test. axe is evaluated through the DevTools
 * protocol (not a <script> tag), so the app's Content-Security-Policy stays as it is.
 */
import fs from 'node:fs';
import type { Page } from 'playwright-core';

/** Browser globals, for the functions this file runs in the page (the tests compile without the DOM's types). */
declare const document: any;
declare const window: any;

let source: string | null = null;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** The WCAG 2.x A and AA violations in `selector` (the whole page by default). */
export async function axeViolations(page: Page, selector?: string): Promise<AxeViolation[]> {
  source ??= fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(source);
  return page.evaluate(async (within) => {
    const axe = (window as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }> }> } }).axe;
    const result = await axe.run(within ? document.querySelector(within) : document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => JSON.stringify(n.target)) }));
  }, selector ?? null);
}
