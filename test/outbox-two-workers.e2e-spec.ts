/**
 * Two instances relaying and delivering at once, on one database: 10,000 cancellations, each
 * written by the service's own cancel, reach each of three endpoints once, and each is relayed by
 * one of the instances once. Nothing crashes here, so nothing may arrive twice.
 */
import { OrdersService } from '../src/orders/orders.service';
import { MetricsService } from '../src/metrics/metrics.service';
import { eventually } from './support/eventually';
import { createTestApp, type TestApp } from './support/test-app';
import {
  addEndpoint,
  deliveryRecordsOf,
  LOOPBACK_ENV,
  startWebhookSuite,
  type WebhookSuite,
} from './support/webhook-suite';
import { WebhookReceiver } from './support/webhook-receiver';

const EVENTS = 10_000;
/** Cancels under way at once while the events are written. */
const CANCELS_AT_ONCE = 20;
/**
 * Attempts per instance at once: enough batching for 30,000 of them in the test's time. The
 * default timeout: an attempt timed out on a loaded machine would be made again, and arrive twice.
 */
const ENV = { ...LOOPBACK_ENV, WEBHOOK_CONCURRENCY: '40', WEBHOOK_TIMEOUT_MS: '10000' };

/** A counter's value in an instance's metrics (0 when it has none yet). */
async function counter(t: TestApp, pattern: RegExp): Promise<number> {
  const metrics = await t.app.get(MetricsService).registry.metrics();
  return Number(pattern.exec(metrics)?.[1] ?? 0);
}

/** How many messages of each webhook-id a receiver got. */
function tally(receiver: WebhookReceiver): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { headers } of receiver.received) {
    const id = String(headers['webhook-id']);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

describe('the outbox: two instances relaying and delivering at once', () => {
  let first: WebhookSuite;
  let second: TestApp;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    first = await startWebhookSuite(ENV);
    second = await createTestApp({ env: ENV, databaseUrl: first.t.databaseUrl });
    for (let i = 0; i < 3; i++) receivers.push(await new WebhookReceiver().start());
  }, 60_000);

  afterAll(async () => {
    await second.close();
    await first.close();
    for (const receiver of receivers) await receiver.stop();
  });

  it('delivers each of 10,000 events to each of 3 endpoints once, each relayed once', async () => {
    for (const receiver of receivers) await addEndpoint(first, receiver.url);
    const { rows } = await first.t.db.query<{ id: string }>(
      `INSERT INTO orders (pet_id, quantity, complete, status)
       SELECT 1, 1, false, 'pending' FROM generate_series(1, $1::int)
       RETURNING id::text AS id`,
      [EVENTS],
    );
    // Each cancel through the service's own path: its statement, its audit event.
    const orders = first.t.app.get(OrdersService);
    const ids = rows.map((row) => row.id);
    await Promise.all(
      Array.from({ length: CANCELS_AT_ONCE }, async (_, lane) => {
        for (let i = lane; i < ids.length; i += CANCELS_AT_ONCE) {
          await orders.cancel(ids[i], { actor: 'key:two-instances' });
        }
      }),
    );
    const events = await first.t.db.query<{ id: string }>(
      `SELECT 'evt_' || id AS id FROM audit_events WHERE action = 'order.cancelled'`,
    );
    const expected = events.rows.map((row) => row.id).sort();
    expect(expected).toHaveLength(EVENTS);

    await eventually(
      () => Promise.resolve(receivers.map((receiver) => receiver.received.length)),
      (counts) => counts.every((count) => count >= EVENTS),
      75_000,
    );
    // Once every delivery is recorded delivered, no job is left to make an attempt: whatever
    // reached the receivers has arrived, and a duplicate would be among it.
    await eventually(
      async () =>
        (
          await first.t.db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status <> 'delivered'`,
          )
        ).rows[0].n,
      (pending) => pending === 0,
      30_000,
    );
    for (const receiver of receivers) {
      const counts = tally(receiver);
      expect([...counts.keys()].sort()).toEqual(expected);
      // A message that arrived twice is shown with its delivery's record (attempts, last error).
      const twice = [...counts].filter(([, count]) => count !== 1).map(([id]) => id);
      expect(await deliveryRecordsOf(first.t, twice)).toEqual([]);
    }

    // Every event of the trail (the endpoints' and the keys' too) relayed by one instance, once.
    const all = await first.t.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM audit_events',
    );
    const relayed = /^event_relay_events_total (\d+)/m;
    const byInstance = [await counter(first.t, relayed), await counter(second, relayed)];
    expect(byInstance[0] + byInstance[1]).toBe(all.rows[0].n);
    // Both instances took their share of the attempts, and none was made twice.
    const delivered = /^webhook_deliveries_total\{result="delivered"\} (\d+)/m;
    const attempts = [await counter(first.t, delivered), await counter(second, delivered)];
    expect(attempts.every((n) => n > 0)).toBe(true);
    expect(attempts[0] + attempts[1]).toBe(3 * EVENTS);
  }, 110_000);
});
