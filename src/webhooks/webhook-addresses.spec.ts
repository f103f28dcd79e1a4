import { checkedAddresses, refusedAddress, type WebhookResolver } from './webhook-addresses';

describe('refusedAddress', () => {
  it.each([
    '0.0.0.0',
    '0.255.1.1',
    '10.0.0.1',
    '100.64.0.1',
    '100.127.255.254',
    '127.0.0.1',
    '169.254.169.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '224.0.0.251',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fc00::1',
    'fdff:ffff::1',
    'fe80::1',
    'febf::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:0:10.0.0.1',
    '::127.0.0.1',
    // Ranges that are not global unicast, beyond the private ones.
    '198.18.0.1',
    '198.19.255.254',
    '192.0.0.1',
    '192.0.2.1',
    '192.88.99.1',
    '198.51.100.7',
    '203.0.113.9',
    'fec0::1',
    '2001:db8::1',
    '100::1',
    '4000::1',
    // IPv6 forms that carry a refused IPv4 address.
    '64:ff9b::169.254.169.254',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::10.0.0.1',
    '64:ff9b:1:a9fe:a9:fe00::',
    '2002:7f00:1::',
    '2002:a9fe:a9fe::1',
    '2001:0:4136:e378:8000:63bf:80ff:fffe',
    '2001:0:7f00:1:8000:63bf:3f57:fefd',
    '::ffff:0:127.0.0.1',
    '::ffff:0:7f00:1',
  ])('refuses %s', (address) => {
    expect(refusedAddress(address)).toMatch(/is not a public address/);
  });

  it.each([
    '93.184.216.34',
    '1.1.1.1',
    '100.63.255.255',
    '100.128.0.1',
    '172.32.0.1',
    '2606:4700::1111',
    '::ffff:93.184.216.34',
    '64:ff9b::93.184.216.34',
    '2002:5db8:d822::1',
    '2001:0:4136:e378:8000:63bf:a247:27dd',
  ])('accepts the public address %s', (address) => {
    expect(refusedAddress(address)).toBeUndefined();
  });
});

describe('checkedAddresses', () => {
  const resolver = (answer: string[]): WebhookResolver => ({
    resolve: () =>
      Promise.resolve(
        answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      ),
  });

  it('refuses a name when any of its addresses is not public', async () => {
    await expect(
      checkedAddresses(resolver(['93.184.216.34', '10.0.0.5']), 'hooks.example.test', false),
    ).rejects.toThrow('hooks.example.test resolves to 10.0.0.5 is not a public address');
    await expect(
      checkedAddresses(
        resolver(['2606:4700::1111', '64:ff9b::7f00:1']),
        'hooks.example.test',
        false,
      ),
    ).rejects.toThrow('resolves to 64:ff9b::7f00:1 is not a public address');
  });

  it('answers every address of a public name, and any when private networks are allowed', async () => {
    await expect(
      checkedAddresses(resolver(['93.184.216.34']), 'hooks.example.test', false),
    ).resolves.toEqual([{ address: '93.184.216.34', family: 4 }]);
    await expect(
      checkedAddresses(resolver(['127.0.0.1']), 'localhost', true),
    ).resolves.toHaveLength(1);
  });

  it('checks a literal address without resolving it', async () => {
    const never: WebhookResolver = { resolve: () => Promise.reject(new Error('resolved')) };
    await expect(checkedAddresses(never, '::ffff:169.254.169.254', false)).rejects.toThrow(
      /not a public address/,
    );
  });
});
