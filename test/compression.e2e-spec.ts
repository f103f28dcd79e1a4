import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { api } from './support/client';
import { createTestApp, listen, TestApp } from './support/test-app';

/** More than three of the list's batches of 1,000: the list is streamed from a cursor. */
const STREAMED_ORDERS = 3_003;

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The bytes as they came over the wire (not decoded). */
  wire: Buffer;
}

/** One request, its body kept exactly as sent: no client-side decoding. */
function rawGet(url: string, headers: Record<string, string>): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, wire: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** A deflate block boundary written by a flush (an empty stored block): 00 00 ff ff. */
function flushMarkers(deflated: Buffer): number {
  let count = 0;
  for (
    let at = deflated.indexOf(FLUSH_MARKER);
    at >= 0;
    at = deflated.indexOf(FLUSH_MARKER, at + 4)
  )
    count++;
  return count;
}
const FLUSH_MARKER = Buffer.from([0x00, 0x00, 0xff, 0xff]);

async function seedOrders(t: TestApp, count: number): Promise<void> {
  await t.db.query('TRUNCATE orders');
  await t.db.query(
    `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status)
     SELECT g, g * 3, g % 5 + 1, timestamptz '2026-11-22T10:00:00Z' + g * interval '1 minute',
            g % 2 = 0, (ARRAY['pending', 'shipped', 'cancelled'])[g % 3 + 1]
       FROM generate_series(1, $1::int) AS g`,
    [count],
  );
}

describe('compression', () => {
  let t: TestApp;
  let url: string;
  let auth: Record<string, string>;

  beforeAll(async () => {
    t = await createTestApp();
    url = await listen(t);
    auth = { Authorization: `Bearer ${t.key}` };
  });
  afterAll(() => t.close());

  it('gzips a list for a client that accepts gzip; the decoded body is the document, headers unchanged', async () => {
    await seedOrders(t, 100);
    const plain = await rawGet(`${url}/v1/store/orders`, auth);
    const gzipped = await rawGet(`${url}/v1/store/orders`, { ...auth, 'Accept-Encoding': 'gzip' });

    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(gzipped.status).toBe(200);
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers.vary).toMatch(/Accept-Encoding/i);
    expect(gzipped.wire.length).toBeLessThan(plain.wire.length / 3);
    expect(gunzipSync(gzipped.wire).toString('utf8')).toBe(plain.wire.toString('utf8'));
    for (const name of [
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-request-id',
      'content-security-policy',
      'x-frame-options',
      'strict-transport-security',
      'content-type',
    ]) {
      expect({ name, present: gzipped.headers[name] !== undefined }).toEqual({
        name,
        present: true,
      });
    }
    // The contract client asks for gzip too: its checks run on the decoded body.
    const res = await api(t).get('/v1/store/orders').set('Accept-Encoding', 'gzip').expect(200);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.body).toHaveLength(100);
  });

  it('answers brotli when the client asks for it', async () => {
    await seedOrders(t, 100);
    const plain = await rawGet(`${url}/v1/store/orders`, auth);
    const br = await rawGet(`${url}/v1/store/orders`, { ...auth, 'Accept-Encoding': 'br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.wire).toString('utf8')).toBe(plain.wire.toString('utf8'));
    const res = await api(t).get('/v1/store/orders').set('Accept-Encoding', 'br').expect(200);
    expect(res.headers['content-encoding']).toBe('br');
  });

  it('leaves bodies under 1 KiB as they are', async () => {
    await seedOrders(t, 2);
    const small = await rawGet(`${url}/v1/store/orders`, { ...auth, 'Accept-Encoding': 'gzip' });
    expect(small.status).toBe(200);
    expect(small.wire.length).toBeLessThan(1024);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(small.wire.toString('utf8'))).toHaveLength(2);
  });

  it('compresses a streamed list as it streams, one flush per batch, and it decodes whole', async () => {
    await seedOrders(t, STREAMED_ORDERS);
    const plain = await rawGet(`${url}/v1/store/orders`, auth);
    const gzipped = await rawGet(`${url}/v1/store/orders`, { ...auth, 'Accept-Encoding': 'gzip' });

    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers['content-length']).toBeUndefined();
    const decoded = gunzipSync(gzipped.wire).toString('utf8');
    expect(decoded).toBe(plain.wire.toString('utf8'));
    expect(JSON.parse(decoded)).toHaveLength(STREAMED_ORDERS);
    // Each batch was pushed out of the compressor when written: one flush per batch (the first
    // rows, then three from the cursor), not one compressed block at the end.
    expect(flushMarkers(gzipped.wire)).toBeGreaterThanOrEqual(Math.floor(STREAMED_ORDERS / 1000));
  });

  describe('with COMPRESSION=off (a proxy in front compresses)', () => {
    let off: TestApp;
    beforeAll(async () => {
      off = await createTestApp({ env: { COMPRESSION: 'off' } });
    });
    afterAll(() => off.close());

    it('answers identity even to a client that accepts gzip', async () => {
      await seedOrders(off, 100);
      const offUrl = await listen(off);
      const res = await rawGet(`${offUrl}/v1/store/orders`, {
        Authorization: `Bearer ${off.key}`,
        'Accept-Encoding': 'gzip, br',
      });
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(JSON.parse(res.wire.toString('utf8'))).toHaveLength(100);
    });
  });
});
