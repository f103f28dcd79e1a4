import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';

/**
 * The node-postgres pool under TypeORM's DataSource. TypeORM keeps it as its PostgreSQL driver's
 * `master` and has no public accessor; the hot paths (raw rows, a server-side cursor) and the pool
 * metrics need it. Undefined before the DataSource is initialised.
 */
export function pgPoolOf(dataSource: DataSource): Pool | undefined {
  return (dataSource.driver as unknown as { master?: Pool }).master;
}
