import { type IncomingMessage, OutgoingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExpressAdapter } from '@nestjs/platform-express';
import pino from 'pino';
import { DataSource } from 'typeorm';
import { ClientProgress } from '../src/common/http/client-progress';
import { flushLogs, loggerOptions, ROOT_LOGGER } from '../src/logging/logging.module';
import {
  ApiExpressAdapter,
  EXPRESS_REQUEST_PROPERTIES,
  REQUEST_PROPERTIES,
  RESPONSE_PROPERTIES,
} from '../src/platform/http-server';
import { pgPoolOf } from '../src/platform/pg-pool';
import { descriptorOf } from '../src/platform/socket-descriptor';
import type { RequestLogEntry } from '../src/platform/request-log';
import { httpRequest } from './support/http';
import { insertOrders } from './support/orders';
import { rawExchange } from './support/raw-http';
import { createTestApp, listen, type TestApp } from './support/test-app';

/**
 * The canaries of src/platform/: each internal the service relies on, looked at in the
 * application as main.ts assembles it, served on a real port with its real database. One of these
 * failing after an upgrade means the internal moved: docs/upgrading.md says what to do.
 */
describe('the internals src/platform/ relies on, in the assembled application', () => {
  let t: TestApp;
  let url: string;

  beforeAll(async () => {
    t = await createTestApp({
      env: { HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '2000' },
    });
    url = await listen(t);
  }, 60_000);
  afterAll(() => t.close());

  describe('http-server.ts: requests and responses born with their shape', () => {
    /** The own properties of a request and its response when Node made them, and once served. */
    async function shapes(
      path: string,
      method: string,
    ): Promise<{
      born: string[][];
      served: string[][];
      bornPrototypes: object[];
      prototypes: object[];
      status: number;
    }> {
      const seen: {
        born?: string[][];
        served?: string[][];
        bornPrototypes?: object[];
        prototypes?: object[];
      } = {};
      const spy = (req: IncomingMessage, res: ServerResponse): void => {
        seen.born = [Object.keys(req), Object.keys(res)];
        seen.bornPrototypes = [
          Object.getPrototypeOf(req) as object,
          Object.getPrototypeOf(res) as object,
        ];
        res.once('close', () => {
          seen.served = [Object.keys(req), Object.keys(res)];
          seen.prototypes = [
            Object.getPrototypeOf(req) as object,
            Object.getPrototypeOf(res) as object,
          ];
        });
      };
      // Before Express's listener: as Node made them.
      t.http.prependListener('request', spy);
      try {
        const answer = await httpRequest(`${url}${path}`, {
          method,
          headers: { Authorization: `Bearer ${t.key}` },
        });
        await new Promise((resolve) => setImmediate(resolve));
        if (!seen.born || !seen.served || !seen.bornPrototypes || !seen.prototypes) {
          throw new Error('no request seen');
        }
        return {
          born: seen.born,
          bornPrototypes: seen.bornPrototypes,
          served: seen.served,
          prototypes: seen.prototypes,
          status: answer.status,
        };
      } finally {
        t.http.removeListener('request', spy);
      }
    }

    it.each([
      ['a cancel', 'DELETE', 'cancel'],
      ['a list', 'GET', '/v1/store/orders'],
      ['an unknown path (404)', 'GET', '/v1/nothing-here'],
    ])(
      '%s: no property added on the way (Express, guards, controller)',
      async (_, method, path) => {
        const target =
          path === 'cancel'
            ? `/v1/store/orders/${(await insertOrders(t.db, [{ petId: '1' }]))[0]}`
            : path;
        const { born, served, status } = await shapes(target, method);
        expect(status).toBeLessThan(500);
        expect(born[0]).toEqual(
          expect.arrayContaining([...REQUEST_PROPERTIES, ...EXPRESS_REQUEST_PROPERTIES]),
        );
        expect(born[1]).toEqual(expect.arrayContaining([...RESPONSE_PROPERTIES]));
        // The same keys in the same order: each object kept the hidden class it was born with.
        expect(served[0]).toEqual(born[0]);
        expect(served[1]).toEqual(born[1]);
      },
    );

    it("makes them with the Express application's prototypes, which Express keeps", async () => {
      const { bornPrototypes, prototypes } = await shapes('/health/live', 'GET');
      const express = t.app.getHttpAdapter().getInstance();
      // From birth: Express's own `Object.setPrototypeOf` then changes nothing.
      expect(bornPrototypes[0]).toBe(express.request);
      expect(bornPrototypes[1]).toBe(express.response);
      expect(prototypes[0]).toBe(express.request);
      expect(prototypes[1]).toBe(express.response);
    });
  });

  describe("response-header.ts: the service's headers stored where Node keeps them", () => {
    it('sends what the setters stored, with their names as given, none through setHeader', async () => {
      const [id] = await insertOrders(t.db, [{ petId: '1' }]);
      const setHeader = jest.spyOn(OutgoingMessage.prototype, 'setHeader');
      let answer: Awaited<ReturnType<typeof rawExchange>>;
      let viaSetHeader: string[];
      try {
        answer = await rawExchange(
          url,
          `DELETE /v1/store/orders/${id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.key}\r\n` +
            'X-Request-Id: canary-headers\r\nConnection: close\r\n\r\n',
        );
        viaSetHeader = setHeader.mock.calls.map(([name]) => name.toLowerCase());
      } finally {
        setHeader.mockRestore();
      }
      expect(answer.status).toBe(204);
      // Each on the wire as the setter stored it, name case included.
      for (const header of [
        'X-Request-Id: canary-headers',
        'X-RateLimit-Limit: ',
        'X-RateLimit-Remaining: ',
        'X-RateLimit-Reset: ',
        'X-Content-Type-Options: nosniff',
      ]) {
        expect(answer.text).toContain(`\r\n${header}`);
      }
      // None of them went through Node's own setter: the store is the one Node writes the head from.
      expect(viaSetHeader).not.toContain('x-request-id');
      expect(viaSetHeader).not.toContain('x-ratelimit-remaining');
    });
  });

  describe('pg-pool.ts: the pool under the DataSource', () => {
    it('is the very pool TypeORM queries through', async () => {
      const dataSource = t.app.get(DataSource);
      const pool = pgPoolOf(dataSource);
      // Seen by the pool's own events, not by counts: other work of the app may hold a connection.
      const acquired = new Set<unknown>();
      const released = new Set<unknown>();
      const onAcquire = (client: unknown): void => void acquired.add(client);
      const onRelease = (_err: unknown, client: unknown): void => void released.add(client);
      pool.on('acquire', onAcquire);
      pool.on('release', onRelease);
      // A connection TypeORM takes is taken from this pool, and given back to it.
      const runner = dataSource.createQueryRunner();
      await runner.connect();
      const connection = (runner as unknown as { databaseConnection: unknown }).databaseConnection;
      try {
        expect(acquired.has(connection)).toBe(true);
        const [{ pid }] = (await runner.query('SELECT pg_backend_pid() AS pid')) as {
          pid: number;
        }[];
        expect(pid).toEqual(expect.any(Number));
      } finally {
        await runner.release();
        pool.off('acquire', onAcquire);
        pool.off('release', onRelease);
      }
      expect(released.has(connection)).toBe(true);
      // And what the hot paths query through it reaches the app's database.
      const { rows } = await pool.query('SELECT current_database() AS db');
      expect(t.databaseUrl.endsWith(`/${(rows[0] as { db: string }).db}`)).toBe(true);
    });
  });

  describe("socket-descriptor.ts: a client socket's descriptor, on its handle", () => {
    it('names the connection in /proc/self/fd, and the stall rule finds it in the TCP table', async () => {
      const accepted = once(t.http, 'connection') as Promise<[Socket]>;
      const client = connect(Number(new URL(url).port), '127.0.0.1');
      try {
        const [socket] = await accepted;
        const fd = descriptorOf(socket);
        expect(fd).toEqual(expect.any(Number));
        expect(readlinkSync(`/proc/self/fd/${fd}`)).toMatch(/^socket:\[\d+\]$/);
        // What the client has taken, with the kernel's count of what it has not acknowledged.
        expect(await new ClientProgress().marks([socket])).toEqual(['0/0']);
      } finally {
        client.destroy();
      }
    });
  });

  describe("client-errors.ts: a timed-out body answered through Node's response in flight", () => {
    it('answers 408 on the request’s own response (its id, its headers), not a fresh one', async () => {
      const answer = await rawExchange(
        url,
        'DELETE /v1/store/orders/1 HTTP/1.1\r\nHost: x\r\nX-Request-Id: canary-408\r\n' +
          'Content-Length: 100\r\n\r\nonly a few bytes',
        { deadlineMs: 15_000 },
      );
      expect(answer.status).toBe(408);
      expect(JSON.parse(answer.body)).toEqual({
        code: 'REQUEST_TIMEOUT',
        message: expect.any(String),
        status: 408,
      });
      expect(answer.headers.connection).toBe('close');
      // The id the request observer gave the request: the answer went through its response
      // (`socket._httpMessage`), not through the socket with a new id.
      expect(answer.headers['x-request-id']).toBe('canary-408');
    });

    it('answers a malformed request 400 on the socket (no request in flight)', async () => {
      const answer = await rawExchange(url, 'GARBAGE\r\n\r\n');
      expect(answer.status).toBe(400);
      expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });
  });
});

