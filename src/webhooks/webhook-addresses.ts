import { lookup, Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Injectable } from '@nestjs/common';
import ipaddr from 'ipaddr.js';

/**
 * The IPv6 ranges that carry an IPv4 address (ipaddr.js's names): mapped, translated, NAT64
 * (RFC 6052, both prefixes), 6to4 and Teredo. Such an address reaches the IPv4 one, so it is
 * judged by it.
 */
const CARRIES_IPV4 = new Set(['ipv4Mapped', 'rfc6145', 'rfc6052', '6to4', 'teredo']);

/** The IPv6 global unicast block (RFC 4291): nothing outside it is a public address. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** The IPv4 addresses an IPv6 address of a {@link CARRIES_IPV4} range carries. */
function carriedIpv4(address: ipaddr.IPv6, range: string): ipaddr.IPv4[] {
  const bytes = address.toByteArray();
  const v4 = (...at: number[]) => new ipaddr.IPv4(at.map((i) => bytes[i]));
  switch (range) {
    case '6to4':
      // 2002:AABB:CCDD::/48: the IPv4 follows the prefix.
      return [v4(2, 3, 4, 5)];
    case 'teredo': {
      // 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC: the server's IPv4, and the client's, inverted.
      const client = new ipaddr.IPv4(bytes.slice(12, 16).map((b) => b ^ 0xff));
      return [v4(4, 5, 6, 7), client];
    }
    case 'rfc6052':
      // 64:ff9b::/96 ends with the IPv4; the local-use 64:ff9b:1::/48 holds it around bits 64-71.
      return address.match(ipaddr.parseCIDR('64:ff9b::/96'))
        ? [v4(12, 13, 14, 15)]
        : [v4(6, 7, 9, 10)];
    default:
      // Mapped ::ffff:a.b.c.d and translated ::ffff:0:a.b.c.d end with it.
      return [v4(12, 13, 14, 15)];
  }
}

/**
 * Why this IP address is not public, or undefined when it is. Public is global unicast as
 * ipaddr.js classifies addresses: an IPv4 address outside every special range it names
 * (loopback, private, link-local, shared, benchmarking, documentation, reserved, multicast ...),
 * an IPv6 address in 2000::/3 outside its special ranges; an IPv6 address that carries an IPv4
 * one (mapped, translated, NAT64, 6to4, Teredo) is public only when that IPv4 one is.
 */
export function refusedAddress(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const parsed = ipaddr.parse(address);
  const refused = `${address} is not a public address`;
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast' ? undefined : refused;
  const v6 = parsed as ipaddr.IPv6;
  const range = v6.range();
  if (CARRIES_IPV4.has(range)) {
    return carriedIpv4(v6, range).every((v4) => v4.range() === 'unicast') ? undefined : refused;
  }
  return range === 'unicast' && v6.match(GLOBAL_UNICAST_V6) ? undefined : refused;
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** The names that are loopback wherever they are asked (RFC 6761), without a DNS query. */
function isLocalhost(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** Whether a DNS error says the name has no such address (rather than that no answer came). */
function isNotFound(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === 'ENOTFOUND' || code === 'ENODATA';
}

/**
 * Resolves the host names of endpoints, asking the DNS servers of the system's resolver
 * configuration directly (c-ares), for IPv4 and IPv6 addresses at once. Not `getaddrinfo`: its
 * lookups hold a thread of libuv's small pool each until they end, so a few names whose servers
 * never answer would hold every other lookup (and file access) of the process. A lookup gives up
 * after `timeoutMs`. A class of its own so that each check, at add time and at every attempt, goes
 * through the one resolver a process has (and a test can answer for it).
 */
@Injectable()
export class WebhookResolver {
  async resolve(host: string, timeoutMs = 5000): Promise<ResolvedAddress[]> {
    if (isLocalhost(host)) {
      return [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ];
    }
    // One try, bounded: c-ares's own timeout doubles on each retry.
    const resolver = new Resolver({ timeout: Math.max(1, timeoutMs), tries: 1 });
    try {
      const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
      const addresses = [
        ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
        ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
      ];
      if (addresses.length > 0) return addresses;
      // A name no DNS server knows may still be the system's own (/etc/hosts): that answer is
      // local, so asking `getaddrinfo` for it holds no thread long.
      const failed = [v4, v6].flatMap((r): unknown[] =>
        r.status === 'rejected' ? [r.reason] : [],
      );
      const unanswered = failed.find((error) => !isNotFound(error));
      if (unanswered !== undefined) throw unanswered as Error;
      return await lookup(host, { all: true, order: 'verbatim' });
    } finally {
      resolver.cancel();
    }
  }
}

/** A URL's host name as a resolver takes it: IPv6 literals without their brackets. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** A host that resolves to an address that is not public; the message names the address. */
export class RefusedAddressError extends Error {
  constructor(
    readonly host: string,
    readonly refused: string,
  ) {
    super(`${host} resolves to ${refused}`);
  }
}

/**
 * The addresses `host` resolves to, each checked (unless private networks are allowed): the
 * first refused one is the error ({@link RefusedAddressError}). A literal address is checked as
 * it is.
 */
export async function checkedAddresses(
  resolver: WebhookResolver,
  host: string,
  allowPrivate: boolean,
  timeoutMs?: number,
): Promise<ResolvedAddress[]> {
  const family = isIP(host);
  const addresses =
    family !== 0 ? [{ address: host, family }] : await resolver.resolve(host, timeoutMs);
  if (addresses.length === 0) throw new Error(`${host} resolves to no address`);
  if (!allowPrivate) {
    for (const { address } of addresses) {
      const refused = refusedAddress(address);
      if (refused !== undefined) throw new RefusedAddressError(host, refused);
    }
  }
  return addresses;
}
