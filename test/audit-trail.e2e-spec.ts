/**
 * The audit trail: every key change by the keys tool and every cancellation
 * that changed an order writes one event in the same transaction as the change, none for a change
 * that changes nothing; `npm run keys -- audit` pages them newest first; and the table is
 * append-only, whoever connects.
 */
import { userInfo } from 'node:os';
import request from 'supertest';
import { KeysService } from '../src/auth/keys.service';
import { api } from './support/client';
import { CliResult, runKeysTool } from './support/keys-tool';
import { insertOrders, statusOf } from './support/orders';
import { testAppPerSuite } from './support/suite-app';

interface EventRow {
  id: string;
  at: Date;
  actor: string;
  action: string;
  target: string;
  request_id: string | null;
}

interface EventJson {
  id: string;
  at: string;
  actor: string;
  action: string;
  target: string;
  requestId?: string;
}

interface PageJson {
  data: EventJson[];
  hasMore: boolean;
  nextCursor?: string;
}

describe('audit trail', () => {
  const app = testAppPerSuite();
  const keys = (...args: string[]): Promise<CliResult> => runKeysTool(app.t.databaseUrl, args);
  const cli = `cli:${userInfo().username}`;

  /** The events about `target`, oldest first. */
  const eventsOf = async (target: string): Promise<EventRow[]> =>
    (
      await app.t.db.query<EventRow>(
        'SELECT id, at, actor, action, target, request_id FROM audit_events WHERE target = $1 ORDER BY id',
        [target],
      )
    ).rows;

  /** Adds a check that refuses events of `action`, for the length of `run`. */
  async function refusingEvents<T>(action: string, run: () => Promise<T>): Promise<T> {
    await app.t.db.query(
      `ALTER TABLE audit_events ADD CONSTRAINT "CHK_test_refuse" CHECK (action <> '${action}') NOT VALID`,
    );
    try {
      return await run();
    } finally {
      await app.t.db.query('ALTER TABLE audit_events DROP CONSTRAINT "CHK_test_refuse"');
    }
  }

  describe('key changes by the keys tool', () => {
    it('writes one event per create, rotate, unban and revoke, in order, and none for a change that changes nothing', async () => {
      const created = await keys('create', '--plan', 'pro', '--name', 'audited', '--json');
      expect(created.code).toBe(0);
      const { id } = JSON.parse(created.stdout) as { id: string };
      const target = `key:${id}`;
      const event = (action: string): EventRow => ({
        id: expect.any(String) as string,
        at: expect.any(Date) as Date,
        actor: cli,
        action,
        target,
        request_id: null,
      });
      expect(await eventsOf(target)).toEqual([event('key.created')]);

      expect((await keys('rotate', id, '--grace', '1h', '--json')).code).toBe(0);
      expect(await eventsOf(target)).toEqual([event('key.created'), event('key.rotated')]);

      // Not banned: nothing to lift, nothing recorded.
      const idle = await keys('unban', id);
      expect(idle).toMatchObject({
        code: 0,
        stdout: `Key ${id} was not banned; nothing changed\n`,
      });
      expect(await eventsOf(target)).toHaveLength(2);

      await app.t.db.query(
        `UPDATE api_keys SET banned_until = now() + interval '1 hour' WHERE id = $1 OR family_id = $1`,
        [id],
      );
      expect((await keys('unban', id.slice(0, 8))).stdout).toContain(`Unbanned key ${id}`);
      expect(await eventsOf(target)).toEqual([
        event('key.created'),
        event('key.rotated'),
        event('key.unbanned'),
      ]);

      expect((await keys('revoke', id)).stdout).toContain(`Revoked key ${id}`);
      expect((await keys('revoke', id)).stdout).toContain('nothing changed');
      const events = await eventsOf(target);
      expect(events).toEqual([
        event('key.created'),
        event('key.rotated'),
        event('key.unbanned'),
        event('key.revoked'),
      ]);
      const times = events.map((e) => e.at.getTime());
      expect(times).toEqual([...times].sort((a, b) => a - b));
    });

    it('keeps no change whose event could not be written: the two are one transaction', async () => {
      const { id } = await app.t.keys.issue({ plan: 'free' });
      const result = await refusingEvents('key.revoked', () => keys('revoke', id));
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('CHK_test_refuse');
      const { rows } = await app.t.db.query('SELECT revoked_at FROM api_keys WHERE id = $1', [id]);
      expect(rows).toEqual([{ revoked_at: null }]);
      expect(await eventsOf(`key:${id}`)).toEqual([]);

      // The same for a key issued through the service the admin API will call.
      const service = app.t.app.get(KeysService);
      await expect(
        refusingEvents('key.created', () =>
          service.create({ plan: 'free', name: 'never issued' }, { actor: 'cli:test' }),
        ),
      ).rejects.toThrow(/CHK_test_refuse/);
      const issued = await app.t.db.query("SELECT 1 FROM api_keys WHERE name = 'never issued'");
      expect(issued.rowCount).toBe(0);
    });
  });

  describe('cancellations over HTTP', () => {
    let keyId: string;
    let key: string;

    beforeAll(async () => {
      ({ id: keyId, key } = await app.t.keys.issue({
        plan: 'enterprise',
        limits: { perMinute: 1_000_000, perDay: 1_000_000_000 },
      }));
    });

    it.each(['v1', 'v2'])(
      '%s: a cancel that changed the order writes one event with the key and the X-Request-Id sent; cancelling again writes none',
      async (version) => {
        const [id] = await insertOrders(app.t.db, [{ status: 'pending' }]);
        const requestId = `audit-${version}-${id}`;
        await api(app.t, key)
          .delete(`/${version}/store/orders/${id}`)
          .set('X-Request-Id', requestId)
          .expect(204);
        const once = [
          {
            id: expect.any(String) as string,
            at: expect.any(Date) as Date,
            actor: `key:${keyId}`,
            action: 'order.cancelled',
            target: `order:${id}`,
            request_id: requestId,
          },
        ];
        expect(await eventsOf(`order:${id}`)).toEqual(once);

        await api(app.t, key)
          .delete(`/${version}/store/orders/${id}`)
          .set('X-Request-Id', `${requestId}-again`)
          .expect(204);
        expect(await eventsOf(`order:${id}`)).toEqual(once);
      },
    );

    it("records the id the service gave a request that sent none, as its response's X-Request-Id says", async () => {
      const [id] = await insertOrders(app.t.db, [{ status: 'pending' }]);
      const res = await api(app.t, key).delete(`/v1/store/orders/${id}`).expect(204);
      const given = res.headers['x-request-id'];
      expect(given).toMatch(/^[0-9a-f-]{36}$/);
      expect((await eventsOf(`order:${id}`)).map((e) => e.request_id)).toEqual([given]);
    });

    it('writes none for a shipped order (409) nor for an order that does not exist (404)', async () => {
      const [shipped] = await insertOrders(app.t.db, [{ status: 'shipped' }]);
      await api(app.t, key).delete(`/v1/store/orders/${shipped}`).expect(409);
      await api(app.t, key).delete('/v2/store/orders/987654321').expect(404);
      expect(await eventsOf(`order:${shipped}`)).toEqual([]);
      expect(await eventsOf('order:987654321')).toEqual([]);
    });

    it('writes exactly one event when 30 cancels of the same order race', async () => {
      const [id] = await insertOrders(app.t.db, [{ status: 'pending' }]);
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          api(app.t, key)
            .delete(`/v${(i % 2) + 1}/store/orders/${id}`)
            .set('X-Request-Id', `race-${i}`),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(30).fill(204));
      expect(await eventsOf(`order:${id}`)).toHaveLength(1);
    });

    it('keeps the order pending when its event could not be written: one statement, one transaction', async () => {
      const [id] = await insertOrders(app.t.db, [{ status: 'pending' }]);
      const res = await refusingEvents('order.cancelled', () =>
        request(app.t.http).delete(`/v1/store/orders/${id}`).set('Authorization', `Bearer ${key}`),
      );
      expect(res.status).toBe(500);
      expect(await statusOf(app.t.db, id)).toBe('pending');
      expect(await eventsOf(`order:${id}`)).toEqual([]);
    });
  });

  describe('npm run keys -- audit', () => {
    const actor = 'key:00000000-0000-4000-8000-00000000a0d1';

    beforeAll(async () => {
      // Five cancellations by one key (the last two without a request id), then a key created.
      for (let n = 1; n <= 5; n++) {
        await app.t.db.query(
          `INSERT INTO audit_events (actor, action, target, request_id) VALUES ($1, 'order.cancelled', $2, $3)`,
          [actor, `order:${n}`, n <= 3 ? `req-${n}` : null],
        );
      }
      await app.t.db.query(
        `INSERT INTO audit_events (actor, action, target) VALUES ($1, 'key.created', 'key:k-audit')`,
        [actor],
      );
    });

    const page = async (...args: string[]): Promise<PageJson> => {
      const result = await keys('audit', ...args, '--json');
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout.trim().split('\n')).toHaveLength(1);
      return JSON.parse(result.stdout) as PageJson;
    };

    it('walks the events newest first, a page of --limit at a time, with the cursor it prints (--json)', async () => {
      const pageOfCancels = (...more: string[]): Promise<PageJson> =>
        page('--actor', actor, '--action', 'order.cancelled', '--limit', '2', ...more);
      const first = await pageOfCancels();
      expect(first).toEqual({
        data: [
          {
            id: expect.any(String),
            at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
            actor,
            action: 'order.cancelled',
            target: 'order:5',
          },
          expect.objectContaining({ target: 'order:4' }),
        ],
        hasMore: true,
        nextCursor: expect.stringMatching(/^[A-Za-z0-9_-]+$/),
      });
      expect(first.data[1]).not.toHaveProperty('requestId');
      const second = await pageOfCancels('--cursor', first.nextCursor ?? '');
      expect(second.data.map((e) => [e.target, e.requestId])).toEqual([
        ['order:3', 'req-3'],
        ['order:2', 'req-2'],
      ]);
      const last = await pageOfCancels('--cursor', second.nextCursor ?? '');
      expect(last).toEqual({
        data: [expect.objectContaining({ target: 'order:1' })],
        hasMore: false,
      });
      const ids = [...first.data, ...second.data, ...last.data].map((e) => BigInt(e.id));
      expect(ids).toEqual([...ids].sort((a, b) => (a > b ? -1 : 1)));
    });

    it('filters by action, actor and target, and shows the newest 50 by default', async () => {
      expect((await page('--actor', actor, '--action', 'key.created')).data).toEqual([
        expect.objectContaining({ action: 'key.created', target: 'key:k-audit', actor }),
      ]);
      expect((await page('--target', 'order:3', '--actor', actor)).data).toEqual([
        expect.objectContaining({ target: 'order:3', requestId: 'req-3' }),
      ]);
      expect((await page('--actor', 'cli:nobody-at-all')).data).toEqual([]);
      const all = await page('--actor', actor);
      expect(all.data.map((e) => e.target)).toEqual([
        'key:k-audit',
        'order:5',
        'order:4',
        'order:3',
        'order:2',
        'order:1',
      ]);
      expect(all.hasMore).toBe(false);
    });

    it('prints a table for people, and the cursor of the next page', async () => {
      const result = await keys('audit', '--actor', actor, '--limit', '3');
      expect(result).toMatchObject({ code: 0, stderr: '' });
      const lines = result.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^ID +AT +ACTOR +ACTION +TARGET +REQUEST ID$/);
      expect(lines[1]).toMatch(new RegExp(`^\\d+ +\\S+Z +${actor} +key\\.created +key:k-audit$`));
      expect(lines[3]).toMatch(/ order\.cancelled +order:4$/);
      expect(lines.slice(4)).toEqual([
        '',
        expect.stringMatching(/^More: --cursor [A-Za-z0-9_-]+$/),
      ]);
      const cursor = lines[5].split(' ').at(-1) ?? '';
      const next = await keys('audit', '--actor', actor, '--limit', '3', '--cursor', cursor);
      expect(next.stdout).toMatch(/ order\.cancelled +order:3 +req-3\n/);
      expect(next.stdout).not.toContain('More:');
    });

    it.each([
      [
        ['--action', 'key.deleted'],
        '--action must be one of key.created, key.rotated, key.revoked, key.unbanned, order.cancelled',
      ],
      [['--limit', '0'], '--limit must be a whole number from 1 to 1000'],
      [['--cursor', 'bm90LWEtY3Vyc29y'], 'cursor is not one that a page of the audit trail'],
    ])('refuses %j with a message, exit code 2', async (args, message) => {
      const result = await keys('audit', ...args);
      expect(result).toMatchObject({ code: 2, stdout: '' });
      expect(result.stderr).toContain(`keys: ${message}`);
    });
  });

  describe('the audit_events table', () => {
    it('refuses UPDATE, DELETE and TRUNCATE, even to its owner and a superuser (the suite connects as one)', async () => {
      const { rows } = await app.t.db.query<{ id: string }>(
        `INSERT INTO audit_events (actor, action, target) VALUES ('cli:x', 'key.created', 'key:append-only') RETURNING id`,
      );
      const [{ id }] = rows;
      await expect(
        app.t.db.query(`UPDATE audit_events SET actor = 'cli:someone-else' WHERE id = $1`, [id]),
      ).rejects.toThrow('audit_events is append-only: UPDATE refused');
      await expect(app.t.db.query('DELETE FROM audit_events WHERE id = $1', [id])).rejects.toThrow(
        'audit_events is append-only: DELETE refused',
      );
      await expect(app.t.db.query('TRUNCATE audit_events')).rejects.toThrow(
        'audit_events is append-only: TRUNCATE refused',
      );
      expect(await eventsOf('key:append-only')).toEqual([
        expect.objectContaining({ id, actor: 'cli:x', action: 'key.created' }),
      ]);
    });
  });
});
