import { Pool } from 'pg';
import { generateApiKey } from '../src/auth/api-key';
import { AppProcess } from './support/app-process';
import { buildOnce } from './support/build';
import { bearerFor } from './support/auth';
import { httpRequest } from './support/http';
import { decodedFully, encodeAll } from './support/percent-encoding';
import { insertOrders } from './support/orders';
import { rawExchange } from './support/raw-http';
import { createTestDatabase } from './support/test-app';

/** The built service (`npm run build`, once per run), as `npm start` runs it. */
const START_BUILT = ['node', 'dist/main.js'];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A request that carries `key` somewhere; resolves to the request id the server answered with. */
type Send = (key: string) => Promise<string>;

/** A key's body (the key without `sk_`) cut after its 20th character, joined by `separator`. */
const cutInTwo = (key: string, separator: string): string =>
  `${key.slice(3, 23)}${separator}${key.slice(23)}`;

/**
 * Fails when `text` holds any 16 characters in a row of the key's body, as they are or once
 * everything but letters and digits is taken out (a body cut in pieces): 16 characters of it
 * would not be in a log by chance.
 */
function expectNoPartOf(key: string, text: string): void {
  const body = key.slice(3);
  const lettersAndDigits = text.replace(/[^A-Za-z0-9]/g, '');
  for (let at = 0; at + 16 <= body.length; at++) {
    expect(text).not.toContain(body.slice(at, at + 16));
    expect(lettersAndDigits).not.toContain(body.slice(at, at + 16));
  }
}

