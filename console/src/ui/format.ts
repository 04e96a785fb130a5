// Dates and numbers as the reader's browser formats them.
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const number = new Intl.NumberFormat();

export const formatDate = (value: string | null | undefined, never = '—'): string => (value ? dateTime.format(new Date(value)) : never);
export const formatNumber = (value: number): string => number.format(value);
