import type { Db } from 'pg-boss';
import type { PoolClient } from 'pg';
import type { EntityManager } from 'typeorm';
import type { StatementConnection } from './statement-pool';

/**
 * A transaction of TypeORM as pg-boss's `db` option takes it: the jobs a call creates are written
 * by that transaction's connection, and commit or roll back with it.
 */
export async function jobsInTransaction(manager: EntityManager): Promise<Db> {
  const runner = manager.queryRunner;
  if (!runner?.isTransactionActive) throw new Error('jobs are sent in a transaction');
  const client = (await runner.connect()) as PoolClient;
  return {
    executeSql: async (text: string, values?: unknown[]) => ({
      rows: (await client.query(text, values)).rows,
    }),
  };
}

/**
 * A connection of a {@link StatementPool} (in its `transaction`) as pg-boss's `db` option takes
 * it: the jobs commit with whatever else that connection's transaction writes.
 */
export function jobsOnConnection(connection: StatementConnection): Db {
  return {
    executeSql: async (text: string, values?: unknown[]) => ({
      rows: await connection.rows(text, values),
    }),
  };
}
