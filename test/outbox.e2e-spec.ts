/**
 * The audit trail as an outbox: committed events relayed to the consumers modules declare, after
 * the commit, none passed over (an event whose transaction commits late included), each once in
 * normal running however many instances relay; a consumer that throws retried apart from the
 * others; and an upgrade from the release whose trigger queued deliveries in the change.
 */
import { Injectable, Module } from '@nestjs/common';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import request from 'supertest';
import { DataSource, type MigrationInterface } from 'typeorm';
import { RECORD_AUDIT_EVENT_SQL } from '../src/audit/audit-events.sql';
import { dataSourceOptions } from '../src/database/data-source-options';
import {
  type ConsumesEvents,
  EventConsumer,
  type RelayedEvent,
} from '../src/events/event-consumer';
import { MetricsService } from '../src/metrics/metrics.service';
import { ENV, withClient } from './setup/clusters';
import { eventually } from './support/eventually';
import { insertOrders } from './support/orders';
import { createTestApp, type TestApp } from './support/test-app';
import { WebhookReceiver } from './support/webhook-receiver';

/** Every run of the recording consumer, by event id, across the instances of this process. */
const runs = new Map<string, RelayedEvent[]>();
/** Runs of the failing consumer, by event id. */
const flakyRuns = new Map<string, number>();

@EventConsumer({ name: 'test-recorder', actions: ['order.cancelled', 'key.created'] })
@Injectable()
class Recorder implements ConsumesEvents {
  consume(event: RelayedEvent): Promise<void> {
    runs.set(event.id, [...(runs.get(event.id) ?? []), event]);
    return Promise.resolve();
  }
}

/** Throws on the first two runs of each event. */
@EventConsumer({
  name: 'test-flaky',
  actions: ['order.cancelled'],
  retryDelaySeconds: 1,
  retryLimit: 3,
})
@Injectable()
class Flaky implements ConsumesEvents {
  consume(event: RelayedEvent): Promise<void> {
    const run = (flakyRuns.get(event.id) ?? 0) + 1;
    flakyRuns.set(event.id, run);
    return run < 3 ? Promise.reject(new Error(`run ${run} fails`)) : Promise.resolve();
  }
}

@Module({ providers: [Recorder, Flaky] })
class ConsumersModule {}

async function recordEvent(db: Client | TestApp['db'], target: string): Promise<string> {
  await db.query(RECORD_AUDIT_EVENT_SQL, ['cli:test', 'order.cancelled', target, null]);
  const { rows } = await db.query<{ id: string }>(
    'SELECT max(id)::text AS id FROM audit_events WHERE target = $1',
    [target],
  );
  return rows[0].id;
}

async function consumed(ids: readonly string[], timeoutMs = 20_000): Promise<void> {
  await eventually(
    () => Promise.resolve(ids.filter((id) => !runs.has(id))),
    (missing) => missing.length === 0,
    timeoutMs,
  );
}

describe('the outbox: audit events relayed to consumers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ imports: [ConsumersModule] });
  });
  afterAll(() => t.close());

  it('runs a consumer after the commit, with the event, and never for a change rolled back', async () => {
    const [orderId] = await insertOrders(t.db, [{ petId: '1' }]);
    await request(t.http)
      .delete(`/v1/store/orders/${orderId}`)
      .set('Authorization', `Bearer ${t.key}`)
      .set('X-Request-Id', 'req-outbox-1')
      .expect(204);
    const { rows } = await t.db.query<{ id: string }>(
      `SELECT id::text AS id FROM audit_events WHERE target = $1`,
      [`order:${orderId}`],
    );
    await consumed([rows[0].id]);
    expect(runs.get(rows[0].id)).toEqual([
      {
        id: rows[0].id,
        at: expect.any(String),
        actor: expect.stringMatching(/^key:/),
        action: 'order.cancelled',
        target: `order:${orderId}`,
        requestId: 'req-outbox-1',
      },
    ]);

    const rolledBack = new Client({ connectionString: t.databaseUrl });
    await rolledBack.connect();
    let lostId: string;
    try {
      await rolledBack.query('BEGIN');
      lostId = await recordEvent(rolledBack, 'order:rolled-back');
      await rolledBack.query('ROLLBACK');
    } finally {
      await rolledBack.end();
    }
    // An event committed after it is relayed: the rolled-back one, older, would have been by then.
    const later = await recordEvent(t.db, 'order:after-the-rollback');
    await consumed([later]);
    expect(runs.has(lostId)).toBe(false);
  });

  it('relays an event whose transaction commits after later ones did', async () => {
    const late = new Client({ connectionString: t.databaseUrl });
    await late.connect();
    try {
      await late.query('BEGIN');
      const lateId = await recordEvent(late, 'order:late');
      // Events with greater ids, committed while the first is still open.
      const earlier: string[] = [];
      for (let i = 0; i < 3; i++) earlier.push(await recordEvent(t.db, `order:on-time-${i}`));
      expect(earlier.every((id) => BigInt(id) > BigInt(lateId))).toBe(true);
      await late.query('COMMIT');
      await consumed([...earlier, lateId]);
      expect(runs.get(lateId)).toHaveLength(1);
    } finally {
      await late.end();
    }
  });

  it('retries a consumer that throws, with backoff, apart from the others, and counts its failures', async () => {
    const id = await recordEvent(t.db, 'order:flaky');
    await consumed([id]);
    expect(runs.get(id)).toHaveLength(1);
    await eventually(
      () => Promise.resolve(flakyRuns.get(id) ?? 0),
      (n) => n === 3,
      20_000,
    );
    const metrics = await t.app.get(MetricsService).registry.metrics();
    const failures = /^event_consumer_failures_total\{consumer="test-flaky"\} (\d+)/m.exec(metrics);
    expect(Number(failures?.[1])).toBeGreaterThanOrEqual(2);
    expect(metrics).toMatch(/^event_consumer_pending_events\{consumer="test-recorder"\} \d+/m);
    expect(metrics).toMatch(
      /^event_consumer_oldest_pending_age_seconds\{consumer="test-recorder"\} [\d.]+/m,
    );
  });
});

