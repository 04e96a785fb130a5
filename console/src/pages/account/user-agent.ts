// "Firefox on Linux" from a User-Agent header: enough to tell one's own sessions apart.
// Order matters: Edge and Opera say "Chrome" too, and Chrome says "Safari".
import { t } from '../../i18n/index.js';

const BROWSERS: [RegExp, string][] = [
  [/Edg\//, 'Edge'],
  [/OPR\//, 'Opera'],
  [/Firefox\//, 'Firefox'],
  [/Chrom(e|ium)\//, 'Chrome'],
  [/Safari\//, 'Safari'],
  [/curl\//, 'curl'],
];
const SYSTEMS: [RegExp, string][] = [
  [/Android/, 'Android'],
  [/iPhone|iPad/, 'iOS'],
  [/Windows/, 'Windows'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/CrOS/, 'ChromeOS'],
  [/Linux/, 'Linux'],
];

export function clientName(userAgent: string | null): string {
  if (!userAgent) return t('account.sessions.unknown');
  const browser = BROWSERS.find(([pattern]) => pattern.test(userAgent))?.[1];
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1];
  if (browser && system) return t('account.sessions.on', { browser, system });
  return browser ?? userAgent.slice(0, 80);
}
