// The compute pages' strings (keys start with `compute.`).
export const compute = {} as const;
