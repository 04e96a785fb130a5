// The retrieval pages' strings (keys start with `retrieval.`).
export const retrieval = {} as const;
