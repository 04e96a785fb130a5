// How config.ts reads one variable: typed, bounded, and a ConfigError naming the
// variable when its value is wrong, so a bad start says exactly what to fix.
import { isIP } from 'node:net';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`Invalid configuration: ${variable} ${message}`);
  }
}

export type Env = Record<string, string | undefined>;

export class Reader {
  constructor(private readonly env: Env) {}

  string(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value ? value : undefined;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
    const value = Number(raw);
    if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
    return value;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const raw = this.string(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (!allowed.includes(raw as T)) throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
    return raw as T;
  }

  list(name: string): string[] {
    return (this.string(name) ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  }

  url(name: string, protocols: string[]): string | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new ConfigError(name, 'is not a valid URL');
    }
    if (!protocols.includes(parsed.protocol)) throw new ConfigError(name, `must use ${protocols.join(' or ')}`);
    return raw;
  }

  /** A comma list of CIDR blocks; `none` for an empty list (an empty value means the default). */
  cidrList(name: string, fallback: string[]): string[] {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    if (raw.toLowerCase() === 'none') return [];
    return this.list(name).map((c) => this.cidr(name, c));
  }

  cidr(name: string, value: string): string {
    const [address, bits, extra] = value.split('/');
    const family = address ? isIP(address) : 0;
    const max = family === 6 ? 128 : 32;
    if (!family || extra !== undefined || bits === undefined || !/^\d+$/.test(bits) || Number(bits) > max) {
      throw new ConfigError(name, `entries must be CIDR blocks like 169.254.0.0/16, got "${value}"`);
    }
    return value;
  }

  origin(name: string, value: string): string {
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      throw new ConfigError(name, `has an entry that is not an origin: "${value}"`);
    }
    if (parsed.origin === 'null' || parsed.origin !== value.replace(/\/$/, '')) {
      throw new ConfigError(name, `entries must be bare origins like https://app.example.com, got "${value}"`);
    }
    return parsed.origin;
  }
}
