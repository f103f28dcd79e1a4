import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';

/**
 * The node-postgres pool under TypeORM's DataSource: the one place that reaches it. TypeORM keeps
 * it as its PostgreSQL driver's `master` and has no public accessor; the hot paths (raw rows, a
 * server-side cursor) and the pool metrics need it. Kept for speed, measured: a list of 1,000
 * orders took 7.7 ms through this pool (array rows and the one mapper of order-json.ts) against
 * 47 ms through `repository.find()` + `JSON.stringify` (warm, 300 lists each, 2 loaded cores,
 * Node 20, 2026-11-23); everything else goes through TypeORM's public API. Undefined before the
 * DataSource is initialised.
 */
export function pgPoolOf(dataSource: DataSource): Pool | undefined {
  return (dataSource.driver as unknown as { master?: Pool }).master;
}
