import type { DataSource } from 'typeorm';
import { pgPoolOf } from '../platform/pg-pool';

/** The connections of the pool under TypeORM's DataSource, and the queries waiting for one. */
export interface PoolCounts {
  /** Open, idle and in use alike. */
  total: number;
  idle: number;
  /** Queries waiting for a free connection. */
  waiting: number;
}

/** The pool's counts now; undefined before the DataSource is up or after it is closed. */
export function poolCountsOf(dataSource: DataSource): PoolCounts | undefined {
  if (!dataSource.isInitialized) return undefined;
  const pool = pgPoolOf(dataSource);
  return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
}
