// Resolve hook (see node20-fs-glob.mjs): the conformance package's 'fs' becomes node:fs plus
// a globSync that throws. Nothing else is redirected.
const withGlob = `data:text/javascript,${encodeURIComponent(`
import fs from 'node:fs';
export * from 'node:fs';
export default fs;
export function globSync() { throw new Error('fs.globSync needs Node 22 (only the conformance tier-check command uses it)'); }
`)}`;

export async function resolve(specifier, context, next) {
  const fromConformance = context.parentURL?.includes('/@modelcontextprotocol/conformance/');
  if (fromConformance && (specifier === 'fs' || specifier === 'node:fs')) return { url: withGlob, shortCircuit: true };
  return next(specifier, context);
}
