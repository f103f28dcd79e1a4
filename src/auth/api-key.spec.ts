import {
  API_KEY_RANDOM_CHARS,
  displayPrefix,
  generateApiKey,
  hashApiKey,
  parseBearer,
} from './api-key';

describe('API keys', () => {
  it('are sk_ followed by 43 base62 characters: 256 bits, well beyond 128', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^sk_[0-9A-Za-z]{43}$/);
    expect(API_KEY_RANDOM_CHARS * Math.log2(62)).toBeGreaterThanOrEqual(128);
  });

  it('never repeat and use the whole alphabet', () => {
    const keys = Array.from({ length: 2000 }, generateApiKey);
    expect(new Set(keys).size).toBe(keys.length);
    const seen = new Set(keys.join('').slice(0));
    expect(seen.size).toBeGreaterThanOrEqual(63); // 62 base62 characters and "_"
  });

  it('are hashed with SHA-256, hex', () => {
    expect(hashApiKey('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('show a short prefix for listings', () => {
    expect(displayPrefix('sk_ABCDEFGHIJ')).toBe('sk_ABCDEF');
  });
});

describe('parseBearer', () => {
  it.each([
    ['Bearer sk_abc', 'sk_abc'],
    ['bearer sk_abc', 'sk_abc'],
    ['BEARER sk_abc', 'sk_abc'],
    ['Bearer abc.def-ghi_jkl~+/==', 'abc.def-ghi_jkl~+/=='],
  ])('takes the token of %p', (header, token) => {
    expect(parseBearer(header)).toEqual({ kind: 'token', token });
  });

  it('tells a missing header from a malformed one', () => {
    expect(parseBearer(undefined)).toEqual({ kind: 'missing' });
    expect(parseBearer('')).toEqual({ kind: 'missing' });
  });

  it.each([
    'Basic dXNlcjpwYXNz',
    'Bearer',
    'Bearer ',
    'Bearer   ',
    'Bearer  sk_abc',
    'Bearer sk_abc sk_def',
    'Bearer sk_abc ',
    'Bearersk_abc',
    'Token sk_abc',
    'Bearer sk_ab"c',
    `Bearer sk_${'a'.repeat(10_240)}`,
  ])('refuses %p', (header) => {
    expect(parseBearer(header)).toEqual({ kind: 'malformed' });
  });

  it('refuses a header sent twice', () => {
    expect(parseBearer(['Bearer a', 'Bearer b'])).toEqual({ kind: 'malformed' });
  });
});
