import { redactUrl } from './redact-url';

const KEY = 'sk_4fTq9ZkLmN2pQrStUvWxYz0123456789AbCdEfGhIjK';

describe('redactUrl', () => {
  it('returns an ordinary url as it is', () => {
    expect(redactUrl('/v1/store/orders')).toBe('/v1/store/orders');
    expect(redactUrl('/v2/store/orders?status=pending&limit=10')).toBe(
      '/v2/store/orders?status=pending&limit=10',
    );
  });

  it.each([
    `/v1/store/orders?api_key=${KEY}`,
    `/v1/store/orders?x=1&API-KEY=${KEY}`,
    `/v1/store/orders?apikey=${KEY}#frag`,
    `/v1/store/orders?access_token=${KEY}&x=1`,
    `/v1/store/orders?token=${KEY}`,
    `/v1/store/orders?key=${KEY}`,
    `/v1/store/orders/${KEY}`,
    `/v1/store/orders?q=${KEY}`,
    `/v1/store/orders?q=Bearer%20${KEY}`,
    `/v1/store/orders?api%5Fkey=${KEY}`,
  ])('leaves no key in %s', (url) => {
    const redacted = redactUrl(url);
    expect(redacted).not.toContain(KEY.slice(3));
    expect(redacted).toContain('[REDACTED]');
  });

  it.each([
    ['/x?password=hunter2&page=2', '/x?password=[REDACTED]&page=2'],
    ['/x?client_secret=abc;token=def', '/x?client_secret=[REDACTED];token=[REDACTED]'],
    ['/x?monkey=banana', '/x?monkey=banana'],
    ['/x?keyword=banana', '/x?keyword=banana'],
  ])('redacts secret-named values by name: %s', (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });
});
