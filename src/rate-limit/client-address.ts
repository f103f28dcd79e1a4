import type { Request } from 'express';
import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';

/** The longest textual IP address (an IPv6 with an embedded IPv4); anything longer is not one. */
const MAX_IP_LENGTH = 45;

const validIp = (value: string | undefined): value is string =>
  value !== undefined && value.length <= MAX_IP_LENGTH && isIP(value) !== 0;

/**
 * Whom an anonymous request counts against. Express's `req.ip` under TRUST_PROXY is
 * whatever `X-Forwarded-For` says, unchecked: a client could make up a new tracker (of any size)
 * per request. So only a valid IP is taken, else the socket's own address; an IPv4-mapped IPv6
 * address is its IPv4 address, and any other IPv6 address stands for its /64, as one subscriber
 * usually holds a whole /64.
 */
export function clientAddressOf(req: Request): string {
  const ip = req.ip;
  const address = validIp(ip) ? ip : req.socket.remoteAddress;
  if (!validIp(address)) return 'unknown';
  return isIP(address) === 6 ? ipv6Subscriber(address) : address;
}

function ipv6Subscriber(address: string): string {
  const parsed = ipaddr.IPv6.parse(address);
  if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
  const prefix = parsed.parts.slice(0, 4).map((part) => part.toString(16));
  return `${prefix.join(':')}::/64`;
}
