// The keys pages' strings (keys start with `keys.`).
export const keys = {} as const;
