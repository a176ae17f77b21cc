/**
 * A real browser for the page tests: Debian's Chromium (`apt-get install chromium`) driven by
 * playwright-core (which downloads no browser of its own). Where Chromium is absent the browser tests
 * are skipped with one line saying why; with KAIROS_REQUIRE_CHROMIUM=1 (set by `.ci/run`, which
 * installs it) its absence fails them instead, so CI always runs them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import {
  type Browser,
  type BrowserContext,
  type ConsoleMessage,
  chromium,
  type Frame,
  type Page,
} from 'playwright-core';
import type { TestApp } from './app.js';

export const CHROMIUM = process.env.KAIROS_CHROMIUM ?? '/usr/lib/chromium/chromium';
export const CHROMIUM_INSTALL_HINT = `Chromium is required for the browser tests but ${CHROMIUM} does not exist. Install it with \`sudo apt-get install -y chromium\` (Debian), or set KAIROS_CHROMIUM to a Chromium binary.`;

let warned = false;

export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.KAIROS_REQUIRE_CHROMIUM === '1') throw new Error(CHROMIUM_INSTALL_HINT);
  if (!warned) {
    warned = true;
    console.warn(`skipping the browser tests: chromium not found (${CHROMIUM_INSTALL_HINT})`);
  }
  return false;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // Small machines (CI: 2 cores): no GPU process, no /dev/shm-sized surprises.
    args: ['--disable-gpu', '--disable-dev-shm-usage'],
  });
}

let axeSource: string | null = null;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** axe-core's violations of impact serious or critical on the page (or a frame of it) as it is now. */
export async function seriousViolations(page: Page | Frame): Promise<AxeViolation[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  // Evaluated through the DevTools protocol, so the page's CSP (no inline script) does not apply.
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(axeSource);
  const violations = (await page.evaluate(`window.axe.run(document, { resultTypes: ['violations'] })
    .then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map((n) => n.target.join(' ')) })))`)) as AxeViolation[];
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * A fresh context of `browser` (time zone, British English, 1280×900) and a page in it whose console
 * is watched: CSP reports and uncaught page errors are collected in `csp`.
 */
export async function openPage(
  browser: Browser,
  zone: string,
): Promise<{ context: BrowserContext; page: Page; csp: string[] }> {
  const context = await browser.newContext({
    timezoneId: zone,
    locale: 'en-GB',
    viewport: { width: 1280, height: 900 },
  });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const csp: string[] = [];
  page.on('console', (m: ConsoleMessage) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) csp.push(m.text());
  });
  page.on('pageerror', (e) => csp.push(`page error: ${e.message}`));
  return { context, page, csp };
}

/** The console's first account and its owner, as the console tests make them through the setup link. */
export const CONSOLE_OWNER = {
  account: 'Acme Physio',
  email: 'owner@acme.example',
  password: 'correct horse battery staple',
} as const;

/**
 * The console's first account, its owner (CONSOLE_OWNER) and first secret key, made as the setup page
 * makes them: a new setup link, then POST /console/setup. Returns the key.
 */
export async function setUpConsoleOwner(app: Pick<TestApp, 'url' | 'ctx'>): Promise<string> {
  const setupPath = (await app.ctx.modules.console.setupLink()) as string;
  const res = await fetch(`${app.url}/console/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: app.url },
    body: JSON.stringify({
      token: new URL(setupPath, app.url).searchParams.get('token'),
      account_name: CONSOLE_OWNER.account,
      name: '',
      email: CONSOLE_OWNER.email,
      password: CONSOLE_OWNER.password,
    }),
  });
  if (res.status !== 201) throw new Error(`console setup answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { api_key: { key: string } }).api_key.key;
}

/** Signs the console's owner in on the sign-in page and waits for the overview. */
export async function signInToConsole(page: Page, base: string): Promise<void> {
  await page.goto(`${base}/console/sign-in`);
  await page.getByLabel('E-mail').fill(CONSOLE_OWNER.email);
  await page.getByLabel('Password').fill(CONSOLE_OWNER.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${base}/console`);
}
