import { unacknowledgedIn } from './client-progress';

/** /proc/net/tcp6 as Linux writes it: a listener, a connection, a connection closing (inode 0). */
const TCP6 = [
  '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
  '   0: 00000000000000000000000000000000:0BB8 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 412345 1 00000000cb2b4105 100 0 0 10 0',
  '   1: 0000000000000000FFFF00000100007F:0BB8 0000000000000000FFFF00000100007F:C350 01 0038D3C0:00000000 04:000001F4 00000000  1000        0 412399 1 00000000bcbd070c 20 4 30 10 -1',
  '   2: 0000000000000000FFFF00000100007F:0BB8 0000000000000000FFFF00000100007F:C880 06 00000000:00000000 03:00000742 00000000     0        0 0 3 0000000017969173',
  '',
].join('\n');

describe('unacknowledgedIn', () => {
  it("gives the tx_queue of the sockets asked for, by inode, and nothing of the others'", () => {
    const found = new Map<number, number>();
    unacknowledgedIn(TCP6, new Set([412399, 777]), found);
    expect(found).toEqual(new Map([[412399, 0x38d3c0]]));
  });

  it('finds nothing in an empty table (no /proc)', () => {
    const found = new Map<number, number>();
    unacknowledgedIn('', new Set([412399]), found);
    expect(found.size).toBe(0);
  });
});
