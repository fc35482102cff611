// The portal in a real browser: Debian's chromium (or, on a machine without one, the chromium that
// the registry package @sparticuz/chromium ships; CHATGATE_BROWSER=packaged forces it) driven by
// playwright-core. One launch per test
// file (each context is a fresh, temporary profile), a logged-in page, and the check every page
// gets: a screenshot under test-results/portal-screenshots/ and axe-core with no serious or
// critical violation.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { expect } from 'vitest';

import { browserExecutable } from './browser-path.js';
import { PASSWORD } from './portal.js';

const SHOTS = path.resolve('test-results/portal-screenshots');
const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export async function launchBrowser(): Promise<Browser> {
  fs.mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({
    executablePath: await browserExecutable(),
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** The text of the first element the locator finds, once it is there. */
export async function text(locator: Locator): Promise<string> {
  await locator.first().waitFor();
  return (await locator.first().innerText()).trim();
}

export async function checkPage(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  await page.addScriptTag({ content: AXE }).catch(async () => {
    // The CSP forbids inline script: axe is evaluated through the DevTools protocol instead.
    await page.evaluate(AXE);
  });
  const result = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] })`)) as {
    violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
  };
  const serious = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(
    serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    name,
  ).toEqual([]);
}

/** A new browser context signed in as `email` (the portal's overview is open). */
export async function loggedIn(browser: Browser, url: string, email: string): Promise<Page> {
  const context = await browser.newContext();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
  const page = await context.newPage();
  await page.goto(`${url}/portal/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(`${url}/portal`);
  return page;
}
