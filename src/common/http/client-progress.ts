import { readFile, readlink } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { descriptorOf } from '../../platform/socket-descriptor';

/** The kernel's tables of TCP sockets (Linux): the service may listen on IPv4 or IPv6. */
const TCP_TABLES = ['/proc/net/tcp', '/proc/net/tcp6'];

/**
 * Of the sockets named by inode in a table of /proc/net/tcp's format, the bytes each holds that
 * its peer has not acknowledged yet (`tx_queue`: written to the socket, not yet taken by the
 * client), into `into`.
 */
export function unacknowledgedIn(
  table: string,
  inodes: ReadonlySet<number>,
  into: Map<number, number>,
): void {
  for (const line of table.split('\n')) {
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …
    const fields = line.trim().split(/\s+/);
    const inode = Number(fields[9]);
    if (!inodes.has(inode)) continue;
    into.set(inode, parseInt(fields[4].split(':')[0], 16));
  }
}

/**
 * What a response's client has taken so far, as the server can see it, for telling a client that
 * reads slowly from one that reads nothing. Only marks are given: two marks of a socket that differ
 * mean its client took some of what was written in between.
 *
 * Node alone cannot tell: the kernel takes more of what Node writes only once a large part of the
 * socket's send buffer (which grows with the connection) is free, so for a slow client nothing
 * Node sees (`drain`, `bytesWritten`, `writableLength`) moves for a long while although the client
 * reads all along. The kernel's count of the bytes the peer has not acknowledged yet does move as it reads:
 * on Linux it is in /proc/net/tcp, found by the socket's inode. Elsewhere, or for a socket without
 * a file descriptor, the marks hold only what Node sees.
 */
export class ClientProgress {
  private readonly inodes = new WeakMap<Socket, Promise<number | undefined>>();

  /** A mark of each socket (`undefined` for none). */
  async marks(sockets: readonly (Socket | null | undefined)[]): Promise<string[]> {
    const inodes = await Promise.all(
      sockets.map((socket) => (socket ? this.inodeOf(socket) : Promise.resolve(undefined))),
    );
    const unacknowledged = await this.unacknowledged(
      new Set(inodes.filter((inode): inode is number => inode !== undefined)),
    );
    return sockets.map((socket, i) => {
      if (!socket) return '';
      // Bytes of the writes the kernel has taken whole (`writableLength` counts those under way).
      const taken = socket.bytesWritten - socket.writableLength;
      return `${taken}/${unacknowledged.get(inodes[i] ?? 0) ?? ''}`;
    });
  }

  private async unacknowledged(inodes: ReadonlySet<number>): Promise<Map<number, number>> {
    const found = new Map<number, number>();
    if (inodes.size === 0) return found;
    const tables = await Promise.all(
      TCP_TABLES.map((path) => readFile(path, 'latin1').catch(() => '')),
    );
    for (const table of tables) unacknowledgedIn(table, inodes, found);
    return found;
  }

  private inodeOf(socket: Socket): Promise<number | undefined> {
    let inode = this.inodes.get(socket);
    if (!inode) {
      inode = inodeOfSocket(socket);
      this.inodes.set(socket, inode);
    }
    return inode;
  }
}

/** The inode of a socket's file descriptor (Linux), from /proc/self/fd. */
async function inodeOfSocket(socket: Socket): Promise<number | undefined> {
  const fd = descriptorOf(socket);
  if (fd === undefined) return undefined;
  const link = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
  const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
  return inode === undefined ? undefined : Number(inode);
}
