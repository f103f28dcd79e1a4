import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The address a listening server really bound (`::` or `0.0.0.0`: every interface), not a guess
 * at a reachable one, and the host part of its URL (an IPv6 address in brackets).
 */
export function boundAddress(server: Server): { address: string; port: number; host: string } {
  const { address, port } = server.address() as AddressInfo;
  return { address, port, host: address.includes(':') ? `[${address}]` : address };
}
