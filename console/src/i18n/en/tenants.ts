// The tenants pages' strings (keys start with `tenants.`).
export const tenants = {} as const;