describe('a key never appears in a log line, wherever the client put it (a real process, its log captured)', () => {
  let app: AppProcess;
  let url: string;
  let auth: Record<string, string>;
  let db: Pool;

  beforeAll(async () => {
    await buildOnce();
    const databaseUrl = await createTestDatabase();
    db = new Pool({ connectionString: databaseUrl, max: 1 });
    ({ app, url } = await AppProcess.start(START_BUILT, {
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'info',
    }));
    auth = await bearerFor(databaseUrl);
  }, 300_000);
  afterAll(async () => {
    await app.stop();
    await db.end();
  });

  /** A request with the client's key, the rest as `options` say; its request id. */
  async function send(
    path: string,
    options: { method?: string; headers?: Record<string, string> } = {},
  ): Promise<string> {
    const res = await httpRequest(`${url}${path}`, {
      method: options.method,
      headers: { ...auth, ...options.headers },
    });
    return String(res.headers['x-request-id']);
  }

  /** A request written byte for byte (what an HTTP client would not send); its request id. */
  async function sendRaw(head: string): Promise<string> {
    return (await rawExchange(url, head)).headers['x-request-id'];
  }

  const placements: [string, Send][] = [
    ['X-Request-Id', (key) => send('/v1/store/orders', { headers: { 'X-Request-Id': key } })],
    [
      'X-Request-Id, the key without its prefix',
      (key) => send('/v1/store/orders', { headers: { 'X-Request-Id': key.slice(3) } }),
    ],
    [
      'X-Request-Id, after a prefix of the client',
      (key) => send('/health/live', { headers: { 'X-Request-Id': `trace:${key}` } }),
    ],
    [
      'a query parameter with a percent-encoded name, the key without its prefix',
      (key) => send(`/v1/store/orders?%61pi_key=${key.slice(3)}`),
    ],
    [
      'a query parameter with a percent-encoded name',
      (key) => send(`/v1/store/orders?%61pi_key=${key}`),
    ],
    [
      'a query parameter named in upper case, the key without its prefix',
      (key) => send(`/v1/store/orders?API_KEY=${key.slice(3)}`),
    ],
    [
      'a query parameter named with + for a space, the key without its prefix',
      (key) => send(`/v1/store/orders?api+key=${key.slice(3)}`),
    ],
    ['any query parameter, after Bearer+', (key) => send(`/v1/store/orders?q=Bearer+${key}`)],
    [
      'a query value, every character encoded',
      (key) => send(`/v1/store/orders?q=${encodeAll(key)}`),
    ],
    [
      'a query value, encoded twice',
      (key) => send(`/v1/store/orders?q=${encodeAll(encodeAll(key))}`),
    ],
    [
      'a query value, its prefix in upper case',
      (key) => send(`/v1/store/orders?q=SK_${key.slice(3)}`),
    ],
    ['a query parameter’s name', (key) => send(`/v1/store/orders?${key}=1`)],
    [
      'a query value, the key without its prefix',
      (key) => send(`/v1/store/orders?q=${key.slice(3)}`),
    ],
    [
      'a query value, the key without its prefix, every character encoded',
      (key) => send(`/v1/store/orders?q=${encodeAll(key.slice(3))}`),
    ],
    [
      'a query value, the key without its prefix, cut in two',
      (key) => send(`/v1/store/orders?q=${cutInTwo(key, '.')}`),
    ],
    [
      'a query parameter’s name, the key without its prefix',
      (key) => send(`/v1/store/orders?${key.slice(3)}=1`),
    ],
    [
      'the route param, the key without its prefix',
      (key) => send(`/v1/store/orders/${key.slice(3)}`, { method: 'DELETE' }),
    ],
    [
      'the route param, the key without its prefix, encoded',
      (key) => send(`/v1/store/orders/${encodeAll(key.slice(3))}`, { method: 'DELETE' }),
    ],
    ['an unknown path, the key without its prefix', (key) => send(`/v1/${key.slice(3)}/x`)],
    [
      'a v2 filter, the key without its prefix',
      (key) => send(`/v2/store/orders?status=${key.slice(3)}`),
    ],
    ...['.', '-', '_', ':'].map((separator): [string, Send] => [
      `X-Request-Id, the key without its prefix cut in two by ${separator}`,
      (key) => send('/v1/store/orders', { headers: { 'X-Request-Id': cutInTwo(key, separator) } }),
    ]),
    [
      'X-Request-Id, the key without its prefix cut every 4 characters',
      (key) =>
        send('/health/live', {
          headers: { 'X-Request-Id': (key.slice(3).match(/.{1,4}/g) ?? []).join('.') },
        }),
    ],
    [
      'the route param (400 INVALID_ORDER_ID)',
      (key) => send(`/v1/store/orders/${key}`, { method: 'DELETE' }),
    ],
    [
      'the route param, encoded',
      (key) => send(`/v1/store/orders/${encodeAll(key)}`, { method: 'DELETE' }),
    ],
    ['the path of a 405', (key) => send(`/v1/store/orders/${key}`, { method: 'PATCH' })],
    ['an unknown path under /v1', (key) => send(`/v1/${key}`)],
    ['an unknown path outside /v1', (key) => send(`/${key}`)],
    ['a v2 filter (400 INVALID_QUERY naming it)', (key) => send(`/v2/store/orders?status=${key}`)],
    ['a v2 cursor (400 INVALID_CURSOR)', (key) => send(`/v2/store/orders?cursor=${key}`)],
    ['an unknown v2 parameter', (key) => send(`/v2/store/orders?${key}=1`)],
    [
      'Authorization, as an unknown key',
      (key) => send('/v1/store/orders', { headers: { Authorization: `Bearer ${key}` } }),
    ],
    ['X-Api-Key', (key) => send('/v1/store/orders', { headers: { 'X-Api-Key': key } })],
    ['User-Agent', (key) => send('/v1/store/orders', { headers: { 'User-Agent': key } })],
    [
      'Referer',
      (key) => send('/v1/store/orders', { headers: { Referer: `https://x.test/?api_key=${key}` } }),
    ],
    ['Cookie', (key) => send('/v1/store/orders', { headers: { Cookie: `session=${key}` } })],
    ['X-Forwarded-For', (key) => send('/v1/store/orders', { headers: { 'X-Forwarded-For': key } })],
    [
      'a fragment in the request line',
      (key) =>
        sendRaw(`GET /v1/store/orders#${key} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
    ],
    [
      'an absolute-form request target',
      (key) =>
        sendRaw(
          `GET http://127.0.0.1/v1/store/orders?token=${key} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
        ),
    ],
    [
      'a request the HTTP parser refuses',
      (key) =>
        sendRaw(
          `GET /v1/store/orders?api_key=${key} HTTP/1.1\r\nHost: x\r\nBad Header: ${key}\r\n\r\n`,
        ),
    ],
  ];

  it.each(placements)('logs the request, not the key, when it is in %s', async (_, request) => {
    const key = generateApiKey();
    const id = await request(key);
    await app.waitFor(new RegExp(`"id":"${id}"`));
    const output = app.output();
    expect(decodedFully(output)).not.toContain(key.slice(3));
    expect(output).not.toContain(key.slice(3));
    expectNoPartOf(key, output);
    expectNoPartOf(key, decodedFully(output));
  });

  it.each(['.', '-', '_', ':'])(
    'replaces an X-Request-Id holding a key’s body cut in two by %s with a new id: in the log line, the response and the audit trail',
    async (separator) => {
      const key = generateApiKey();
      const [orderId] = await insertOrders(db, [{ status: 'pending' }]);
      const res = await httpRequest(`${url}/v1/store/orders/${orderId}`, {
        method: 'DELETE',
        headers: { ...auth, 'X-Request-Id': cutInTwo(key, separator) },
      });
      expect(res.status).toBe(204);
      const id = String(res.headers['x-request-id']);
      expect(id).toMatch(UUID);
      await app.waitFor(new RegExp(`"id":"${id}"`));
      const line = app.json().find((l) => (l.req as { id?: string } | undefined)?.id === id);
      expect(line).toMatchObject({
        msg: 'request completed',
        req: { method: 'DELETE', url: `/v1/store/orders/${orderId}` },
        res: { statusCode: 204 },
      });
      const { rows } = await db.query<{ request_id: string | null }>(
        'SELECT request_id FROM audit_events WHERE target = $1',
        [`order:${orderId}`],
      );
      expect(rows).toEqual([{ request_id: id }]);
      expectNoPartOf(key, app.output());
    },
  );

  it('keeps what an operator reads a request by: an order id in the path, a UUID or trace request id, a status filter', async () => {
    const requestId = '0d6f4b0e-8f33-4c6e-9a53-2f1d1b7c9e10';
    const orderPath = '/v1/store/orders/9223372036854775807';
    expect(
      await send(orderPath, { method: 'DELETE', headers: { 'X-Request-Id': requestId } }),
    ).toBe(requestId);
    const traceId = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const listPath = '/v2/store/orders?status=pending,shipped,cancelled&sort=-shipDate';
    expect(await send(listPath, { headers: { 'X-Request-Id': traceId } })).toBe(traceId);
    await app.waitFor(new RegExp(`"id":"${traceId}"`));
    await app.waitFor(new RegExp(`"id":"${requestId}"`));
    const lineOf = (id: string) =>
      app.json().find((l) => (l.req as { id?: string } | undefined)?.id === id);
    expect(lineOf(requestId)).toMatchObject({ req: { url: orderPath } });
    expect(lineOf(traceId)).toMatchObject({ req: { url: listPath } });
  });

  it('answers a key sent as X-Request-Id with a new id, and logs the request under it', async () => {
    const key = generateApiKey();
    const res = await httpRequest(`${url}/v1/store/orders`, {
      headers: { ...auth, 'X-Request-Id': key },
    });
    expect(res.status).toBe(200);
    const id = String(res.headers['x-request-id']);
    expect(id).toMatch(UUID);
    await app.waitFor(new RegExp(`"id":"${id}"`));
    const line = app.json().find((l) => (l.req as { id?: string } | undefined)?.id === id);
    expect(line).toMatchObject({ msg: 'request completed', req: { url: '/v1/store/orders' } });
  });

  it('redacts the value of a secret-named parameter whatever its name’s encoding', async () => {
    // Without its prefix, the key is known for one by its parameter's name alone.
    const key = generateApiKey().slice(3);
    const id = await send(`/v1/store/orders?%61pi_key=${key}&page=2`);
    await app.waitFor(new RegExp(`"id":"${id}"`));
    const line = app.json().find((l) => (l.req as { id?: string } | undefined)?.id === id);
    expect(line).toMatchObject({ req: { url: '/v1/store/orders?%61pi_key=[REDACTED]&page=2' } });
  });

  it('never logs the key the requests were authenticated with', () => {
    expect(app.output()).not.toContain(auth.Authorization.slice('Bearer sk_'.length));
  });
});
