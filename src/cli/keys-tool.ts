/**
 * What `npm run keys -- <command>` does (`keys.ts` is its entry), apart from its process: the
 * command line, the settings and where to write are arguments, so that the tool also runs inside
 * another program (the end-to-end suites run most of its commands so, in one process).
 */
import 'reflect-metadata';
import { CommanderError, type OutputConfiguration } from 'commander';
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import type { AuditActor } from '../audit/audit-event';
import { AuditEventsRepository } from '../audit/audit-events.repository';
import { auditPageJson, AuditTrail, InvalidAuditQueryError } from '../audit/audit-trail';
import {
  AmbiguousKeyIdError,
  ApiKeysRepository,
  InvalidKeyRequestError,
  KeyNotFoundError,
} from '../auth/api-keys.repository';
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

/** Where the tool writes: standard output and standard error in a process of its own. */
export interface KeysToolOutput {
  out: (text: string) => void;
  err: (text: string) => void;
}

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

async function run(
  command: Command,
  keys: KeysService,
  print: (text: string) => void,
): Promise<number> {
  const printJson = (value: unknown): void => print(`${terminalJson(value)}\n`);
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

async function main(
  argv: string[],
  environment: NodeJS.ProcessEnv,
  output: KeysToolOutput,
): Promise<number> {
  // Every feature's scopes and audit actions, before `--scopes` and `--action` are checked against
  // them (and `--help` lists them).
  loadModuleDeclarations();
  let command: Command;
  try {
    const commander: OutputConfiguration = { writeOut: output.out, writeErr: output.err };
    command = parseCommand(argv, commander, version());
  } catch (error) {
    // Help, the version, or bad arguments: commander has printed them.
    if (error instanceof CommanderError) return error.exitCode;
    throw error;
  }

  validateEnvironment(environment);
  const env = databaseSettings.read(environment);
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
      new ApiKeysRepository(dataSource),
      new AuditTrail(new AuditEventsRepository(dataSource)),
    );
    return await run(command, keys, output.out);
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await embedded?.stop();
  }
}

/**
 * Runs the command line `argv` (without the program's name) with `environment` as its settings,
 * writing to `output`: the exit code, 1 or 2 with a message on standard error when it fails.
 */
export function runKeysTool(
  argv: string[],
  environment: NodeJS.ProcessEnv,
  output: KeysToolOutput,
): Promise<number> {
  return main(argv, environment, output).catch((error: unknown) => {
    if (
      error instanceof InvalidEnvironmentError ||
      error instanceof InvalidKeyRequestError ||
      error instanceof InvalidAuditQueryError
    ) {
      output.err(`keys: ${error.message}\n`);
      return 2;
    }
    if (error instanceof KeyNotFoundError || error instanceof AmbiguousKeyIdError) {
      output.err(`keys: ${error.message}\n`);
      return 1;
    }
    const message = error instanceof Error ? error.message : String(error);
    const missing = /relation "(api_keys|audit_events)" does not exist/.exec(message)?.[1];
    output.err(
      missing
        ? `keys: the database has no ${missing} table yet: run \`npm run migration:run\` first\n`
        : `keys: ${message}\n`,
    );
    return 1;
  });
}
