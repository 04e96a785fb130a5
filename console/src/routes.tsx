// Every page of the console after sign-in: its path, who may open it, and its place in
// the navigation. Hiding a link is not authorisation (the API decides): a page opened
// by someone without the role shows "not allowed" and fetches nothing.
import type { VNode } from 'preact';
import type { MessageKey } from './i18n/index.js';
import { AccountPage } from './pages/account/account-page.js';
import { ComputePage } from './pages/compute/compute-page.js';
import { DocumentPage } from './pages/documents/document-page.js';
import { CollectionPage } from './pages/documents/collection-page.js';
import { WorkspacePage } from './pages/documents/workspace-page.js';
import { WorkspacesPage } from './pages/documents/workspaces-page.js';
import { KeysPage } from './pages/keys/keys-page.js';
import { ConversationsPage } from './pages/playground/conversations-page.js';
import { PlaygroundPage } from './pages/playground/playground-page.js';
import { RetrievalPage } from './pages/retrieval/retrieval-page.js';
import { SsoPage } from './pages/sso/sso-page.js';
import { TenantsPage } from './pages/tenants/tenants-page.js';
import { ThreadsPage } from './pages/threads/threads-page.js';
import { UsagePage } from './pages/usage/usage-page.js';
import { UsersPage } from './pages/users/users-page.js';

/** member: any signed-in user; admin: a tenant's admin; platform: a platform admin. */
export type Access = 'member' | 'admin' | 'platform';

export interface RouteDef {
  path: string;
  access: Access;
  /** Shown in the navigation under this label (pages reached from another page have none). */
  nav?: MessageKey;
  render: (params: Record<string, string>) => VNode;
}

export const ROUTES: RouteDef[] = [
  { path: '/playground', access: 'member', nav: 'nav.playground', render: () => <PlaygroundPage /> },
  { path: '/playground/:conversationId', access: 'member', render: (p) => <PlaygroundPage conversationId={p.conversationId} /> },
  { path: '/conversations', access: 'member', nav: 'nav.conversations', render: () => <ConversationsPage /> },
  { path: '/threads', access: 'member', nav: 'nav.threads', render: () => <ThreadsPage /> },
  { path: '/threads/:threadId', access: 'member', render: (p) => <ThreadsPage threadId={p.threadId} /> },
  { path: '/workspaces', access: 'member', nav: 'nav.workspaces', render: () => <WorkspacesPage /> },
  { path: '/workspaces/:workspaceId', access: 'member', render: (p) => <WorkspacePage workspaceId={p.workspaceId!} /> },
  { path: '/collections/:collectionId', access: 'member', render: (p) => <CollectionPage collectionId={p.collectionId!} /> },
  { path: '/documents/:documentId', access: 'member', render: (p) => <DocumentPage documentId={p.documentId!} /> },
  { path: '/retrieval', access: 'member', nav: 'nav.retrieval', render: () => <RetrievalPage /> },
  { path: '/keys', access: 'admin', nav: 'nav.keys', render: () => <KeysPage /> },
  { path: '/users', access: 'admin', nav: 'nav.users', render: () => <UsersPage /> },
  { path: '/compute', access: 'admin', nav: 'nav.nodes', render: () => <ComputePage /> },
  { path: '/usage', access: 'admin', nav: 'nav.usage', render: () => <UsagePage /> },
  { path: '/sso', access: 'admin', nav: 'nav.sso', render: () => <SsoPage /> },
  { path: '/tenants', access: 'platform', nav: 'nav.tenants', render: () => <TenantsPage /> },
  { path: '/tenants/:tenantId/sso', access: 'platform', render: (p) => <SsoPage tenantId={p.tenantId!} /> },
  { path: '/account', access: 'member', nav: 'nav.account', render: () => <AccountPage /> },
];

export const HOME = '/playground';

export function mayOpen(roles: string[], access: Access): boolean {
  if (access === 'member') return true;
  if (access === 'platform') return roles.includes('platform_admin');
  return roles.includes('admin') || roles.includes('platform_admin');
}
