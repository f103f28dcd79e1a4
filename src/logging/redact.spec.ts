import fc from 'fast-check';
import { decodedFully, encodeAll } from '../../test/support/percent-encoding';
import { API_KEY_RANDOM_CHARS, generateApiKey } from '../auth/api-key';
import { hidesKey, mayBeSecret, REDACTED, redactDeep, redactKeys, redactUrl } from './redact';

const KEY = 'sk_4fTq9ZkLmN2pQrStUvWxYz0123456789AbCdEfGhIjK';
const SECRET_PART = KEY.slice(3);
/** The key's body cut after its 20th character, the halves joined by `separator`. */
const cutInTwo = (separator: string): string =>
  `${SECRET_PART.slice(0, 20)}${separator}${SECRET_PART.slice(20)}`;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * A key's body (a key without `sk_`), drawn as `generateApiKey` draws it: each character uniform
 * over base62. Without fast-check's bias towards edge values (`000…0`), which a real key never
 * shows: the rule is about what keys are, with odds of a miss stated in `redact.ts`.
 */
const keyBody = fc.noBias(
  fc.string({
    unit: fc.constantFrom(...Array.from(BASE62)),
    minLength: API_KEY_RANDOM_CHARS,
    maxLength: API_KEY_RANDOM_CHARS,
  }),
);

/**
 * A key's body cut into pieces (anywhere, up to 8 cuts), joined by the characters a request id
 * may hold besides letters and digits.
 */
const cutKeyBody = fc
  .tuple(
    keyBody,
    fc.uniqueArray(fc.integer({ min: 1, max: API_KEY_RANDOM_CHARS - 1 }), { maxLength: 8 }),
    fc.array(fc.constantFrom('.', '_', ':', '-'), { minLength: 8, maxLength: 8 }),
  )
  .map(([body, cuts, separators]) => {
    let cut = '';
    let from = 0;
    [...cuts.sort((a, b) => a - b), body.length].forEach((to, i) => {
      cut += (i > 0 ? separators[i - 1] : '') + body.slice(from, to);
      from = to;
    });
    return cut;
  });

/** Whether `text` holds any 16 characters of `body` in a row: what a reader could piece a key from. */
const holdsPartOf = (text: string, body: string): boolean =>
  Array.from({ length: body.length - 15 }, (_, i) => body.slice(i, i + 16)).some((part) =>
    text.includes(part),
  );

