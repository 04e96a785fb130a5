// Client-side routing without a library: the History API, a listener set, and a
// pattern matcher for `/collections/:collectionId`. The server answers index.html for
// any console path, so every URL here can be reloaded or shared.
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<() => void>();
let lastKind: 'push' | 'replace' | 'pop' = 'push';
const notify = () => {
  for (const listener of listeners) listener();
};
window.addEventListener('popstate', () => {
  lastKind = 'pop';
  notify();
});

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  lastKind = options.replace ? 'replace' : 'push';
  history[lastKind === 'replace' ? 'replaceState' : 'pushState'](null, '', to);
  notify();
}

/** How the current path was reached: a replace keeps the user where they are (a page naming its new record). */
export const lastNavigation = () => lastKind;

/** The current path (without the query), re-rendering the caller when it changes. */
export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    listeners.add(update);
    return () => listeners.delete(update);
  }, []);
  return path;
}

/** `/collections/:collectionId` against `/collections/col_1` → `{ collectionId: 'col_1' }`, or null. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/').filter(Boolean);
  const have = path.split('/').filter(Boolean);
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (const [i, part] of want.entries()) {
    const value = have[i]!;
    if (part.startsWith(':')) params[part.slice(1)] = decodeURIComponent(value);
    else if (part !== value) return null;
  }
  return params;
}

/** A left click without modifiers stays in the app; anything else is the browser's. */
export function followLink(event: MouseEvent, href: string): void {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(href);
}
