import path from 'node:path';

export const TEST_TMP = path.resolve('.test-tmp');
export const TEMPLATE_DIR = path.join(TEST_TMP, 'template');
export const TEMPLATE_DATABASE = 'gateway_test_template';

/** The maintenance database on the same server, for CREATE/DROP DATABASE. */
export function adminUrl(serverUrl: string): string {
  const url = new URL(serverUrl);
  url.pathname = '/postgres';
  return url.toString();
}
