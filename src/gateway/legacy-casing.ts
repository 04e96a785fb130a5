// The spec keeps capitalized historical duplicates (`/api/Auth/login`, …) working.
// A path segment is lowercased only when its lowercase form is a literal of some
// registered route (`auth`, `login`, `api-keys`…), so path parameters — ids, and
// later model or engine names such as `Llama-3` — keep their case, and so does the
// rest of the path after a wildcard route's prefix (a model id, slashes included).

export class LegacyCasing {
  private readonly literals = new Set<string>();
  /** Segment counts of the static prefixes of wildcard routes (`/api/llm/v1/models/*`), by the prefix: the rest is a name, kept as sent. */
  private readonly wildcards = new Map<string, number>();

  /** Records the static segments of a route path such as `/api/auth/tenants/:tenantId`. */
  add(routePath: string): void {
    for (const segment of routePath.split('/')) {
      if (segment && !segment.startsWith(':') && !segment.includes('*')) this.literals.add(segment);
    }
    if (routePath.endsWith('/*') && !routePath.includes(':')) {
      const prefix = routePath.slice(0, -1);
      this.wildcards.set(prefix, prefix.split('/').length - 1);
    }
  }

  rewrite(url: string): string {
    if (!/^\/api\//i.test(url) || !/[A-Z]/.test(url)) return url;
    const queryAt = url.indexOf('?');
    const pathPart = queryAt === -1 ? url : url.slice(0, queryAt);
    const rest = queryAt === -1 ? '' : url.slice(queryAt);
    const segments = pathPart.split('/');
    // Lowered segment by segment; once the path so far is a wildcard route's prefix, the
    // rest is a name (a model id such as `Org/Chat`) and keeps its case.
    let soFar = '';
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i]!;
      const lower = segment.toLowerCase();
      if (lower !== segment && this.literals.has(lower)) segments[i] = lower;
      soFar += `${segments[i]}/`;
      if (this.wildcards.get(soFar) === i + 1) break;
    }
    return segments.join('/') + rest;
  }
}
