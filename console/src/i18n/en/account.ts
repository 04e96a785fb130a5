// The account pages' strings (keys start with `account.`).
export const account = {} as const;
