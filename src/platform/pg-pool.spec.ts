import { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import { pgPoolOf } from './pg-pool';

/** A DataSource as far as pgPoolOf looks at it. */
const dataSource = (isInitialized: boolean, master: unknown): DataSource =>
  ({ isInitialized, driver: { master } }) as unknown as DataSource;

describe('pgPoolOf', () => {
  it("answers the pg Pool TypeORM's driver keeps", async () => {
    const pool = new Pool();
    expect(pgPoolOf(dataSource(true, pool))).toBe(pool);
    await pool.end();
  });

  it('throws before the DataSource is initialised', () => {
    expect(() => pgPoolOf(dataSource(false, undefined))).toThrow('not initialised');
  });

  it.each([
    ['no `master`', undefined],
    ['something else as `master`', { query: () => undefined }],
  ])('throws, naming the reach, when the driver keeps %s', (_, master) => {
    expect(() => pgPoolOf(dataSource(true, master))).toThrow(
      /no pg Pool as `driver.master`.*docs\/upgrading.md/,
    );
  });
});
