import type { Socket } from 'node:net';

/**
 * The file descriptor of a client's TCP socket, or `undefined` for one without (a socket not
 * connected, or not on Unix). Node gives it on the socket's private handle only (`_handle.fd`, the
 * libuv stream's descriptor; -1 where there is none). The stall rule finds the socket in the
 * kernel's TCP table by it (`common/http/client-progress.ts`); without it, that rule sees only what
 * Node sees.
 */
export function descriptorOf(socket: Socket): number | undefined {
  const fd = (socket as unknown as { _handle?: { fd?: unknown } | null })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}
