// The playground pages' strings (keys start with `playground.`).
export const playground = {} as const;
