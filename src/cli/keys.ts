/**
 * Key administration: `npm run keys -- <command>`. Uses the server's configuration: DATABASE_URL,
 * or the embedded PostgreSQL under EMBEDDED_DATABASE_DIR (attached to if the server is running,
 * started for the duration of the command if not).
 */
import 'reflect-metadata';
import { CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import type { AuditActor } from '../audit/audit-event';
import { AuditEventsRepository } from '../audit/audit-events.repository';
import { auditPageJson, AuditTrail, InvalidAuditQueryError } from '../audit/audit-trail';
import {
  AmbiguousKeyIdError,
  ApiKeyStore,
  InvalidKeyRequestError,
  KeyNotFoundError,
} from '../auth/api-key.store';
import { issuedJson, keyJson, rotationJson } from '../auth/key-json';
import { KeysService } from '../auth/keys.service';
import { InvalidEnvironmentError, validateEnvironment } from '../config/environment';
import { databaseSettings } from '../database/database.settings';
import { applyMigrations, migrationRunOf } from '../database/apply-migrations';
import { databaseSettingsOf, dataSourceOptions } from '../database/data-source-options';
import { EmbeddedDatabase } from '../database/embedded/embedded-database';
import { Command, expiryDate, parseCommand } from './keys-command';
import { auditTable, describeIssued, describeKey, describeRotation, keyTable } from './keys-output';
import { relativeTime } from './relative-time';
import { loadModuleDeclarations } from './module-declarations';
import { terminalJson } from './terminal-text';

const print = (text: string): void => void process.stdout.write(text);
const printJson = (value: unknown): void => print(`${terminalJson(value)}\n`);

/** The audit trail's actor for this tool: `cli:` and the OS user running it. */
function cliActor(): AuditActor {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    // A user id without a passwd entry (some containers).
    user = process.env.USER ?? `uid-${process.getuid?.() ?? 'unknown'}`;
  }
  return { actor: `cli:${user}` };
}

async function run(command: Command, keys: KeysService): Promise<number> {
  switch (command.name) {
    case 'create': {
      const issued = await keys.create(
        {
          plan: command.plan,
          name: command.label,
          limits: command.limits,
          expiresAt: command.expiry && expiryDate(command.expiry),
          scopes: command.scopes,
        },
        cliActor(),
      );
      if (command.json) printJson(issuedJson(issued));
      else print(describeIssued(issued));
      return 0;
    }
    case 'list': {
      const list = await keys.list();
      if (command.json) printJson(list.map((key) => keyJson(key)));
      else print(keyTable(list));
      return 0;
    }
    case 'show': {
      const { key, family } = await keys.show(command.id);
      if (command.json) printJson(keyJson(key));
      else print(describeKey(key, family));
      return 0;
    }
    case 'rotate': {
      const rotation = await keys.rotate(
        command.id,
        { graceMs: command.graceMs, expiresAt: command.expiry && expiryDate(command.expiry) },
        cliActor(),
      );
      if (command.json) printJson(rotationJson(rotation));
      else print(describeRotation(rotation));
      return 0;
    }
    case 'revoke': {
      const { key, alreadyRevoked } = await keys.revoke(command.id, cliActor());
      const when = key.revokedAt ? ` ${relativeTime(key.revokedAt)}` : '';
      print(
        alreadyRevoked
          ? `Key ${key.id} was already revoked${when}; nothing changed\n`
          : `Revoked key ${key.id}: refused on every instance at once (within 5 seconds at worst)\n`,
      );
      return 0;
    }
    case 'unban': {
      const { key, wasBanned } = await keys.unban(command.id, cliActor());
      print(
        wasBanned
          ? `Unbanned key ${key.id} and any key rotated from or to it: on every instance at once (within 5 seconds at worst)\n`
          : `Key ${key.id} was not banned; nothing changed\n`,
      );
      return 0;
    }
    case 'audit': {
      const page = await keys.audit(command.query);
      if (command.json) printJson(auditPageJson(page));
      else print(auditTable(page));
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
  // Every feature's scopes and audit actions, before `--scopes` and `--action` are checked against
  // them (and `--help` lists them).
  loadModuleDeclarations();
  let command: Command;
  try {
    command = parseCommand(argv, {}, version());
  } catch (error) {
    // Help, the version, or bad arguments: commander has printed them.
    if (error instanceof CommanderError) return error.exitCode;
    throw error;
  }

  validateEnvironment(process.env);
  const env = databaseSettings.read(process.env);
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
    // Same rule as `npm start`: the embedded database is migrated here (by the schema's owner;
    // the tool then connects as the runtime role, as in production), DATABASE_URL never is.
    if (embedded) {
      await applyMigrations(
        embedded.migrateUrl,
        databaseSettingsOf(env, { statementTimeoutMs: 0 }),
        migrationRunOf(env),
      );
    }
    await dataSource.initialize();
    const keys = new KeysService(
      dataSource,
      new ApiKeyStore(dataSource),
      new AuditTrail(new AuditEventsRepository(dataSource)),
    );
    return await run(command, keys);
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
    if (
      error instanceof InvalidEnvironmentError ||
      error instanceof InvalidKeyRequestError ||
      error instanceof InvalidAuditQueryError
    ) {
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
    const missing = /relation "(api_keys|audit_events)" does not exist/.exec(message)?.[1];
    process.stderr.write(
      missing
        ? `keys: the database has no ${missing} table yet: run \`npm run migration:run\` first\n`
        : `keys: ${message}\n`,
    );
    process.exitCode = 1;
  },
);
