// The spec keeps capitalized historical duplicates (`/api/Auth/login`, …) working.
// Route literals are lowercased before routing; ids keep their case because every
// id carries an underscore (`key_01J…`) and so never matches LITERAL.
const LITERAL = /^[A-Za-z][A-Za-z0-9-]*$/;

export function rewriteLegacyUrl(url: string): string {
  if (!/^\/api\//i.test(url) || !/[A-Z]/.test(url)) return url;
  const queryAt = url.indexOf('?');
  const pathPart = queryAt === -1 ? url : url.slice(0, queryAt);
  const rest = queryAt === -1 ? '' : url.slice(queryAt);
  const lowered = pathPart
    .split('/')
    .map((segment) => (LITERAL.test(segment) ? segment.toLowerCase() : segment))
    .join('/');
  return lowered + rest;
}
