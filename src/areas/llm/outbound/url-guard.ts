// Where a compute node (or a model download) may point: http(s) only, no
// credentials in the URL, and never an address in the deny list (link-local and
// cloud metadata by default), whatever name the host resolves through. Engines
// never follow redirects (undici's request does not), so the checked address is
// the one they talk to; the health loop re-checks, in case DNS changes later.
import { lookup } from 'node:dns/promises';
import { lookup as lookupWithCallback } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const LOOKUP_TIMEOUT_MS = 5000;

export class UrlRefused extends Error {}

/** Whose deny list applies: `tenant` for a URL a tenant admin gave (the platform list plus private ranges). */
export type UrlScope = 'platform' | 'tenant';

export function denyListFrom(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address, bits] = cidr.split('/');
    const family = isIP(address!) === 6 ? 'ipv6' : 'ipv4';
    list.addSubnet(address!, Number(bits), family);
  }
  return list;
}

/** Parses and checks `raw`; throws UrlRefused with a message fit for the caller. */
export async function checkOutboundUrl(raw: string, deny: BlockList): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRefused('must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UrlRefused('must use http:// or https://');
  if (url.username || url.password) throw new UrlRefused('must not carry credentials; give the node an apiKey instead');
  if (!url.hostname) throw new UrlRefused('must name a host');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : await resolve(host);
  for (const address of addresses) {
    if (isDenied(address, deny)) throw new UrlRefused(`resolves to ${address}, which this server may not connect to (deny list)`);
  }
  return url;
}

/**
 * A resolver for outbound connections that refuses deny-listed addresses. The URL
 * check above runs when a node is saved; this runs at every new connection, so a
 * host name re-pointed afterwards (DNS rebinding) cannot reach a denied address.
 */
export function guardedLookup(deny: BlockList): LookupFunction {
  return (hostname, options, callback) => {
    lookupWithCallback(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const denied = addresses.find((entry) => isDenied(entry.address, deny));
      if (denied || addresses.length === 0) {
        const refusal = Object.assign(
          new Error(`${hostname} resolves to ${denied?.address ?? 'nothing'}, which this server may not connect to (deny list)`),
          { code: 'EADDRNOTAVAIL' },
        );
        return callback(refusal, '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, all: typeof addresses) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

export function isDenied(address: string, deny: BlockList): boolean {
  const family = isIP(address);
  if (family === 4) return deny.check(address, 'ipv4');
  if (family !== 6) return true;
  if (deny.check(address, 'ipv6')) return true;
  // ::ffff:169.254.169.254 and friends reach the IPv4 address: judge them as it.
  const embedded = embeddedIPv4(address);
  return embedded !== undefined && deny.check(embedded, 'ipv4');
}

async function resolve(host: string): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const found = await Promise.race([
      lookup(host, { all: true, verbatim: true }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new UrlRefused(`host ${host} did not resolve in time`)), LOOKUP_TIMEOUT_MS);
      }),
    ]);
    if (found.length === 0) throw new UrlRefused(`host ${host} does not resolve`);
    return found.map((entry) => entry.address);
  } catch (error) {
    if (error instanceof UrlRefused) throw error;
    throw new UrlRefused(`host ${host} does not resolve`);
  } finally {
    clearTimeout(timer);
  }
}

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) IPv6 address. */
function embeddedIPv4(address: string): string | undefined {
  const groups = expandIPv6(address);
  if (!groups) return undefined;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  const mapped = zeros(0, 5) && groups[5] === 0xffff;
  const compatible = zeros(0, 6) && (groups[6] !== 0 || groups[7]! > 1);
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6);
  if (!mapped && !compatible && !nat64) return undefined;
  return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
}

function expandIPv6(address: string): number[] | undefined {
  let text = address.split('%')[0]!.toLowerCase();
  // A dotted tail (::ffff:1.2.3.4) becomes two hex groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -dotted[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return undefined;
  const groups = [...left, ...new Array<number>(missing).fill(0), ...right];
  return groups.some((g) => Number.isNaN(g)) ? undefined : groups;
}
