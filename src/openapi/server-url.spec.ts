import { versionedServerUrl } from './server-url';

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
