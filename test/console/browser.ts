// The browser the console's end-to-end tests drive: Debian's chromium (apt-get install
// chromium) through playwright-core, pinned to a version known to speak that Chromium's
// DevTools protocol. Playwright's own browser download cannot work here, so the binary
// comes from the system and its major version is checked first, with a clear message.
//
// Every page the tests open is watched for what must never happen during a walk:
// a request leaving the gateway's origin (blocked and recorded), an uncaught error, a
// 5xx, a Content-Security-Policy violation, a console error other than an expected 4xx.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { TEST_TMP } from '../helpers/paths.js';

/** Chromium majors playwright-core 1.64.1 was seen driving (150: Debian bookworm; 156: bookworm-security). */
export const SUPPORTED_CHROMIUM = { min: 150, max: 156 } as const;
export const PLAYWRIGHT_CORE = '1.64.1';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const ARTIFACTS_DIR = path.join(TEST_TMP, 'console-screenshots');

const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/** The installed Chromium's major version, or an error that says what to do. */
export function checkChromium(): number {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(`No browser at ${CHROMIUM_PATH}: install Debian's with "apt-get install chromium" (or set CHROMIUM_PATH).`);
  const version = execFileSync(CHROMIUM_PATH, ['--version'], { encoding: 'utf8' }).trim();
  const major = Number(/(\d+)\.\d+\.\d+\.\d+/.exec(version)?.[1]);
  if (!(major >= SUPPORTED_CHROMIUM.min && major <= SUPPORTED_CHROMIUM.max))
    throw new Error(
      `${version} is not a Chromium that playwright-core ${PLAYWRIGHT_CORE} is pinned for (majors ${SUPPORTED_CHROMIUM.min}-${SUPPORTED_CHROMIUM.max}): ` +
        'pin the playwright-core release that bundles this major in package.json and widen SUPPORTED_CHROMIUM in test/console/browser.ts.',
    );
  return major;
}

export async function launchBrowser(): Promise<Browser> {
  checkChromium();
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: FLAGS });
}

export interface Walk {
  context: BrowserContext;
  /** What went wrong so far on any page of the context; the tests assert it stays empty. */
  faults: string[];
  /** Requests to another origin (blocked before they leave). */
  foreign: string[];
  newPage(): Promise<Page>;
}

export interface WalkOptions {
  dark?: boolean;
  /**
   * Other origins the walk may reach: the test's own identity providers (single sign-on
   * sends the browser there and back). Their certificate is the test's, so the profile
   * accepts it; the gateway trusts it through NODE_EXTRA_CA_CERTS, not through this.
   */
  identityProviders?: string[];
}

/** A fresh browser profile (cookies, storage) that watches its pages. `origin` is the gateway's. */
export async function openWalk(browser: Browser, origin: string, options: WalkOptions = {}): Promise<Walk> {
  const allowed = [origin, ...(options.identityProviders ?? [])];
  const context = await browser.newContext({
    colorScheme: options.dark ? 'dark' : 'light',
    viewport: { width: 1280, height: 860 },
    ...(options.identityProviders?.length ? { ignoreHTTPSErrors: true } : {}),
  });
  const faults: string[] = [];
  const foreign: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (allowed.some((start) => url.startsWith(`${start}/`) || url === start) || url.startsWith('data:')) return route.continue();
    foreign.push(url);
    return route.abort('blockedbyclient');
  });
  const watch = (page: Page) => {
    page.on('pageerror', (error) => faults.push(`uncaught: ${error.message}`));
    page.on('response', (response) => {
      if (response.status() >= 500) faults.push(`${response.status()} ${response.request().method()} ${response.url()}`);
    });
    page.on('console', (message) => {
      const text = message.text();
      if (/Content[- ]Security[- ]Policy|Refused to/i.test(text)) faults.push(`CSP: ${text}`);
      // A failed fetch's 4xx is logged by the browser as an error: expected (the first refresh's 401).
      else if (message.type() === 'error' && !/status of 4\d\d/.test(text)) faults.push(`console: ${text}`);
    });
  };
  context.on('page', watch);
  return {
    context,
    faults,
    foreign,
    newPage: async () => {
      const page = await context.newPage();
      await page.addInitScript(() => {
        document.addEventListener('securitypolicyviolation', (event) => {
          console.error(`Content-Security-Policy violation: ${event.violatedDirective} ${event.blockedURI}`);
        });
      });
      return page;
    },
  };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core's serious and critical violations on the page as it is now. Injected with
 * page.evaluate (the DevTools protocol runs it outside the page's CSP; a script tag
 * would be refused by the console's own policy).
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const violations = (await page.evaluate(
    `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))`,
  )) as AxeViolation[];
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Keeps a screenshot of the page as a test artefact (.test-tmp/console-screenshots). */
export async function keepScreenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS_DIR, `${name}.png`), fullPage: true });
}

/** The built console the tests serve (npm test builds it first when test/console is selected). */
export const CONSOLE_DIR = path.resolve('dist', 'console');
