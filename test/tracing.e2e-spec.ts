import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Pool } from 'pg';
import { hashApiKey } from '../src/auth/api-key';
import { AppProcess } from './support/app-process';
import { bearerFor } from './support/auth';
import { buildOnce } from './support/build';
import { eventually } from './support/eventually';
import { httpRequest } from './support/http';
import { insertOrders } from './support/orders';
import { OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver';
import { RedisServer } from './support/redis-server';
import { describeWithBinary } from './support/system-binary';
import { createTestDatabase } from './support/test-app';

const ROOT = join(__dirname, '..');
const SERVER = 2;
const hex = (length: number): string =>
  Array.from({ length }, () => Math.floor(Math.random() * 16).toString(16)).join('');

/**
 * Tracing is per process (the SDK patches modules as they load), so these run the built server,
 * as production does, with an OTLP endpoint pointing at a receiver in the test.
 */
describeWithBinary('redis-server', 'redis-server')('OpenTelemetry tracing', () => {
  let receiver: OtlpReceiver;
  let redis: RedisServer;
  let db: Pool;
  let app: AppProcess;
  let url: string;
  let auth: Record<string, string>;
  let key: { id: string; plan: string };
  /** What beforeAll started, stopped in reverse order, however far it got. */
  const stops: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    await buildOnce();
    const databaseUrl = await createTestDatabase();
    receiver = await OtlpReceiver.start();
    stops.push(() => receiver.stop());
    redis = await RedisServer.start();
    stops.push(() => redis.stop());
    db = new Pool({ connectionString: databaseUrl, max: 2 });
    stops.push(() => db.end());
    auth = await bearerFor(databaseUrl);
    const { rows } = await db.query<{ id: string; plan: string }>(
      'SELECT id::text AS id, plan FROM api_keys WHERE key_hash = $1',
      [hashApiKey(auth.Authorization.replace(/^Bearer /, ''))],
    );
    key = rows[0];
    ({ app, url } = await AppProcess.start(['node', 'dist/main.js'], {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'store-orders-e2e',
      // Export every 100 ms instead of every 5 s.
      OTEL_BSP_SCHEDULE_DELAY: '100',
    }));
    stops.push(() => app.stop());
  }, 240_000);

  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
  });

  /** The spans of one trace, once its server span and `minimum` of them in all have arrived. */
  const traceOf = (traceId: string, minimum: number): Promise<ReceivedSpan[]> =>
    eventually(
      () => Promise.resolve(receiver.spans.filter((s) => s.traceId === traceId)),
      (spans) => spans.length >= minimum && spans.some((s) => s.kind === SERVER),
      20_000,
    );

  /** The request's log lines, by the id the client gave it. */
  const logLinesOf = (requestId: string): Record<string, unknown>[] =>
    app.json().filter((l) => (l.req as { id?: string } | undefined)?.id === requestId);

  it('continues the client trace: a list is a server span named by its route, with the key, and pg and Redis children', async () => {
    const traceId = hex(32);
    const parentId = hex(16);
    const res = await httpRequest(`${url}/v1/store/orders`, {
      headers: {
        ...auth,
        traceparent: `00-${traceId}-${parentId}-01`,
        'X-Request-Id': 'trace-list-1',
      },
    });
    expect(res.status).toBe(200);

    const spans = await traceOf(traceId, 3);
    const server = spans.filter((s) => s.kind === SERVER);
    expect(server).toHaveLength(1);
    expect(server[0]).toMatchObject({
      name: 'GET /v1/store/orders',
      parentSpanId: parentId,
      attributes: expect.objectContaining({
        'http.route': '/v1/store/orders',
        'http.response.status_code': 200,
        'api_key.id': key.id,
        'api_key.plan': key.plan,
      }) as unknown,
      resource: expect.objectContaining({ 'service.name': 'store-orders-e2e' }) as unknown,
    });
    const descendants = (id: string): ReceivedSpan[] =>
      spans
        .filter((s) => s.parentSpanId === id)
        .flatMap((child) => [child, ...descendants(child.spanId)]);
    const below = descendants(server[0].spanId);
    const pg = below.filter((s) => s.scope.includes('instrumentation-pg'));
    expect(pg.length).toBeGreaterThanOrEqual(1);
    expect(
      pg.some((s) =>
        /orders/.test(String(s.attributes['db.query.text'] ?? s.attributes['db.statement'])),
      ),
    ).toBe(true);
    expect(below.some((s) => s.scope.includes('instrumentation-ioredis'))).toBe(true);
    // The key is never on any span.
    expect(JSON.stringify(spans)).not.toContain(auth.Authorization.replace(/^Bearer /, ''));

    // Every log line of the request carries the trace and the server span.
    await app.waitFor(/"id":"trace-list-1".*request completed/);
    const lines = logLinesOf('trace-list-1');
    expect(lines.length).toBeGreaterThanOrEqual(1);
    for (const line of lines) {
      expect(line).toMatchObject({ trace_id: traceId, span_id: server[0].spanId });
    }
  });

  it('traces a cancel: DELETE /v1/store/orders/:orderId, its status, and its UPDATE as a pg child', async () => {
    const [id] = await insertOrders(db, [{ id: '987654321', status: 'pending' }]);
    const traceId = hex(32);
    const parentId = hex(16);
    const res = await httpRequest(`${url}/v1/store/orders/${id}`, {
      method: 'DELETE',
      headers: {
        ...auth,
        traceparent: `00-${traceId}-${parentId}-01`,
        'X-Request-Id': 'trace-cancel-1',
      },
    });
    expect(res.status).toBe(204);

    const spans = await traceOf(traceId, 2);
    const server = spans.find((s) => s.kind === SERVER);
    expect(server).toMatchObject({
      name: 'DELETE /v1/store/orders/:orderId',
      parentSpanId: parentId,
      attributes: expect.objectContaining({
        'http.response.status_code': 204,
        'api_key.id': key.id,
        'api_key.plan': key.plan,
      }) as unknown,
    });
    // The order id is in the URL, not in the span's name.
    expect(server?.name).not.toContain(id);
    const update = spans.find(
      (s) =>
        s.scope.includes('instrumentation-pg') &&
        /UPDATE/i.test(
          String(s.attributes['db.query.text'] ?? s.attributes['db.statement'] ?? s.name),
        ),
    );
    expect(update).toBeDefined();
    await app.waitFor(/"id":"trace-cancel-1".*request completed/);
    expect(logLinesOf('trace-cancel-1')[0]).toMatchObject({
      trace_id: traceId,
      span_id: server?.spanId,
    });
  });

  it('starts a new trace for a request without traceparent, and sends nothing but traces', async () => {
    const res = await httpRequest(`${url}/v1/store/orders`, {
      headers: { ...auth, 'X-Request-Id': 'trace-root-1' },
    });
    expect(res.status).toBe(200);
    await app.waitFor(/"id":"trace-root-1".*request completed/);
    const [line] = logLinesOf('trace-root-1');
    const traceId = String(line.trace_id);
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const spans = await traceOf(traceId, 1);
    expect(spans.find((s) => s.kind === SERVER)?.parentSpanId).toBeUndefined();
    expect(receiver.unexpected).toEqual([]);
  });

  it('does not trace health probes', async () => {
    const before = receiver.spans.length;
    expect((await httpRequest(`${url}/health/ready`)).status).toBe(200);
    // A list after the probe: once its span is in, the probe's would have been too.
    const traceId = hex(32);
    await httpRequest(`${url}/v1/store/orders`, {
      headers: { ...auth, traceparent: `00-${traceId}-${hex(16)}-01` },
    });
    await traceOf(traceId, 1);
    expect(
      receiver.spans
        .slice(before)
        .some((s) => s.attributes['url.path']?.toString().startsWith('/health')),
    ).toBe(false);
  });
});

describe('tracing off (no OTLP endpoint)', () => {
  beforeAll(() => buildOnce(), 240_000);

  it('does not load OpenTelemetry at all', async () => {
    const probe =
      "require('./dist/tracing/tracing');" +
      "console.log(JSON.stringify(Object.keys(require.cache).filter((m) => m.includes('@opentelemetry'))))";
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', probe], {
      cwd: ROOT,
      env: { PATH: process.env.PATH },
    });
    expect(JSON.parse(stdout)).toEqual([]);
  });

  it('loads and starts it with an endpoint set', async () => {
    const probe =
      "require('./dist/tracing/tracing');" +
      "console.log(JSON.stringify(Object.keys(require.cache).some((m) => m.includes('@opentelemetry/sdk-node'))));" +
      'process.exit(0)';
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', probe], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' },
    });
    expect(JSON.parse(stdout)).toBe(true);
  });
});
