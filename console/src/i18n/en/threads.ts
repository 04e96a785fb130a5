// The threads pages' strings (keys start with `threads.`).
export const threads = {} as const;