describe('batched-destination.ts: the request log through sonic-boom, in the assembled application', () => {
  let dir: string;
  let fd: number;
  let t: TestApp | undefined;
  const writes: unknown[] = [];
  let writer: Record<string, unknown> | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'platform-log-'));
    fd = openSync(join(dir, 'log'), 'w');
    // The app's own destination, on a file instead of stdout; each write sonic-boom is handed
    // is recorded.
    const destination = pino.destination.bind(pino);
    jest.spyOn(pino, 'destination').mockImplementation((options) => {
      const made = destination({ ...(options as object), dest: fd });
      writer = made as unknown as Record<string, unknown>;
      const write = made.write.bind(made);
      made.write = (data: string) => {
        writes.push(data);
        return write(data);
      };
      return made;
    });
    t = await createTestApp({ env: { LOG_LEVEL: 'info' } });
  }, 60_000);

  afterAll(async () => {
    jest.restoreAllMocks();
    await t?.close();
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });

  it('hands sonic-boom batches of lines, as buffers, and every line arrives', async () => {
    if (!t) throw new Error('no app');
    expect(writer).toBeDefined();
    for (const method of ['write', 'flush', 'flushSync', 'end']) {
      expect(typeof writer?.[method]).toBe('function');
    }
    const url = await listen(t);
    const REQUESTS = 50;
    const ids = Array.from({ length: REQUESTS }, (_, i) => `canary-log-${i}`);
    await Promise.all(
      ids.map((id) => httpRequest(`${url}/health/live`, { headers: { 'X-Request-Id': id } })),
    );
    const before = writes.length;
    await flushLogs(t.app.get(ROOT_LOGGER));
    const lines = readFileSync(join(dir, 'log'), 'utf8').split('\n').filter(Boolean);
    for (const id of ids) {
      expect(lines.filter((line) => line.includes(`"id":"${id}"`))).toHaveLength(1);
    }
    // Batched: fewer writes than lines, each a buffer (`contentMode: 'buffer'`).
    expect(writes.length).toBeGreaterThan(0);
    expect(before).toBeLessThan(REQUESTS);
    expect(writes.length).toBeLessThan(lines.length);
    for (const data of writes) expect(Buffer.isBuffer(data)).toBe(true);
  });

  it("request-log.ts: writes each request's line byte for byte as the app's pino logger would", async () => {
    if (!t) throw new Error('no app');
    const url = `http://127.0.0.1:${String((t.http.address() as AddressInfo).port)}`;
    await httpRequest(`${url}/v1/store/orders`, {
      headers: { Authorization: `Bearer ${t.key}`, 'X-Request-Id': 'canary-line' },
    });
    await flushLogs(t.app.get(ROOT_LOGGER));
    const line = readFileSync(join(dir, 'log'), 'utf8')
      .split('\n')
      .find((l) => l.includes('"id":"canary-line"'));
    if (line === undefined) throw new Error('no request line');
    const written = JSON.parse(line) as {
      time: number;
      req: RequestLogEntry['req'];
      res: RequestLogEntry['res'];
      responseTime: number;
      route: string;
      keyId?: string;
      msg: string;
    };
    expect(written.keyId).toEqual(expect.any(String));
    // The same entry, in the observer's order, given to pino with the application's options.
    const entry: RequestLogEntry = {
      req: {
        id: written.req.id,
        method: written.req.method,
        url: written.req.url,
        remoteAddress: written.req.remoteAddress,
      },
      res: { statusCode: written.res.statusCode },
      responseTime: written.responseTime,
      route: written.route,
      keyId: written.keyId,
    };
    const viaPino: string[] = [];
    jest.spyOn(Date, 'now').mockReturnValue(written.time);
    pino(loggerOptions('info'), { write: (l: string) => void viaPino.push(l) }).info(
      entry,
      written.msg,
    );
    jest.mocked(Date.now).mockRestore();
    expect(viaPino).toEqual([`${line}\n`]);
  });
});

describe('a missing internal at start', () => {
  afterEach(() => jest.restoreAllMocks());

  it('fails the start when Nest does not make its server through ApiExpressAdapter', async () => {
    // As a Nest that no longer calls the adapter's hook would: its own server, stock requests.
    jest.spyOn(ApiExpressAdapter.prototype, 'initHttpServer').mockImplementation(function (
      this: ApiExpressAdapter,
      options,
    ) {
      ExpressAdapter.prototype.initHttpServer.call(this, options);
    });
    const started: TestApp | Error = await createTestApp().catch(
      (error: unknown) => error as Error,
    );
    if (!(started instanceof Error)) await started.close();
    expect(started).toBeInstanceOf(Error);
    expect((started as Error).message).toMatch(/did not call ApiExpressAdapter.initHttpServer/);
  }, 60_000);
});
