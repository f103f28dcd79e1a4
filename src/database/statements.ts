import type { DataSource } from 'typeorm';
import { pgPoolOf } from '../platform/pg-pool';
import { configInheriting } from './statement-call';

/**
 * A statement sent by name (a prepared statement of pg): each pooled connection has PostgreSQL
 * parse and plan it once, then only bind and execute it. On the paths of every request (a
 * cancel, the list's first batch, v2's pages) that is most of the database's work per request
 * (docs/performance.md). Texts name their columns (never `*`), so a migration that adds a column
 * leaves running instances' plans valid. A feature's statements are constants of its
 * `*.sql.ts`, run by its repository.
 */
export interface NamedStatement {
  readonly name: string;
  readonly text: string;
  /** `array`: each row comes as the array of its columns, in the statement's order. */
  readonly rowMode?: 'array';
}

/** The same statement, each of its rows as the array of its columns (no object per row). */
export function withArrayRows<S extends NamedStatement>(
  statement: S,
): S & { readonly rowMode: 'array' } {
  return { ...statement, rowMode: 'array' };
}

/**
 * The rows of one call of `statement` with `values`, on the pool under TypeORM's DataSource:
 * the raw rows, without TypeORM's own work per query and per row, for the paths of every request
 * and the lists of thousands of orders (docs/performance.md). Everything else goes through
 * TypeORM's public API.
 */
export async function statementRows<R>(
  dataSource: DataSource,
  statement: NamedStatement,
  values?: unknown[],
): Promise<R[]> {
  const { rows } = await pgPoolOf(dataSource).query(configInheriting(statement), values);
  return rows as R[];
}
