// The English catalogue: one file per page under en/, joined here. Keys are
// prefixed by their page (`keys.…`), so two files never define the same key.
import { common } from './en/common.js';
import { signIn } from './en/sign-in.js';
import { account } from './en/account.js';
import { keys } from './en/keys.js';
import { users } from './en/users.js';
import { documents } from './en/documents.js';
import { retrieval } from './en/retrieval.js';
import { playground } from './en/playground.js';
import { threads } from './en/threads.js';
import { compute } from './en/compute.js';
import { usage } from './en/usage.js';
import { tenants } from './en/tenants.js';
import { sso } from './en/sso.js';
import { scim } from './en/scim.js';

export const en = {
  ...common,
  ...signIn,
  ...account,
  ...keys,
  ...users,
  ...documents,
  ...retrieval,
  ...playground,
  ...threads,
  ...compute,
  ...usage,
  ...tenants,
  ...sso,
  ...scim,
} as const;
