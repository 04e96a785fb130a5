// Two-factor on the wire: enrollment (setup, enable), removal (disable) and the
// second step of login (verify-2fa). TypeBox schemas; the TypeScript types are
// derived from them.
import { Type, type Static } from '@fastify/type-provider-typebox';

// A TOTP code, or a recovery code (typed with dashes or spaces).
const Code = Type.String({ minLength: 1, maxLength: 64 });

export const SetupResponse = Type.Object({ secret: Type.String(), otpauthUri: Type.String() });
export type SetupResponse = Static<typeof SetupResponse>;

export const EnableBody = Type.Object({ code: Code });
export const EnableResponse = Type.Object({ recoveryCodes: Type.Array(Type.String()) });
export type EnableResponse = Static<typeof EnableResponse>;

/** Exactly one of the two; the service says so when both or neither come. */
export const DisableBody = Type.Object({
  code: Type.Optional(Code),
  password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, text: 'verbatim' })),
});
export type DisableBody = Static<typeof DisableBody>;

/** `code` holds a TOTP code or a recovery code; `recoveryCode` only the latter. Exactly one of the two. */
export const VerifyBody = Type.Object({
  twoFactorToken: Type.String({ minLength: 1, maxLength: 512 }),
  code: Type.Optional(Code),
  recoveryCode: Type.Optional(Code),
});
export type VerifyBody = Static<typeof VerifyBody>;
