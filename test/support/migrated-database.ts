import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { urlFor, withClient } from '../setup/clusters';

const ROOT = join(__dirname, '..', '..');

/**
 * A new database `name` on the cluster at `port`, migrated by the build's own command
 * (`node dist/database/migrate.js`, as a deployment runs it: build first). Returns its URL. For
 * the scripts that run the built service (bench, chaos, the dashboard picture).
 */
export async function createMigratedDatabase(port: number, name: string): Promise<string> {
  await withClient(urlFor(port, 'postgres'), (c) => c.query(`CREATE DATABASE ${name}`));
  const databaseUrl = urlFor(port, name);
  await promisify(execFile)('node', ['dist/database/migrate.js'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl },
  });
  return databaseUrl;
}
