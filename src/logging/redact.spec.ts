import { decodedFully, encodeAll } from '../../test/support/percent-encoding';
import { generateApiKey } from '../auth/api-key';
import { hidesKey, mayBeSecret, REDACTED, redactDeep, redactKeys, redactUrl } from './redact';

const KEY = 'sk_4fTq9ZkLmN2pQrStUvWxYz0123456789AbCdEfGhIjK';
const SECRET_PART = KEY.slice(3);

describe('redactUrl', () => {
  it('returns an ordinary url as it is', () => {
    for (const url of [
      '/v1/store/orders',
      '/v1/store/orders/42',
      '/v2/store/orders?status=pending,shipped&limit=10&sort=-shipDate',
      '/v2/store/orders?shipDateFrom=2026-01-01T00%3A00%3A00Z&petId=7',
      '/health/ready',
      '/tasks/desk?monkey=banana&keyword=x&q=a+b',
    ]) {
      expect(redactUrl(url)).toBe(url);
    }
  });

  // Where a client may put a key in a url, and how (contract §2: the query string, encoded or not,
  // names and values, percent-encoding of any character, `+` for space, mixed case; the path).
  it.each([
    ['a key-named parameter', `/v1/store/orders?api_key=${KEY}`],
    ['a key-named parameter, upper case', `/v1/store/orders?x=1&API-KEY=${KEY}`],
    ['a parameter name with an encoded letter', `/v1/store/orders?%61pi_key=${KEY}`],
    ['a parameter name with an encoded underscore', `/v1/store/orders?api%5Fkey=${KEY}`],
    ['a parameter name with + for a space', `/v1/store/orders?api+key=${KEY}`],
    ['a parameter name fully encoded', `/v1/store/orders?${encodeAll('access_token')}=${KEY}`],
    ['a parameter name in array syntax', `/v1/store/orders?api_key[]=${KEY}`],
    ['a fragment', `/v1/store/orders?apikey=${KEY}#frag`],
    ['a token before another parameter', `/v1/store/orders?access_token=${KEY}&x=1`],
    ['any parameter', `/v1/store/orders?q=${KEY}`],
    ['any parameter, after Bearer and an encoded space', `/v1/store/orders?q=Bearer%20${KEY}`],
    ['any parameter, after Bearer and +', `/v1/store/orders?q=Bearer+${KEY}`],
    ['a value with an encoded prefix', `/v1/store/orders?q=%73k%5F${SECRET_PART}`],
    ['a value fully encoded, upper-case hex', `/v1/store/orders?q=${encodeAll(KEY)}`],
    ['a value fully encoded, lower-case hex', `/v1/store/orders?q=${encodeAll(KEY, false)}`],
    ['a value encoded twice', `/v1/store/orders?q=${encodeAll(encodeAll(KEY))}`],
    ['a value with its prefix in upper case', `/v1/store/orders?q=SK_${SECRET_PART}`],
    ['a value after ;', `/v1/store/orders?a=1;q=${KEY}`],
    ['a parameter name', `/v1/store/orders?${KEY}=1`],
    ['a bare parameter', `/v1/store/orders?${KEY}`],
    ['the path', `/v1/store/orders/${KEY}`],
    ['the path, encoded', `/v1/store/orders/${encodeAll(KEY)}`],
    ['the path, of an unknown route', `/${KEY}/x`],
    ['a path segment with more in it', `/v1/store/orders/id-${KEY}.json`],
    ['an absolute-form url with credentials', `http://user:${KEY}@host/v1/store/orders`],
    ['the fragment', `/v1/store/orders#${KEY}`],
  ])('leaves no key in %s', (_, url) => {
    const redacted = redactUrl(url);
    expect(redacted).toContain(REDACTED);
    expect(decodedFully(redacted)).not.toContain(SECRET_PART);
  });

  it('leaves no generated key anywhere in a url, however it is encoded', () => {
    for (let i = 0; i < 50; i++) {
      const key = generateApiKey();
      for (const url of [
        `/v1/store/orders?q=${key}`,
        `/v1/store/orders?q=${encodeURIComponent(encodeAll(key))}`,
        `/v1/store/orders/${key}`,
      ]) {
        expect(decodedFully(redactUrl(url))).not.toContain(key.slice(3));
      }
    }
  });

  it.each([
    ['/x?password=hunter2&page=2', '/x?password=[REDACTED]&page=2'],
    ['/x?client_secret=abc;token=def', '/x?client_secret=[REDACTED];token=[REDACTED]'],
    ['/x?%61pi_key=abc&page=2', '/x?%61pi_key=[REDACTED]&page=2'],
    ['/x?Session+ID=abc', '/x?Session+ID=[REDACTED]'],
    ['/x?monkey=banana', '/x?monkey=banana'],
    ['/x?keyword=banana', '/x?keyword=banana'],
    [`/v1/store/orders/${KEY}?page=2`, '/v1/store/orders/[REDACTED]?page=2'],
  ])('redacts secret-named values by name, and only what holds a secret: %s', (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });

  it('takes a value still encoded after its bounded decodings for a hidden key', () => {
    // One layer per pass: decoding it to the end would take time quadratic in its length.
    const nested = `%${'25'.repeat(5000)}41`;
    expect(redactUrl(`/x?q=${nested}`)).toBe(`/x?q=${REDACTED}`);
    expect(redactUrl(`/x?q=%252541`)).toBe('/x?q=%252541');
  });
});

