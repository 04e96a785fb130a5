// The users pages' strings (keys start with `users.`).
export const users = {} as const;
