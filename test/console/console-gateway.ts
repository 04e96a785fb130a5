// A gateway serving the built console, with the world the console tests walk in, and a
// browser. The console is browsed at http://localhost:PORT: Chromium accepts the refresh
// cookie's `Secure` attribute on localhost (not on 127.0.0.1) without TLS.
import type { Browser, Page } from 'playwright-core';
import * as OTPAuth from 'otpauth';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World, type WorldUser } from '../helpers/world.js';
import { CONSOLE_DIR, launchBrowser } from './browser.js';

export interface ConsoleWorld {
  gw: TestGateway;
  world: World;
  browser: Browser;
  /** The console's origin, http://localhost:PORT. */
  origin: string;
  close(): Promise<void>;
}

export async function startConsoleWorld(env: Record<string, string> = {}): Promise<ConsoleWorld> {
  const gw = await startGateway({ GATEWAY_CONSOLE_DIR: CONSOLE_DIR, ...env });
  const world = await seedWorld(gw, 'console');
  const browser = await launchBrowser();
  const origin = gw.url.replace('127.0.0.1', 'localhost');
  return {
    gw,
    world,
    browser,
    origin,
    close: async () => {
      await browser.close();
      await gw.close();
    },
  };
}

/** Enrols the user in two-factor through the API; returns an authenticator that never reuses a time step. */
export async function enrolTwoFactor(gw: Pick<TestGateway, 'request'>, user: Pick<WorldUser, 'token'>): Promise<{ next(): string }> {
  const setup = await gw.request('POST', '/api/auth/2fa/setup', { token: user.token });
  const totp = OTPAuth.URI.parse(setup.body.otpauthUri) as OTPAuth.TOTP;
  const stepMs = totp.period * 1000;
  let lastStep = -1;
  const next = () => {
    lastStep = Math.max(lastStep + 1, Math.floor(Date.now() / stepMs));
    return totp.generate({ timestamp: lastStep * stepMs });
  };
  const enabled = await gw.request('POST', '/api/auth/2fa/enable', { token: user.token, json: { code: next() } });
  if (enabled.status !== 200) throw new Error(`2FA enable failed: ${enabled.status} ${enabled.text}`);
  return { next };
}

/** Signs in through the sign-in page with the mouse-free path (no two-factor). */
export async function signIn(page: Page, origin: string, user: { username: string; password: string }, path = '/'): Promise<void> {
  await page.goto(origin + path);
  await page.getByLabel('Username or e-mail').fill(user.username);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByText(`Signed in as ${user.username}`).waitFor();
}
