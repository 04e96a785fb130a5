// Everything after sign-in: the navigation, the page for the current path, and the
// "not found" / "not allowed" answers. Loaded as its own chunk after sign-in, so the
// sign-in page downloads only what it needs.
import { useEffect, useRef } from 'preact/hooks';
import { signOut, type User } from './api/session.js';
import { t } from './i18n/index.js';
import { lastNavigation, matchPath, navigate, usePath } from './router.js';
import { HOME, mayOpen, ROUTES } from './routes.js';
import { NotAllowed, NotFound } from './ui/error-view.js';
import { Link } from './ui/link.js';

export function Shell(props: { user: User }) {
  const path = usePath();
  const main = useRef<HTMLElement>(null);
  // `/` and a sign-in's own path mean the home page: shown at once (no "not found" flash),
  // and the URL renamed to the home page's address after the first paint.
  const atHome = path === '/' || path === '/signin';
  useEffect(() => {
    if (atHome) navigate(HOME, { replace: true });
  }, [path]);
  // A new page: move focus to it, as a full page load would (screen readers hear its heading).
  // Not on a replace: that is a page renaming its own URL (the playground's new conversation).
  useEffect(() => {
    if (lastNavigation() !== 'replace') main.current?.focus({ preventScroll: true });
  }, [path]);
  const match = ROUTES.map((route) => ({ route, params: matchPath(route.path, atHome ? HOME : path) })).find((m) => m.params);
  let content = <NotFound />;
  if (match) content = mayOpen(props.user.roles, match.route.access) ? match.route.render(match.params!) : <NotAllowed />;
  const links = ROUTES.filter((route) => route.nav && mayOpen(props.user.roles, route.access));
  return (
    <div class="shell">
      <a class="skip" href="#main">
        {t('app.skipToContent')}
      </a>
      <header class="topbar">
        <span class="brand">{t('app.name')}</span>
        <span class="muted who">{t('nav.signedInAs', { name: props.user.username })}</span>
        <button type="button" class="quiet" onClick={() => void signOut()}>
          {t('nav.signOut')}
        </button>
      </header>
      <nav class="sidenav" aria-label={t('nav.label')}>
        <ul>
          {links.map((route) => (
            <li key={route.path}>
              <Link href={route.path} current={path === route.path || path.startsWith(`${route.path}/`)}>
                {t(route.nav!)}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" ref={main} tabIndex={-1}>
        {content}
      </main>
    </div>
  );
}
