/**
 * Webhooks across instances: the log of an instance in a process of its own, deliveries shared
 * by two instances, and an attempt cut off by a killed one made again by another.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { MetricsService } from '../src/metrics/metrics.service';
import { eventually } from './support/eventually';
import { verified, WebhookReceiver } from './support/webhook-receiver';
import {
  addEndpoint,
  cancel,
  cancelNew,
  LOOPBACK_ENV,
  received,
  settled,
  deliveryRecordsOf,
  startWebhookSuite as startSuite,
  type WebhookSuite as Suite,
} from './support/webhook-suite';

/** The attempts an instance (in this process) counted as delivered. */
async function deliveredBy(s: Suite): Promise<number> {
  const metrics = await s.t.app.get(MetricsService).registry.metrics();
  return Number(/^webhook_deliveries_total\{result="delivered"\} (\d+)/m.exec(metrics)?.[1] ?? 0);
}

/** `count` new pending orders, in one statement; their ids. */
async function insertManyOrders(s: Suite, count: number): Promise<string[]> {
  const { rows } = await s.t.db.query<{ id: string }>(
    `INSERT INTO orders (pet_id, quantity, complete, status)
     SELECT 1, 1, false, 'pending' FROM generate_series(1, $1) RETURNING id`,
    [count],
  );
  return rows.map((row) => row.id);
}

type StatusCount = { status: string; n: number };

/** An endpoint's deliveries counted by status. */
async function statusCounts(s: Suite, endpointId: string): Promise<StatusCount[]> {
  const { rows } = await s.t.db.query<StatusCount>(
    `SELECT status, count(*)::int AS n FROM webhook_deliveries
     WHERE endpoint_id = $1 GROUP BY status ORDER BY status`,
    [endpointId],
  );
  return rows;
}

const sameAs =
  (expected: StatusCount[]) =>
  (counts: StatusCount[]): boolean =>
    JSON.stringify(counts) === JSON.stringify(expected);

