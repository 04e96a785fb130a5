// The documents pages' strings (keys start with `documents.`).
export const documents = {} as const;