describe('hidesKey', () => {
  it('finds a key however it is encoded, and nothing in ordinary text', () => {
    expect(hidesKey(KEY)).toBe(true);
    expect(hidesKey(encodeAll(KEY))).toBe(true);
    expect(hidesKey(`sk-${SECRET_PART}`)).toBe(true);
    expect(hidesKey('pending,shipped')).toBe(false);
    expect(hidesKey('100%')).toBe(false);
    expect(hidesKey('%E0%A4%A')).toBe(false);
  });
});

describe('redactKeys', () => {
  it('replaces key-shaped runs, and the whole text when a key is encoded in it', () => {
    expect(redactKeys(`invalid input syntax for type bigint: "${KEY}"`)).toBe(
      `invalid input syntax for type bigint: "${REDACTED}"`,
    );
    expect(redactKeys(`value ${encodeAll(KEY)} rejected`)).toBe(REDACTED);
    expect(redactKeys('connect ECONNREFUSED 127.0.0.1:5432')).toBe(
      'connect ECONNREFUSED 127.0.0.1:5432',
    );
  });
});

describe('mayBeSecret (request ids)', () => {
  it.each([
    KEY,
    SECRET_PART,
    `trace-${KEY}`,
    `SK-${SECRET_PART}`,
    `sk.${SECRET_PART}`,
    generateApiKey().slice(3),
  ])('takes %s for a secret', (id) => {
    expect(mayBeSecret(id)).toBe(true);
  });

  it.each([
    'b7c1f0a2-3c4d-4e5f-8a9b-0c1d2e3f4a5b',
    'b7c1f0a23c4d4e5f8a9b0c1d2e3f4a5b',
    'B7C1F0A23C4D4E5F8A9B0C1D2E3F4A5B',
    '01ARZ3NDEKTSV4RRFFQ69G5FAV',
    'V1StGXR8_Z5jdHi6B-myT',
    'client-trace:42.a_b',
    '1-5759e988-bd862e3fe1be46a994272793',
  ])('takes %s for an ordinary id', (id) => {
    expect(mayBeSecret(id)).toBe(false);
  });
});

describe('redactDeep (logged errors)', () => {
  it('redacts every string of a serialized error, its parameters and cause included', () => {
    const serialized = {
      type: 'QueryFailedError',
      message: `invalid input: "${KEY}"`,
      stack: `QueryFailedError: invalid input: "${KEY}"\n    at x (y.ts:1:1)`,
      query: 'SELECT 1 WHERE x = $1',
      parameters: [KEY, 42, null],
      cause: { message: encodeAll(KEY), at: new Date(0) },
    };
    const shown = JSON.stringify(redactDeep(serialized));
    expect(decodedFully(shown)).not.toContain(SECRET_PART);
    expect(JSON.parse(shown)).toMatchObject({
      type: 'QueryFailedError',
      query: 'SELECT 1 WHERE x = $1',
      parameters: [REDACTED, 42, null],
      cause: { message: REDACTED, at: new Date(0).toISOString() },
    });
  });
});
