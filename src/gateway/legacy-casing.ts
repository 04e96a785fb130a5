// The spec keeps capitalized historical duplicates (`/api/Auth/login`, …) working.
// A path segment is lowercased only when its lowercase form is a literal of some
// registered route (`auth`, `login`, `api-keys`…), so path parameters — ids, and
// later model or engine names such as `Llama-3` — keep their case.

export class LegacyCasing {
  private readonly literals = new Set<string>();

  /** Records the static segments of a route path such as `/api/auth/tenants/:tenantId`. */
  add(routePath: string): void {
    for (const segment of routePath.split('/')) {
      if (segment && !segment.startsWith(':') && !segment.includes('*')) this.literals.add(segment);
    }
  }

  rewrite(url: string): string {
    if (!/^\/api\//i.test(url) || !/[A-Z]/.test(url)) return url;
    const queryAt = url.indexOf('?');
    const pathPart = queryAt === -1 ? url : url.slice(0, queryAt);
    const rest = queryAt === -1 ? '' : url.slice(queryAt);
    const lowered = pathPart
      .split('/')
      .map((segment) => {
        const lower = segment.toLowerCase();
        return lower !== segment && this.literals.has(lower) ? lower : segment;
      })
      .join('/');
    return lowered + rest;
  }
}
