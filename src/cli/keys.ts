/**
 * Key administration: `npm run keys -- <command>`. Uses the server's configuration: DATABASE_URL,
 * or the embedded PostgreSQL under EMBEDDED_DATABASE_DIR (attached to if the server is running,
 * started for the duration of the command if not).
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { ApiKeyStore, InvalidKeyRequestError, IssuedKey, KeySummary } from '../auth/api-key.store';
import { InvalidEnvironmentError, validateEnvironment } from '../config/environment';
import { dataSourceOptions } from '../database/data-source-options';
import { EmbeddedDatabase } from '../database/embedded-database';
import { limitsOf } from '../plans/plans';
import { Command, parseCommand, USAGE, UsageError } from './keys-command';

function describeIssued(key: IssuedKey): string {
  return [
    `Created ${key.plan} key ${key.id}${key.name ? ` (${key.name})` : ''}`,
    `Limits: ${key.limits.perMinute} per minute, ${key.limits.perDay} per day`,
    `Key (shown once, store it now): ${key.key}`,
    '',
  ].join('\n');
}

function issuedJson(key: IssuedKey): string {
  return JSON.stringify({
    id: key.id,
    key: key.key,
    name: key.name,
    prefix: key.prefix,
    plan: key.plan,
    perMinute: key.limits.perMinute,
    perDay: key.limits.perDay,
    createdAt: key.createdAt.toISOString(),
  });
}

interface KeyListing {
  id: string;
  name: string | null;
  prefix: string;
  plan: string;
  perMinute: number;
  perDay: number;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
  bannedUntil: string | null;
}

function summaryJson(key: KeySummary): KeyListing {
  const limits = limitsOf(key);
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    plan: key.plan,
    perMinute: limits.perMinute,
    perDay: limits.perDay,
    createdAt: key.createdAt.toISOString(),
    revokedAt: key.revokedAt?.toISOString() ?? null,
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    bannedUntil:
      key.bannedUntil && key.bannedUntil > new Date() ? key.bannedUntil.toISOString() : null,
  };
}

function table(keys: KeySummary[]): string {
  if (keys.length === 0) return 'No keys. Create one with: npm run keys -- create --plan free\n';
  const rows = keys.map((key) => {
    const k = summaryJson(key);
    return [
      key.id,
      key.name ?? '',
      `${key.prefix}…`,
      key.plan,
      `${k.perMinute}/min ${k.perDay}/day`,
      k.createdAt,
      k.revokedAt ?? '',
      k.bannedUntil ?? '',
    ];
  });
  const header = ['ID', 'NAME', 'PREFIX', 'PLAN', 'LIMITS', 'CREATED', 'REVOKED', 'BANNED UNTIL'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  return (
    [header, ...rows]
      .map((r) =>
        r
          .map((c, i) => c.padEnd(widths[i]))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

async function run(command: Command, store: ApiKeyStore): Promise<number> {
  switch (command.name) {
    case 'create': {
      const issued = await store.issue({
        plan: command.plan,
        name: command.label,
        limits: command.limits,
      });
      process.stdout.write(command.json ? `${issuedJson(issued)}\n` : describeIssued(issued));
      return 0;
    }
    case 'list': {
      const keys = await store.list();
      process.stdout.write(
        command.json ? `${JSON.stringify(keys.map(summaryJson))}\n` : table(keys),
      );
      return 0;
    }
    case 'revoke':
    case 'unban': {
      const done = await (command.name === 'revoke'
        ? store.revoke(command.id)
        : store.unban(command.id));
      if (!done) {
        process.stderr.write(`No key with id ${command.id}\n`);
        return 1;
      }
      process.stdout.write(
        `${command.name === 'revoke' ? 'Revoked' : 'Unbanned'} key ${command.id}\n`,
      );
      return 0;
    }
  }
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  let command: Command;
  try {
    command = parseCommand(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`keys: ${error.message}\n\n${USAGE}`);
    return 2;
  }

  const env = validateEnvironment(process.env);
  const embedded =
    env.DATABASE_URL === undefined
      ? await EmbeddedDatabase.start({
          dir: env.EMBEDDED_DATABASE_DIR,
          port: env.EMBEDDED_DATABASE_PORT,
        })
      : undefined;
  const dataSource = new DataSource(
    dataSourceOptions(env.DATABASE_URL ?? (embedded as EmbeddedDatabase).url, {
      connectTimeoutMs: env.DATABASE_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: env.DATABASE_STATEMENT_TIMEOUT_MS,
      poolSize: 1,
    }),
  );
  try {
    await dataSource.initialize();
    // Same rule as `npm start`: the embedded database is migrated here, DATABASE_URL never is.
    if (embedded) await dataSource.runMigrations({ transaction: 'each' });
    return await run(command, new ApiKeyStore(dataSource));
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await embedded?.stop();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof InvalidEnvironmentError || error instanceof InvalidKeyRequestError) {
      process.stderr.write(`keys: ${error.message}\n`);
      process.exitCode = 2;
      return;
    }
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(
      /relation "api_keys" does not exist/.test(message)
        ? 'keys: the database has no api_keys table yet: run `npm run migration:run` first\n'
        : `keys: ${message}\n`,
    );
    process.exitCode = 1;
  },
);
