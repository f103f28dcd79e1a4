import { selfServerUrl, versionedServerUrl } from './server-url';

describe('versionedServerUrl', () => {
  it.each([
    ['https://api.example.com', 'https://api.example.com/v1'],
    ['https://api.example.com/', 'https://api.example.com/v1'],
    ['https://api.example.com/v1', 'https://api.example.com/v1'],
    ['https://api.example.com/v1/', 'https://api.example.com/v1'],
    ['https://example.com/store/v1', 'https://example.com/store/v1'],
    ['https://example.com/store', 'https://example.com/store/v1'],
    ['http://localhost:3000', 'http://localhost:3000/v1'],
  ])('shows %s as %s', (configured, shown) => {
    expect(versionedServerUrl(configured)).toBe(shown);
  });

  it.each([
    ['https://api.example.com', 'https://api.example.com/v2'],
    ['https://api.example.com/v1/', 'https://api.example.com/v2'],
    ['https://api.example.com/v2', 'https://api.example.com/v2'],
  ])('shows %s as %s in the v2 document', (configured, shown) => {
    expect(versionedServerUrl(configured, '2')).toBe(shown);
  });
});

describe('selfServerUrl', () => {
  it.each([
    ['http', 'localhost:3000', 'http://localhost:3000/v1'],
    ['https', 'api.example.com', 'https://api.example.com/v1'],
    ['http', '127.0.0.1:8080', 'http://127.0.0.1:8080/v1'],
    ['http', '[::1]:3000', 'http://[::1]:3000/v1'],
  ])('takes %s://%s as %s', (protocol, host, url) => {
    expect(selfServerUrl(protocol, host)).toBe(url);
  });

  it.each([
    ['http', 'x" onmouseover=y'],
    ['http', 'evil.example/phish'],
    ['http', 'user@evil.example'],
    ['http', 'api.example.com:99999'],
    ['http', '[not-ipv6]:80'],
    ['http', '-bad-.example'],
    ['http', ''],
    ['http', undefined],
    ['javascript', 'api.example.com'],
    ['ftp', 'api.example.com'],
  ])('falls back to the relative /v1 for %s://%s', (protocol, host) => {
    expect(selfServerUrl(protocol, host)).toBe('/v1');
  });
});