/** Another instance on the same database, in a process of its own. */
async function spawnInstance(
  databaseUrl: string,
  env: Record<string, string>,
): Promise<{ kill(): Promise<void>; lines: string[] }> {
  const child = spawn(
    process.execPath,
    ['--require', '@swc-node/register', 'test/support/webhook-instance.ts'],
    {
      cwd: `${__dirname}/..`,
      env: {
        PATH: process.env.PATH ?? '',
        TEST_DATABASE_URL: databaseUrl,
        LOG_LEVEL: 'silent',
        ...LOOPBACK_ENV,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const reader = createInterface({ input: child.stdout });
    reader.on('line', (line) => {
      lines.push(line);
      if (line === 'ready') resolve();
    });
    void exited.then(() => reject(new Error('the instance exited before it was ready')));
  });
  return {
    lines,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

describe('webhooks: instances', () => {
  it('logs one line per attempt, says once that secrets are unencrypted, never logs a secret', async () => {
    const quiet = await startSuite({ WEBHOOK_DELIVERY: 'off' });
    const receiver = await new WebhookReceiver().start();
    try {
      const endpoint = await addEndpoint(quiet, receiver.url);
      const instance = await spawnInstance(quiet.t.databaseUrl, {
        LOG_LEVEL: 'info',
        WEBHOOK_RETRY_SECONDS: '1',
      });
      try {
        receiver.answer = (_r, index) => (index === 0 ? { status: 500 } : { status: 200 });
        const webhookId = await cancelNew(quiet);
        const messages = await received(receiver, webhookId, 2, 10_000);
        await settled(quiet, endpoint.id, webhookId);
        await eventually(
          () => Promise.resolve(instance.lines.filter((l) => l.includes('webhook attempt'))),
          (found) => found.length === 2,
          5000,
        );
        const attempts = instance.lines
          .filter((l) => l.includes('webhook attempt'))
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        expect(attempts).toEqual([
          expect.objectContaining({
            endpointId: endpoint.id,
            eventId: webhookId,
            status: 500,
            result: 'retried',
            durationMs: expect.any(Number),
          }),
          expect.objectContaining({
            endpointId: endpoint.id,
            eventId: webhookId,
            status: 200,
            result: 'delivered',
            durationMs: expect.any(Number),
          }),
        ]);
        const warnings = instance.lines.filter((l) => l.includes('WEBHOOK_SECRETS_KEY is not set'));
        expect(warnings).toHaveLength(1);
        expect(JSON.parse(warnings[0])).toMatchObject({ level: 40 });
        const log = instance.lines.join('\n');
        expect(log).not.toContain(endpoint.secret.slice(6));
        for (const m of messages) {
          for (const signature of String(m.headers['webhook-signature']).split(' ')) {
            expect(log).not.toContain(signature.slice(3));
          }
        }
      } finally {
        await instance.kill();
      }
    } finally {
      await quiet.close();
      await receiver.stop();
    }
  }, 60_000);

  it('with WEBHOOK_DELIVERY=off queues only; two instances deliver 2,000 events, each once', async () => {
    // The default timeout: a healthy receiver answers well within it, even on a loaded machine
    // (an attempt timed out is made again, and its message may arrive twice).
    const quiet = await startSuite({ WEBHOOK_DELIVERY: 'off', WEBHOOK_TIMEOUT_MS: '10000' });
    const receiver = await new WebhookReceiver().start();
    const others: Suite[] = [];
    const events = 2_000;
    try {
      const endpoint = await addEndpoint(quiet, receiver.url);
      const ids = await insertManyOrders(quiet, events);
      await Promise.all(ids.slice(0, 20).map((id) => cancel(quiet, id)));
      // Nothing leaves before a delivering instance is there: every message arrives after.
      const deliveringFrom = Date.now();
      // Two delivering instances on the same database.
      for (let i = 0; i < 2; i++) {
        others.push(
          await startSuite(
            { WEBHOOK_DELIVERY: 'on', WEBHOOK_TIMEOUT_MS: '10000' },
            quiet.t.databaseUrl,
          ),
        );
      }
      for (let i = 20; i < events; i += 100) {
        await Promise.all(ids.slice(i, i + 100).map((id) => cancel(quiet, id)));
      }
      // Every outcome recorded: no attempt is still to answer, none will be made again.
      await eventually(
        () => statusCounts(quiet, endpoint.id),
        sameAs([{ status: 'delivered', n: events }]),
        90_000,
      );
      const perEvent = new Map<string, number>();
      for (const r of receiver.received) {
        const id = String(r.headers['webhook-id']);
        perEvent.set(id, (perEvent.get(id) ?? 0) + 1);
      }
      expect(perEvent.size).toBe(events);
      // A message that arrived twice is shown with its delivery's record (attempts, last error).
      const twice = [...perEvent].filter(([, n]) => n !== 1).map(([id]) => id);
      expect(await deliveryRecordsOf(quiet.t, twice)).toEqual([]);
      expect(receiver.received).toHaveLength(events);
      expect(receiver.received.filter((r) => r.at < deliveringFrom)).toEqual([]);
      // Both instances took their share.
      const shares = await Promise.all(others.map((other) => deliveredBy(other)));
      expect(shares.reduce((a, b) => a + b, 0)).toBe(events);
      for (const share of shares) expect(share).toBeGreaterThan(events / 10);
    } finally {
      for (const other of others) await other.close();
      await quiet.close();
      await receiver.stop();
    }
  }, 180_000);

  it('makes an attempt cut off by a killed instance again, on another instance', async () => {
    const quiet = await startSuite({ WEBHOOK_DELIVERY: 'off' });
    const receiver = await new WebhookReceiver().start();
    let other: Suite | undefined;
    try {
      const endpoint = await addEndpoint(quiet, receiver.url);
      const instance = await spawnInstance(quiet.t.databaseUrl, { WEBHOOK_TIMEOUT_MS: '2000' });
      let killed: Promise<void> | undefined;
      receiver.answer = (_r, index) => {
        if (index === 0) {
          killed = instance.kill();
          return 'hang';
        }
        return { status: 200 };
      };
      const webhookId = await cancelNew(quiet);
      await received(receiver, webhookId, 1, 10_000);
      await killed;
      const cutAt = Date.now();
      other = await startSuite(
        { WEBHOOK_DELIVERY: 'on', WEBHOOK_TIMEOUT_MS: '2000' },
        quiet.t.databaseUrl,
      );
      const messages = await received(receiver, webhookId, 2, 60_000);
      // Within a minute after the attempt's timeout.
      expect(messages[1].at - cutAt).toBeLessThan(60_000);
      verified(endpoint.secret, messages[1]);
      const delivery = await settled(quiet, endpoint.id, webhookId);
      expect(delivery).toMatchObject({ status: 'delivered', attempts: 2 });
    } finally {
      await other?.close();
      await quiet.close();
      await receiver.stop();
    }
  }, 120_000);
});
