import path from 'node:path';

export const TEST_TMP = path.resolve('.test-tmp');
// Per run (set by scripts/run-tests.mjs), so concurrent runs never share a template.
const RUN = process.env.TEST_RUN_ID ?? 'manual';
export const TEMPLATE_DIR = path.join(TEST_TMP, `template-${RUN}`);
export const TEMPLATE_DATABASE = `gateway_test_template_${RUN}`;
// The built-in embedder's converted word vectors, made once (template.ts) and shared by
// every test gateway and every run: converting takes 10–30 s.
export const WORD_VECTORS_FILE = path.join(TEST_TMP, 'word-vectors-en-100d.bin');

/** The maintenance database on the same server, for CREATE/DROP DATABASE. */
export function adminUrl(serverUrl: string): string {
  const url = new URL(serverUrl);
  url.pathname = '/postgres';
  return url.toString();
}
