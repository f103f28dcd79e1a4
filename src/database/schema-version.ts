import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, MigrationExecutor } from 'typeorm';

/** A start on a database that lacks some of the migrations this release's code needs. */
export class MissingMigrationsError extends Error {
  constructor(readonly missing: string[]) {
    super(
      `The database lacks ${missing.length === 1 ? 'the migration' : 'the migrations'} this release needs: ${missing.join(', ')}. ` +
        'Apply the migrations first (`node dist/database/migrate.js`, or `npm run migration:run` from a checkout), then start this release',
    );
    this.name = 'MissingMigrationsError';
  }
}

/**
 * The schema this instance runs on, checked at start: every migration of this release must have
 * been applied, or the instance refuses to start, naming those missing. Migrations the code does
 * not know are accepted: a database one release ahead, which a rolled-back instance meets, was
 * only added to (see docs/deploying.md, "Releases: expand, then contract").
 */
@Injectable()
export class SchemaVersion implements OnModuleInit {
  private latestApplied = '';

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async onModuleInit(): Promise<void> {
    const migrations = new MigrationExecutor(this.dataSource);
    const missing = await migrations.getPendingMigrations();
    if (missing.length > 0) throw new MissingMigrationsError(missing.map((m) => m.name));
    const applied = await migrations.getExecutedMigrations();
    const latest = applied.reduce<(typeof applied)[number] | undefined>(
      (newest, m) => (newest === undefined || m.timestamp > newest.timestamp ? m : newest),
      undefined,
    );
    this.latestApplied = latest?.name ?? '';
  }

  /** The name of the newest migration applied to the database (newest by its timestamp). */
  get latest(): string {
    return this.latestApplied;
  }
}