describe('redactUrl', () => {
  it('returns an ordinary url as it is', () => {
    for (const url of [
      '/v1/store/orders',
      '/v1/store/orders/42',
      '/v2/store/orders?status=pending,shipped&limit=10&sort=-shipDate',
      '/v2/store/orders?shipDateFrom=2026-01-01T00%3A00%3A00Z&petId=7',
      '/health/ready',
      '/tasks/desk?monkey=banana&keyword=x&q=a+b',
      // What an operator reads a request by: order ids (int64, either sign), key ids, filters.
      '/v1/store/orders/9223372036854775807',
      '/v2/store/orders/-9223372036854775808',
      '/v1/store/orders/00000000000000000042',
      '/admin/v1/keys/0d6f4b0e-8f33-4c6e-9a53-2f1d1b7c9e10/rotate',
      '/admin/v1/audit?actor=key:0d6f4b0e-8f33-4c6e-9a53-2f1d1b7c9e10&target=order:4711',
      '/v2/store/orders?status=pending,shipped,cancelled&sort=-shipDate&petId=9223372036854775807',
      '/v2/store/orders?shipDateFrom=2026-01-01T00:00:00.000Z&shipDateTo=2026-12-31T23%3A59%3A59.999Z',
      '/v1/store/orders?traceId=4bf92f3577b34da6a3ce929d0e0e4736&span=00F067AA0BA902B7',
    ]) {
      expect(redactUrl(url)).toBe(url);
    }
  });

  // Where a client may put a key in a url, and how (the query string, encoded or not,
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
    ['any parameter, the key without its prefix', `/v1/store/orders?q=${SECRET_PART}`],
    ['any parameter, without prefix, encoded', `/v1/store/orders?q=${encodeAll(SECRET_PART)}`],
    ['any parameter, without prefix, cut in two', `/v1/store/orders?q=${cutInTwo('.')}`],
    ['a parameter name, the key without its prefix', `/v1/store/orders?${SECRET_PART}=1`],
    ['the path, the key without its prefix', `/v1/store/orders/${SECRET_PART}`],
    ['the path, without prefix, encoded', `/v1/store/orders/${encodeAll(SECRET_PART, false)}`],
    ['the path, without prefix, cut in two', `/v1/store/orders/${cutInTwo('-')}`],
    ['the fragment, the key without its prefix', `/v1/store/orders#${SECRET_PART}`],
  ])('leaves no key in %s', (_, url) => {
    const redacted = redactUrl(url);
    expect(redacted).toContain(REDACTED);
    expect(decodedFully(redacted)).not.toContain(SECRET_PART);
    expect(holdsPartOf(decodedFully(redacted), SECRET_PART)).toBe(false);
  });

  it('leaves no key body in a query value or a path segment, whole or cut, encoded or not', () => {
    fc.assert(
      fc.property(cutKeyBody, fc.boolean(), (body, encoded) => {
        const value = encoded ? encodeAll(body) : body;
        for (const url of [`/v1/store/orders?q=${value}`, `/v1/store/orders/${value}`]) {
          const shown = decodedFully(redactUrl(url));
          expect(holdsPartOf(shown, body.replace(/[^A-Za-z0-9]/g, ''))).toBe(false);
        }
      }),
    );
  });

  it('leaves no generated key anywhere in a url, however it is encoded', () => {
    for (let i = 0; i < 50; i++) {
      const key = generateApiKey();
      for (const url of [
        `/v1/store/orders?q=${key}`,
        `/v1/store/orders?q=${encodeURIComponent(encodeAll(key))}`,
        `/v1/store/orders/${key}`,
        `/v1/store/orders/${key.slice(3)}`,
        `/v1/store/orders?q=${key.slice(3)}`,
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
    cutInTwo('.'),
    cutInTwo('-'),
    cutInTwo('_'),
    cutInTwo(':'),
    `trace:${cutInTwo('.')}`,
    SECRET_PART.match(/.{1,4}/g)?.join('.') ?? '',
    SECRET_PART.slice(0, 22),
  ])('takes %s for a secret', (id) => {
    expect(mayBeSecret(id)).toBe(true);
  });

  it('takes a key body cut anywhere, by any separators a request id may hold, for a secret', () => {
    fc.assert(fc.property(cutKeyBody, (id) => expect(mayBeSecret(id)).toBe(true)));
  });

  it.each([
    'b7c1f0a2-3c4d-4e5f-8a9b-0c1d2e3f4a5b',
    'b7c1f0a23c4d4e5f8a9b0c1d2e3f4a5b',
    'B7C1F0A23C4D4E5F8A9B0C1D2E3F4A5B',
    '01ARZ3NDEKTSV4RRFFQ69G5FAV',
    'V1StGXR8_Z5jdHi6B-myT',
    'client-trace:42.a_b',
    '1-5759e988-bd862e3fe1be46a994272793',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    'checkout-service:order-9223372036854775807',
    'Req-42.AbC',
    SECRET_PART.slice(0, 21),
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

describe('a key in compatibility forms (fullwidth)', () => {
  /** `text` in fullwidth forms: `sk_` is `ｓｋ＿`. */
  const fullwidth = (text: string): string =>
    Array.from(text, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)).join('');
  const wide = fullwidth(KEY);
  /** As Node hands a url's raw bytes over: its UTF-8, one character a byte. */
  const raw = Buffer.from(wide, 'utf8').toString('latin1');

  it('is redacted in a path segment and a query value, raw or percent-encoded', () => {
    for (const url of [
      `/v1/store/orders/${raw}`,
      `/v1/store/orders/${encodeURIComponent(wide)}`,
      `/v1/store/orders?q=${encodeURIComponent(wide)}`,
      `/v1/store/orders?q=${raw}`,
      `/v1/store/orders/${encodeURIComponent(fullwidth(SECRET_PART))}`,
    ]) {
      const shown = redactUrl(url);
      expect(shown).toContain(REDACTED);
      expect(shown).not.toContain(raw);
      expect(shown).not.toContain(encodeURIComponent(wide).slice(0, 30));
    }
  });

  it('is a secret as a request id, and redacted from free text', () => {
    expect(mayBeSecret(wide)).toBe(true);
    expect(mayBeSecret(fullwidth(SECRET_PART))).toBe(true);
    const text = redactKeys(`no key ${wide} here`);
    expect(text).not.toContain(wide);
    expect(text).not.toContain(SECRET_PART);
  });

  it('leaves other text beyond ASCII as it is', () => {
    expect(redactUrl('/v1/store/orders?q=Zürich')).toBe('/v1/store/orders?q=Zürich');
    expect(redactKeys('Zürich 東京')).toBe('Zürich 東京');
    expect(mayBeSecret('東京-Zürich')).toBe(false);
  });
});
