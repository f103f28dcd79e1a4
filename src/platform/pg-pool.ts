import { Pool } from 'pg';
import type { DataSource } from 'typeorm';

/**
 * The node-postgres pool under TypeORM's DataSource, the one place that reaches it: TypeORM keeps
 * it as its PostgreSQL driver's private `master` and has no public accessor. The hot paths (raw
 * array rows, one mapper) and the pool metrics need it; everything else goes through TypeORM's
 * public API. Why it stays: docs/performance.md; what to check on an upgrade: docs/upgrading.md.
 *
 * Throws, naming the reach, when the DataSource is not initialised or its driver keeps no pg
 * `Pool` there: a TypeORM that moved it fails at start (PoolClientErrorListener asks first).
 */
export function pgPoolOf(dataSource: DataSource): Pool {
  if (!dataSource.isInitialized) throw new Error('The DataSource is not initialised');
  const pool = (dataSource.driver as unknown as { master?: unknown }).master;
  if (!(pool instanceof Pool)) {
    throw new Error(
      "TypeORM's PostgreSQL driver keeps no pg Pool as `driver.master` (src/platform/pg-pool.ts, " +
        'see docs/upgrading.md)',
    );
  }
  return pool;
}
