/**
 * Key administration: `npm run keys -- <command>`. Uses the server's configuration: DATABASE_URL,
 * or the embedded PostgreSQL under EMBEDDED_DATABASE_DIR (attached to if the server is running,
 * started for the duration of the command if not).
 */
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import {
  AmbiguousKeyIdError,
  ApiKeyStore,
  familyOf,
  InvalidKeyRequestError,
  KeyNotFoundError,
} from '../auth/api-key.store';
import { InvalidEnvironmentError, validateEnvironment } from '../config/environment';
import { databaseSettingsOf, dataSourceOptions } from '../database/data-source-options';
import { EmbeddedDatabase } from '../database/embedded-database';
import { Command, expiryDate, parseCommand, USAGE, usageOf, UsageError } from './keys-command';
import {
  describeIssued,
  describeKey,
  describeRotation,
  issuedJson,
  keyJson,
  keyTable,
  rotationJson,
} from './keys-output';
import { relativeTime } from './relative-time';
import { loadScopeDeclarations } from './scope-declarations';

type StoreCommand = Exclude<Command, { name: 'help' | 'version' }>;

const print = (text: string): void => void process.stdout.write(text);
const printJson = (value: unknown): void => print(`${JSON.stringify(value)}\n`);

async function run(command: StoreCommand, store: ApiKeyStore): Promise<number> {
  switch (command.name) {
    case 'create': {
      const issued = await store.issue({
        plan: command.plan,
        name: command.label,
        limits: command.limits,
        expiresAt: command.expiry && expiryDate(command.expiry),
        scopes: command.scopes,
      });
      if (command.json) printJson(issuedJson(issued));
      else print(describeIssued(issued));
      return 0;
    }
    case 'list': {
      const keys = await store.list();
      if (command.json) printJson(keys.map((key) => keyJson(key)));
      else print(keyTable(keys));
      return 0;
    }
    case 'show': {
      const key = await store.find(command.id);
      if (command.json) printJson(keyJson(key));
      else print(describeKey(key, await store.family(familyOf(key))));
      return 0;
    }
    case 'rotate': {
      const rotation = await store.rotate(
        command.id,
        command.graceMs,
        command.expiry && expiryDate(command.expiry),
      );
      if (command.json) printJson(rotationJson(rotation));
      else print(describeRotation(rotation));
      return 0;
    }
    case 'revoke': {
      const { key, alreadyRevoked } = await store.revoke(command.id);
      const when = key.revokedAt ? ` ${relativeTime(key.revokedAt)}` : '';
      print(
        alreadyRevoked
          ? `Key ${key.id} was already revoked${when}; nothing changed\n`
          : `Revoked key ${key.id}: refused on every instance at once (within 5 seconds at worst)\n`,
      );
      return 0;
    }
    case 'unban': {
      const key = await store.unban(command.id);
      print(
        `Unbanned key ${key.id} and any key rotated from or to it: on every instance at once (within 5 seconds at worst)\n`,
      );
      return 0;
    }
  }
}

/** This package's version, from the package.json two folders up (from src/cli or dist/cli). */
function version(): string {
  const manifest = readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8');
  return (JSON.parse(manifest) as { version: string }).version;
}

async function main(argv: string[]): Promise<number> {
  // Every feature's scopes, before `--scopes` is checked against them (and `--help` lists them).
  loadScopeDeclarations();
  let command: Command;
  try {
    command = parseCommand(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    const usage = error.command ? usageOf(error.command) : USAGE;
    process.stderr.write(`keys: ${error.message}\n\n${usage}`);
    return 2;
  }
  if (command.name === 'help') {
    print(command.command ? usageOf(command.command) : USAGE);
    return 0;
  }
  if (command.name === 'version') {
    print(`${version()}\n`);
    return 0;
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
    dataSourceOptions(
      env.DATABASE_URL ?? (embedded as EmbeddedDatabase).url,
      databaseSettingsOf(env),
    ),
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
    if (error instanceof KeyNotFoundError || error instanceof AmbiguousKeyIdError) {
      process.stderr.write(`keys: ${error.message}\n`);
      process.exitCode = 1;
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
