import { BlockList, isIP } from 'node:net';
import { lookup } from 'node:dns/promises';
import { Injectable } from '@nestjs/common';

/**
 * The addresses an endpoint may never be reached at (server-side request forgery): loopback,
 * private, link-local, shared, "this network", reserved, unspecified and multicast, in IPv4 and
 * IPv6. An IPv6 address that embeds an IPv4 one (`::ffff:127.0.0.1`) is judged by that one.
 */
const REFUSED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  REFUSED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  REFUSED.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address an IPv6 one carries (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`). */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^::(?:ffff:(?:0{1,4}:)?)?(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const high = parseInt(hex[1], 16);
  const low = parseInt(hex[2], 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Why this IP address is not public, or undefined when it is. */
export function refusedAddress(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return `${address} is not an IP address`;
  const v4 = family === 6 ? embeddedIpv4(address) : address;
  const refused = v4 !== undefined ? REFUSED.check(v4, 'ipv4') : REFUSED.check(address, 'ipv6');
  return refused ? `${address} is not a public address` : undefined;
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/**
 * Resolves the host names of endpoints: the system's resolver (as `getaddrinfo` answers), every
 * address it gives. A class of its own so that each check, at add time and at every attempt,
 * goes through the one resolver a process has.
 */
@Injectable()
export class WebhookResolver {
  async resolve(host: string): Promise<ResolvedAddress[]> {
    return await lookup(host, { all: true, order: 'verbatim' });
  }
}

/** A URL's host name as a resolver takes it: IPv6 literals without their brackets. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * The addresses `host` resolves to, each checked (unless private networks are allowed): the
 * first refused one is the error. A literal address is checked as it is.
 */
export async function checkedAddresses(
  resolver: WebhookResolver,
  host: string,
  allowPrivate: boolean,
): Promise<ResolvedAddress[]> {
  const family = isIP(host);
  const addresses = family !== 0 ? [{ address: host, family }] : await resolver.resolve(host);
  if (addresses.length === 0) throw new Error(`${host} resolves to no address`);
  if (!allowPrivate) {
    for (const { address } of addresses) {
      const refused = refusedAddress(address);
      if (refused !== undefined) throw new Error(`${host} resolves to ${refused}`);
    }
  }
  return addresses;
}