describe('the outbox: instances', () => {
  it('two instances relaying at once hand each of 2,000 events to a consumer once', async () => {
    runs.clear();
    const first = await createTestApp({ imports: [ConsumersModule] });
    const second = await createTestApp({
      imports: [ConsumersModule],
      databaseUrl: first.databaseUrl,
    });
    try {
      // 2,000 events in 40 transactions, 8 at a time.
      const batches = Array.from({ length: 40 }, (_, b) => b);
      const written: string[] = [];
      for (let i = 0; i < batches.length; i += 8) {
        await Promise.all(
          batches.slice(i, i + 8).map(async (batch) => {
            const { rows } = await first.db.query<{ id: string }>(
              `INSERT INTO audit_events (actor, action, target)
               SELECT 'cli:test', 'order.cancelled', 'order:many-' || $1 || '-' || n
                 FROM generate_series(1, 50) AS n RETURNING id::text AS id`,
              [batch],
            );
            written.push(...rows.map((row) => row.id));
          }),
        );
      }
      await consumed(written, 60_000);
      const twice = written.filter((id) => runs.get(id)?.length !== 1);
      expect(twice.map((id) => [id, runs.get(id)?.map((e) => e.target)])).toEqual([]);
    } finally {
      await second.close();
      await first.close();
    }
  }, 120_000);
});

/** The migration classes of src/, those up to `last` (a timestamp) only. */
function migrationsUpTo(last: number): (new () => MigrationInterface)[] {
  const src = join(__dirname, '..', 'src');
  const classes: (new () => MigrationInterface)[] = [];
  for (const feature of readdirSync(src)) {
    let files: string[];
    try {
      files = readdirSync(join(src, feature, 'migrations'));
    } catch {
      continue;
    }
    for (const file of files.filter((f) => Number(f.split('-')[0]) <= last)) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const exported = require(join(src, feature, 'migrations', file)) as Record<string, unknown>;
      classes.push(...(Object.values(exported) as (new () => MigrationInterface)[]));
    }
  }
  return classes;
}

async function migrate(url: string, upTo?: number): Promise<void> {
  const options = dataSourceOptions(url, {
    connectTimeoutMs: 5000,
    statementTimeoutMs: 30000,
    poolSize: 1,
  });
  const dataSource = new DataSource(
    upTo === undefined ? options : { ...options, migrations: migrationsUpTo(upTo) },
  );
  await dataSource.initialize();
  try {
    await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await dataSource.destroy();
  }
}

describe('the outbox: upgrade in place', () => {
  it('delivers after the upgrade what the trigger of the release before queued', async () => {
    const templateUrl = process.env[ENV.url] ?? '';
    const name = `upgrade_${Date.now()}`;
    await withClient(templateUrl.replace(/[^/]+$/, 'postgres'), (c) =>
      c.query(`CREATE DATABASE ${name}`),
    );
    const url = templateUrl.replace(/[^/]+$/, name);
    const receiver = await new WebhookReceiver().start();
    try {
      await migrate(url, 1764500000001);
      const eventId = await withClient(url, async (c) => {
        await c.query(
          `INSERT INTO webhook_endpoints (url, events, secret)
           VALUES ($1, '{order.cancelled}', 'plain:whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')`,
          [receiver.url],
        );
        const { rows } = await c.query<{ id: string }>(
          `INSERT INTO audit_events (actor, action, target)
           VALUES ('cli:test', 'order.cancelled', 'order:1') RETURNING id::text AS id`,
        );
        return rows[0].id;
      });
      const queued = await withClient(url, (c) =>
        c.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'`,
        ),
      );
      expect(queued.rows[0].n).toBe(1);
      await migrate(url);
      const t = await createTestApp({
        databaseUrl: url,
        env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
      });
      try {
        await eventually(
          () => Promise.resolve(receiver.of(`evt_${eventId}`)),
          (messages) => messages.length === 1,
          20_000,
        );
        // The attempt's outcome is recorded after the receiver answered, not before.
        const rows = await eventually(
          async () =>
            (
              await t.db.query<{ status: string }>(
                'SELECT status FROM webhook_deliveries WHERE event_id = $1',
                [eventId],
              )
            ).rows,
          (found) => found.some(({ status }) => status !== 'pending'),
          20_000,
        );
        expect(rows).toEqual([{ status: 'delivered' }]);
      } finally {
        await t.close();
      }
    } finally {
      await receiver.stop();
    }
  }, 90_000);
});
