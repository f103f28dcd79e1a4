/**
 * Checks every migration's SQL with Squawk (`squawk-cli`), as part of `npm run lint`: each
 * migration class found where the service finds them (`src/<feature>/migrations/`), plus any
 * folder given as an argument, is run against a query runner that only records what it is asked
 * to run. No database: the SQL is the migration's as TypeORM would send it, in one file per
 * migration, inside BEGIN and COMMIT unless the migration runs outside a transaction
 * (`transaction = false`), after the lock timeout every migration runs with.
 *
 * A statement of a migration already deployed that Squawk flags is excused in
 * `migration-excuses.ts`, with its reason: rendered after `-- squawk-ignore <rules>`.
 */
import { execFileSync } from 'node:child_process';
import { globSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { MIGRATION_FILES } from '../src/database/data-source-options';
import { databaseSettings } from '../src/database/database.settings';
import { EXCUSES, type Excuse } from './migration-excuses';

const ROOT = join(__dirname, '..');
/** The PostgreSQL of the shipped compose file (docker/docker-compose.yml). */
const POSTGRES_VERSION = '18';

type MigrationClass = new () => MigrationInterface & { transaction?: boolean };

interface RenderedMigration {
  name: string;
  sql: string;
}

async function migrationClasses(patterns: string[]): Promise<MigrationClass[]> {
  const files = patterns
    .flatMap((pattern) => globSync(pattern))
    .filter((file) => !file.endsWith('.d.ts'));
  const modules = await Promise.all(
    files.map((file) => import(resolve(file)) as Promise<Record<string, unknown>>),
  );
  return modules
    .flatMap((exported) => Object.values(exported))
    .filter(isMigrationClass)
    .sort((a, b) => timestampOf(a) - timestampOf(b));
}

function isMigrationClass(value: unknown): value is MigrationClass {
  return (
    typeof value === 'function' &&
    typeof (value.prototype as Partial<MigrationInterface> | undefined)?.up === 'function'
  );
}

/** TypeORM's order: the timestamp that ends the class's name. */
function timestampOf(migration: MigrationClass): number {
  return Number(/(\d{13})$/.exec(migration.name)?.[1] ?? 0);
}

/** A query runner that records each `query()` and refuses anything else it cannot render. */
function recordingRunner(statements: string[]): QueryRunner {
  const runner = {
    query: (sql: string): Promise<unknown[]> => {
      statements.push(sql.trim());
      return Promise.resolve([]);
    },
  };
  return new Proxy(runner, {
    get(target, property) {
      if (property in target) return target[property as keyof typeof target];
      if (property === 'then') return undefined;
      throw new Error(
        `a migration called queryRunner.${String(property)}: the lint renders only query(sql)`,
      );
    },
  }) as unknown as QueryRunner;
}

export async function renderMigrations(
  patterns: string[],
  lockTimeoutMs: number,
): Promise<RenderedMigration[]> {
  const rendered: RenderedMigration[] = [];
  for (const Migration of await migrationClasses(patterns)) {
    const migration = new Migration();
    const statements: string[] = [];
    await migration.up(recordingRunner(statements));
    const name = migration.name ?? Migration.name;
    const excuses = new Set(EXCUSES[name] ?? []);
    const body = [
      // As applyMigrations runs every migration: no limit on the statement, a short lock wait.
      `SET statement_timeout = 0;`,
      `SET lock_timeout = '${lockTimeoutMs}ms';`,
      ...statements.map((sql) => withExcuse(sql, excuses)),
    ];
    for (const unused of excuses) {
      throw new Error(`${name}: no statement starts with the excused "${unused.statement}"`);
    }
    const inTransaction = migration.transaction !== false;
    rendered.push({
      name,
      sql: (inTransaction ? ['BEGIN;', ...body, 'COMMIT;'] : body).join('\n\n') + '\n',
    });
  }
  return rendered;
}

/** The statement as Squawk should read it: after its excuse, if it has one (taken from `left`). */
function withExcuse(sql: string, left: Set<Excuse>): string {
  const folded = sql.replace(/\s+/g, ' ');
  const excuse = [...left].find((e) => folded.startsWith(e.statement));
  if (!excuse) return `${sql};`;
  left.delete(excuse);
  if (excuse.rules === 'not-ours') return `-- not linted: ${excuse.reason}`;
  // Squawk's ignore covers the line after it: the statement on one line (safe without
  // comments or quoted bodies, where folding could change what it says).
  if (/--|\$\$/.test(sql)) throw new Error(`cannot excuse "${excuse.statement}": fold it by hand`);
  return `-- excused: ${excuse.reason}\n-- squawk-ignore ${excuse.rules.join(', ')}\n${folded};`;
}

/** Squawk on each rendered migration; false when it found a problem (its report is printed). */
function squawk(files: string[]): boolean {
  const bin = join(ROOT, 'node_modules', '.bin', 'squawk');
  try {
    execFileSync(bin, [`--pg-version=${POSTGRES_VERSION}`, ...files], { stdio: 'inherit' });
    return true;
  } catch {
    return false;
  }
}

async function main(): Promise<void> {
  const { MIGRATION_LOCK_TIMEOUT_MS } = databaseSettings.read({});
  const patterns = [MIGRATION_FILES, ...process.argv.slice(2).map((dir) => join(dir, '*.ts'))];
  const dir = mkdtempSync(join(tmpdir(), 'store-orders-migrations-sql-'));
  try {
    const rendered = await renderMigrations(patterns, MIGRATION_LOCK_TIMEOUT_MS);
    const files = rendered.map(({ name, sql }) => {
      const file = join(dir, `${name}.sql`);
      writeFileSync(file, sql);
      return file;
    });
    const clean = squawk(files);
    process.stdout.write(
      clean
        ? `Squawk: ${files.length} migrations clean\n`
        : `Squawk found problems in the migrations' SQL (KEEP_SQL=1 keeps it, rendered, in ${dir})\n`,
    );
    if (!clean) process.exitCode = 1;
  } finally {
    if (!process.env.KEEP_SQL) rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  });
}
