// The usage pages' strings (keys start with `usage.`).
export const usage = {} as const;
