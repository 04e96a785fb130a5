// The accessibility walks' shared part: content seeded for the platform admin (so the
// document pages have something to show), every page of console/src/routes.tsx with
// the heading that says it has rendered, and one pass of axe-core over all of them.
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { type AxeViolation, keepScreenshot, openWalk, seriousViolations, type Walk } from './browser.js';
import type { ConsoleWorld } from './console-gateway.js';

export interface Seeded {
  workspaceName: string;
  workspaceId: string;
  collectionName: string;
  collectionId: string;
  documentName: string;
  documentId: string;
  threadId: string;
  /** Tenant a's id: the platform admin opens its single sign-on page from Tenants. */
  tenantId: string;
}

/** A workspace, a collection with one ingested document, and a thread, all the platform admin's, made through the API. */
export async function seedContent(cw: ConsoleWorld): Promise<Seeded> {
  const { gw } = cw;
  const token = cw.world.platform.admin.token;
  const ok = (response: { status: number; text: string }, what: string) => {
    assert.ok(response.status >= 200 && response.status < 300, `${what}: ${response.status} ${response.text}`);
  };
  const workspaceName = 'Field guides';
  const workspace = await gw.request('POST', '/api/os/workspaces', {
    token,
    json: { name: workspaceName, description: 'Guides for the field teams' },
  });
  ok(workspace, 'create workspace');
  const collectionName = 'Handbook';
  const collection = await gw.request('POST', `/api/os/workspaces/${workspace.body.id}/collections`, {
    token,
    json: { name: collectionName },
  });
  ok(collection, 'create collection');
  const documentName = 'safety-briefing.txt';
  const text = 'Safety briefing\n\nEvery team carries a first-aid kit and a radio. Check the weather before leaving the base camp.';
  const created = await gw.request('POST', `/api/os/collections/${collection.body.id}/documents`, {
    token,
    json: { name: documentName, text },
  });
  ok(created, 'create document');
  const documentId: string = created.body.id ?? created.body.data?.[0]?.id;
  assert.ok(documentId, `a document id in ${created.text}`);
  // Ready, so the document page shows its chunks (the ingestion runs in the gateway).
  for (let attempt = 0; ; attempt++) {
    const document = await gw.request('GET', `/api/os/documents/${documentId}`, { token });
    if (document.body?.status === 'ready') break;
    assert.notEqual(document.body?.status, 'failed', `the document failed: ${document.text}`);
    assert.ok(attempt < 600, 'the seeded document never became ready');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // A single sign-on connection in each of the platform admin's tenant and tenant a, so their pages show a card
  // (the platform admin may name an issuer on loopback; nothing is fetched from it until someone signs in).
  for (const tenantId of [cw.world.platform.tenantId, cw.world.a.tenantId]) {
    const sso = await gw.request('POST', `/api/auth/tenants/${tenantId}/sso/connections`, {
      token,
      json: {
        name: 'Company IdP',
        issuer: 'https://127.0.0.1:9/realms/company',
        clientId: 'gateway',
        clientSecret: 'not-a-real-secret',
        allowedEmailDomains: ['company.example'],
        roleMapping: { admins: 'admin', staff: 'member' },
        jit: true,
      },
    });
    ok(sso, 'create SSO connection');
  }
  const thread = await gw.request('POST', '/api/llm/v1/threads', {
    token,
    json: { messages: [{ role: 'user', content: 'Which kit does every team carry?' }] },
  });
  ok(thread, 'create thread');
  return {
    workspaceName,
    workspaceId: workspace.body.id,
    collectionName,
    collectionId: collection.body.id,
    documentName,
    documentId,
    threadId: thread.body.id,
    tenantId: cw.world.a.tenantId,
  };
}

export interface PageToVisit {
  /** The screenshot's name and how failures name the page. */
  name: string;
  path: string;
  /** The page's <h1>: it is there once the page has rendered. */
  heading: string;
}

/** Every route of console/src/routes.tsx (but /playground/:conversationId, which needs a model to answer). */
export function everyPage(seeded: Seeded): PageToVisit[] {
  return [
    { name: 'playground', path: '/playground', heading: 'Playground' },
    { name: 'conversations', path: '/conversations', heading: 'Conversations' },
    { name: 'threads', path: '/threads', heading: 'Threads' },
    { name: 'thread', path: `/threads/${seeded.threadId}`, heading: `Thread ${seeded.threadId}` },
    { name: 'workspaces', path: '/workspaces', heading: 'Workspaces' },
    { name: 'workspace', path: `/workspaces/${seeded.workspaceId}`, heading: `Workspace: ${seeded.workspaceName}` },
    { name: 'collection', path: `/collections/${seeded.collectionId}`, heading: `Collection: ${seeded.collectionName}` },
    { name: 'document', path: `/documents/${seeded.documentId}`, heading: `Document: ${seeded.documentName}` },
    { name: 'retrieval', path: '/retrieval', heading: 'Retrieval test' },
    { name: 'keys', path: '/keys', heading: 'API keys' },
    { name: 'users', path: '/users', heading: 'Users' },
    { name: 'compute', path: '/compute', heading: 'Compute' },
    { name: 'usage', path: '/usage', heading: 'Usage' },
    { name: 'sso', path: '/sso', heading: 'Single sign-on' },
    { name: 'tenants', path: '/tenants', heading: 'Tenants' },
    { name: 'tenant-sso', path: `/tenants/${seeded.tenantId}/sso`, heading: 'Single sign-on' },
    { name: 'account', path: '/account', heading: 'Account' },
  ];
}

/** The violations as a readable list: rule, what it asks, and where. */
export function describeViolations(violations: AxeViolation[]): string {
  return violations
    .map((v) => `  ${v.id} (${v.impact}): ${v.help}\n${v.nodes.map((n) => `    at ${n.target.join(' ')}`).join('\n')}`)
    .join('\n');
}

/** Waits until the page has rendered its heading and nothing on it is still loading. */
export async function settle(page: Page, heading: string): Promise<void> {
  await page.getByRole('heading', { level: 1, name: heading, exact: true }).waitFor();
  await page.waitForFunction(() => document.querySelector('[aria-busy="true"]') === null);
}

/**
 * Signs in as the platform admin through the sign-in page and runs axe-core on the
 * sign-in page and on every page, keeping a screenshot of each (`<page>-light|dark`).
 * Returns the walk (still open) and each page's serious or critical violations, described.
 */
export async function auditEveryPage(
  cw: ConsoleWorld,
  seeded: Seeded,
  scheme: 'light' | 'dark',
): Promise<{ walk: Walk; page: Page; failures: string[] }> {
  const { origin } = cw;
  const admin = cw.world.platform.admin;
  const walk = await openWalk(cw.browser, origin, { dark: scheme === 'dark' });
  const page = await walk.newPage();
  const failures: string[] = [];
  const audit = async (name: string) => {
    const violations = await seriousViolations(page);
    if (violations.length) failures.push(`${name} (${scheme}):\n${describeViolations(violations)}`);
    await keepScreenshot(page, `${name}-${scheme}`);
  };

  await page.goto(`${origin}/`);
  await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
  assert.equal(
    await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches),
    scheme === 'dark',
    `the browser asks for the ${scheme} scheme`,
  );
  await audit('sign-in');
  await page.getByLabel('Username or e-mail').fill(admin.username);
  await page.getByLabel('Password').fill(admin.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByText(`Signed in as ${admin.username}`).waitFor();

  for (const target of everyPage(seeded)) {
    await page.goto(origin + target.path);
    await settle(page, target.heading);
    await audit(target.name);
  }
  return { walk, page, failures };
}
