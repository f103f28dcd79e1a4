import type { Request } from 'express';
import { clientAddressOf } from './client-address';

const requestFrom = (ip: string | undefined, socket = '::ffff:10.1.2.3'): Request =>
  ({ ip, socket: { remoteAddress: socket } }) as unknown as Request;

describe('clientAddressOf', () => {
  it.each([
    ['203.0.113.9', '203.0.113.9'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
  ])('tracks %s as %s', (ip, tracked) => {
    expect(clientAddressOf(requestFrom(ip))).toBe(tracked);
  });

  it.each([['not-an-ip'], ['999.1.1.1'], ['x'.repeat(15_000)], [''], [undefined]])(
    'falls back to the socket address for %s',
    (ip) => {
      expect(clientAddressOf(requestFrom(ip))).toBe('10.1.2.3');
    },
  );
});
