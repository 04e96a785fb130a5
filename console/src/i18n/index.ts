// Every string the console shows comes from one catalogue (only English ships), so a
// translation is one file. `t('keys.created', { name })` fills `{name}` placeholders.
import { en } from './en.js';

export type MessageKey = keyof typeof en;

export function t(key: MessageKey, params: Record<string, string | number> = {}): string {
  return en[key].replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}
