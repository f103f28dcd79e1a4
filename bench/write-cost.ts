import { withClient } from '../test/setup/clusters';

/** Rounds; in each, every table takes its batch of inserts, then its batch of updates, in turn. */
const ROUNDS = 8;
const BATCH = 2_000;
/** Rows in each table before the timing: the updates hit a table of some size. */
const PRELOAD = 200_000;

/** The indexes v2 had before its pages were bounded: for comparison only. */
const FORMER = [
  '(status, id)',
  '(pet_id, id)',
  '(complete, id)',
  '(ship_date, id)',
  '(status, ship_date, id)',
];

/**
 * What full pages of a sparse status would need beside the service's indexes: one index per
 * sort order that holds the status first (a pet's status stays a walk of the pet's index).
 */
const BY_STATUS = ['(status, id)', '(status, ship_date, id)'];

export interface WriteCost {
  variant: string;
  indexes: number;
  insertsPerSecond: number;
  updatesPerSecond: number;
  /** The share of the status updates that were heap-only (wrote no index entry). */
  hotShare: number;
}

/**
 * What the service's indexes cost the rest of the store, on one connection: single-row INSERTs
 * (one statement each, as an order is placed) and status updates by id (as an order is cancelled
 * or shipped), per second, into copies of the orders table with the service's indexes (as the
 * migrations leave them), with those and the status indexes full pages of a sparse status would
 * need, with v2's former indexes, and with the primary key alone; and the share of the updates
 * that were heap-only (none, where an index holds the status: each writes every index). The tables
 * take turns in short batches, so that a drift of the machine's speed weighs on each alike;
 * `synchronous_commit` is off, so that the disk's flush (the same for all) does not drown the
 * indexes' own work.
 */
export async function measureWriteCost(databaseUrl: string): Promise<WriteCost[]> {
  return withClient(databaseUrl, async (c) => {
    await c.query('SET synchronous_commit = off');
    const { rows: defs } = await c.query<{ columns: string }>(
      `SELECT substring(indexdef FROM '\\((.*)\\)$') AS columns FROM pg_indexes
        WHERE tablename = 'orders' AND indexname <> 'PK_orders'`,
    );
    const variants: { name: string; table: string; indexes: string[] }[] = [
      { name: 'primary key alone', table: 'orders_cost_pk', indexes: [] },
      {
        name: 'the service’s indexes',
        table: 'orders_cost_service',
        indexes: defs.map((d) => `(${d.columns})`),
      },
      {
        name: 'the service’s, status indexed too',
        table: 'orders_cost_status',
        indexes: [...defs.map((d) => `(${d.columns})`), ...BY_STATUS],
      },
      { name: 'v2’s former indexes', table: 'orders_cost_former', indexes: FORMER },
    ];
    for (const { table, indexes } of variants) {
      await c.query(`DROP TABLE IF EXISTS ${table}`);
      await c.query(
        `CREATE TABLE ${table} (LIKE orders INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING IDENTITY)`,
      );
      await c.query(`ALTER TABLE ${table} ADD PRIMARY KEY (id)`);
      for (const columns of indexes) await c.query(`CREATE INDEX ON ${table} ${columns}`);
      await c.query(
        `INSERT INTO ${table} (pet_id, quantity, ship_date, complete, status)
         SELECT 1 + g % 500, 1, timestamptz '2025-01-01' + (g * 7919 % 63072000) * interval '1 second',
                false, 'pending'
           FROM generate_series(1, $1::int) AS g`,
        [PRELOAD],
      );
      await c.query(`VACUUM ANALYZE ${table}`);
    }
    const seconds = new Map(variants.map((v) => [v.table, { insert: 0, update: 0 }]));
    let next = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const { table } of round % 2 === 0 ? variants : [...variants].reverse()) {
        const spent = seconds.get(table) ?? { insert: 0, update: 0 };
        let start = process.hrtime.bigint();
        for (let i = 0; i < BATCH; i++) {
          await c.query({
            name: `write-cost-insert-${table}`,
            text: `INSERT INTO ${table} (pet_id, quantity, ship_date, status)
                   VALUES ($1, 1, now() + $2 * interval '1 second', 'pending')`,
            values: [1 + (i % 500), (i * 7919) % 63_072_000],
          });
        }
        spent.insert += Number(process.hrtime.bigint() - start) / 1e9;
        start = process.hrtime.bigint();
        for (let i = 0; i < BATCH; i++) {
          await c.query({
            name: `write-cost-update-${table}`,
            text: `UPDATE ${table} SET status = $2 WHERE id = $1`,
            values: [1 + (((next + i) * 104_729) % PRELOAD), i % 2 === 0 ? 'cancelled' : 'shipped'],
          });
        }
        spent.update += Number(process.hrtime.bigint() - start) / 1e9;
      }
      next += BATCH;
    }
    // This connection's counts reach pg_stat_user_tables at its next report, forced here.
    await c.query('SELECT pg_stat_force_next_flush()');
    const { rows: hot } = await c.query<{ table: string; share: number }>(
      `SELECT relname AS table, n_tup_hot_upd::float8 / greatest(n_tup_upd, 1) AS share
         FROM pg_stat_user_tables WHERE relname = ANY($1::text[])`,
      [variants.map((v) => v.table)],
    );
    for (const { table } of variants) await c.query(`DROP TABLE ${table}`);
    return variants.map(({ name, table, indexes }) => {
      const spent = seconds.get(table) ?? { insert: 1, update: 1 };
      return {
        variant: name,
        indexes: indexes.length,
        insertsPerSecond: (ROUNDS * BATCH) / spent.insert,
        updatesPerSecond: (ROUNDS * BATCH) / spent.update,
        hotShare: hot.find((h) => h.table === table)?.share ?? 0,
      };
    });
  });
}

export function writeCostTable(results: WriteCost[]): string {
  const [pk] = results;
  return [
    '| table | indexes besides the primary key | inserts/s | ÷ primary key alone | status updates/s | ÷ primary key alone | heap-only updates |',
    '|---|--:|--:|--:|--:|--:|--:|',
    ...results.map(
      (r) =>
        `| ${r.variant} | ${r.indexes} | ${r.insertsPerSecond.toFixed(0)} | ${(r.insertsPerSecond / pk.insertsPerSecond).toFixed(2)}× | ${r.updatesPerSecond.toFixed(0)} | ${(r.updatesPerSecond / pk.updatesPerSecond).toFixed(2)}× | ${(100 * r.hotShare).toFixed(0)} % |`,
    ),
  ].join('\n');
}
