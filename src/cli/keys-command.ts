/**
 * The `keys` tool's command line, on commander: its commands and options, their help and the
 * errors of bad arguments (printed with the command's usage, exit code 2), checked before anything
 * touches the database.
 */
import {
  Command as Program,
  CommanderError,
  InvalidArgumentError,
  Option,
  type OutputConfiguration,
} from 'commander';
import { AUDIT_ACTION_NAMES } from '../audit/audit-actions';
import {
  DEFAULT_AUDIT_PAGE_SIZE,
  MAX_AUDIT_PAGE_SIZE,
  type AuditQuery,
} from '../audit/audit-trail';
import { DEFAULT_GRACE_MS } from '../auth/keys.service';
import { EVERY_SCOPE, KEYS_ADMIN, knownScopes, scopesProblem } from '../auth/scopes';
import { parseRfc3339 } from '../common/rfc3339';
import { type Plan, planLimitsProblem, PLANS, type RateLimits } from '../plans/plans';
import { hasControlCharacter, printable } from './terminal-text';

/** When a key stops working: after a duration from now, or at a given time. */
export type Expiry = { inMs: number } | { at: Date };

export type Command =
  | {
      name: 'create';
      plan: Plan;
      label?: string;
      limits?: RateLimits;
      expiry?: Expiry;
      /** Absent: every scope but `keys:admin`. */
      scopes?: string[];
      json: boolean;
    }
  | { name: 'list'; json: boolean }
  | { name: 'show'; id: string; json: boolean }
  | { name: 'rotate'; id: string; graceMs: number; expiry?: Expiry; json: boolean }
  | { name: 'revoke' | 'unban'; id: string }
  | { name: 'audit'; query: AuditQuery; json: boolean };

/**
 * The command `argv` asks for. Help, the version and bad arguments are printed by commander and
 * thrown as a CommanderError with the exit code: 0, or 2 for bad arguments.
 */
export function parseCommand(
  argv: string[],
  output: OutputConfiguration = {},
  version = '',
): Command {
  let parsed: Command | undefined;
  const done = (command: Command): void => void (parsed = command);
  // Settings first: commander copies them into each command as it is added.
  const program = new Program('npm run keys --')
    .usage('<command> [options]')
    .version(version, '--version', 'Print the version.')
    .configureOutput({ ...output, outputError: (text, write) => write(inOurWords(text)) })
    .configureHelp({ optionTerm, subcommandTerm, commandUsage })
    .showHelpAfterError()
    .exitOverride((error) => {
      throw error.exitCode === 0 ? error : new CommanderError(2, error.code, error.message);
    })
    .addHelpText(
      'after',
      `
An <id> is a key's id or its short id: any unique prefix of at least 4 characters (list shows 8).
Times are shown relative to now ("3 minutes ago", "in 89 days"); --json gives them in ISO 8601.`,
    );
  const create = program
    .command('create')
    .summary('Issue a key and print it once.')
    .description(
      'Issue a key and print it once. Enterprise keys need both limits; other plans have fixed ones.',
    )
    .addOption(
      new Option('--plan <PLAN>', `The key's plan: ${PLANS.join(', ')}.`)
        .argParser(oneOf('--plan', PLANS))
        .makeOptionMandatory(),
    )
    .option(
      '--name <TEXT>',
      'What the key is for, shown by list and show (no control characters).',
      nameOption,
    )
    .option('--per-minute <N>', 'Enterprise keys: requests a minute.', wholeNumber)
    .option('--per-day <N>', 'Enterprise keys: requests a day.', wholeNumber)
    .addOption(expiresIn())
    .addOption(expiresAt())
    .option(
      '--scopes <LIST>',
      `Restrict the key to these scopes, comma-separated, e.g. orders:read,orders:cancel. Without it the key has every scope (${EVERY_SCOPE}), those added later included, but ${KEYS_ADMIN}, granted only by name (--scopes '${EVERY_SCOPE},${KEYS_ADMIN}': every scope and the admin API).`,
      scopesOption,
    )
    .option(
      '--json',
      'One JSON object: {id, key, name, prefix, plan, perMinute, perDay, createdAt, expiresAt, familyId, scopes}.',
    )
    // A function: the scopes are known once the features' declarations are loaded.
    .addHelpText('after', () =>
      [
        '\nScopes:',
        ...knownScopes().map(({ name, description }) =>
          `  ${name.padEnd(24)}  ${description}`.trimEnd(),
        ),
      ].join('\n'),
    )
    .action((options: CreateOptions) => {
      const { plan, perMinute, perDay } = options;
      const limits =
        perMinute !== undefined || perDay !== undefined ? { perMinute, perDay } : undefined;
      const problem = planLimitsProblem(plan, limits);
      if (problem !== undefined) create.error(`keys: ${problem}`);
      done({
        name: 'create',
        plan,
        label: options.name,
        limits: limits as RateLimits | undefined,
        expiry: options.expiresIn ?? options.expiresAt,
        scopes: options.scopes,
        json: options.json === true,
      });
    });

  program
    .command('list')
    .description(
      'Every key: short id, name, prefix, plan, limits, scopes, status, created, last used, expires.',
    )
    .option('--json', 'A JSON array, one object per key, full ids and ISO 8601 times.')
    .action((options: JsonOption) => done({ name: 'list', json: options.json === true }));

  program
    .command('show')
    .description('One key in full, with the other keys of its rotation family.')
    .argument('<id>')
    .option('--json', 'One JSON object, the fields of list --json.')
    .action((id: string, options: JsonOption) =>
      done({ name: 'show', id, json: options.json === true }),
    );

  program
    .command('rotate')
    .summary('Issue a replacement key; the old one works for a grace period.')
    .description(
      'Issue a replacement key (same name, plan, limits and scopes) and print it once. The old key keeps working for the grace period, then is refused as expired. The two share one rate-limit budget and one ban. The new key does not expire unless --expires-in or --expires-at says so.',
    )
    .argument('<id>')
    .option(
      '--grace <DURATION>',
      'How long the old key keeps working (default 24h; 0 ends it now).',
      (value) => duration('--grace', value, true),
    )
    .addOption(expiresIn())
    .addOption(expiresAt())
    .option(
      '--json',
      'One JSON object: the new key as create prints it, plus {rotated: {id, expiresAt}} for the old one.',
    )
    .action((id: string, options: RotateOptions) =>
      done({
        name: 'rotate',
        id,
        graceMs: options.grace ?? DEFAULT_GRACE_MS,
        expiry: options.expiresIn ?? options.expiresAt,
        json: options.json === true,
      }),
    );

  program
    .command('revoke')
    .summary('Stop a key working, on every instance at once.')
    .description(
      'Stop a key working: refused on every instance at once (within 5 seconds at worst). Revoking a revoked key changes nothing.',
    )
    .argument('<id>')
    .action((id: string) => done({ name: 'revoke', id }));

  program
    .command('unban')
    .summary('Lift a rate-limit ban from a key and its rotation family.')
    .description(
      'Lift a rate-limit ban from a key (and the other keys of its rotation family): on every instance at once (within 5 seconds at worst). Unbanning a key that is not banned changes nothing.',
    )
    .argument('<id>')
    .action((id: string) => done({ name: 'unban', id }));

  program
    .command('audit')
    .summary('The audit trail, newest first.')
    .description(
      "The audit trail, newest first: every change to a key and every cancelled order, with who made it and the request's id. A page at a time; the next cursor is printed when there are more.",
    )
    .option(
      '--action <ACTION>',
      `One of ${AUDIT_ACTION_NAMES.join(', ')}.`,
      oneOf('--action', AUDIT_ACTION_NAMES),
    )
    .option(
      '--actor <ACTOR>',
      'Exactly this actor: key:<key id> or cli:<OS user>.',
      nonEmpty('--actor'),
    )
    .option(
      '--target <TARGET>',
      'Exactly this target: key:<key id> or order:<order id>.',
      nonEmpty('--target'),
    )
    .option(
      '--limit <N>',
      `Events per page, 1 to ${MAX_AUDIT_PAGE_SIZE} (default ${DEFAULT_AUDIT_PAGE_SIZE}).`,
      pageSize,
    )
    .option(
      '--cursor <CURSOR>',
      'The page after the one that printed this cursor (same filters).',
      nonEmpty('--cursor'),
    )
    .option(
      '--json',
      'One JSON object: {data: [{id, at, actor, action, target, requestId}], hasMore, nextCursor}.',
    )
    .action(({ json, ...query }: AuditQuery & JsonOption) =>
      done({ name: 'audit', query, json: json === true }),
    );

  if (argv.length === 0) program.error('keys: a command is needed');
  program.parse(argv, { from: 'user' });
  // Every command has an action, and commander throws for anything else.
  return parsed as Command;
}

/** When the key stops working: create's and rotate's. */
const expiresIn = (): Option =>
  new Option('--expires-in <DURATION>', 'The key stops working after this long, e.g. 90d.')
    .argParser((value): Expiry => ({ inMs: duration('--expires-in', value, false) }))
    .conflicts('expiresAt');
const expiresAt = (): Option =>
  new Option(
    '--expires-at <TIME>',
    '... or at this RFC 3339 time, e.g. 2027-03-01T00:00:00Z.',
  ).argParser((value): Expiry => ({ at: rfc3339('--expires-at', value) }));

interface JsonOption {
  json?: true;
}

interface CreateOptions extends JsonOption {
  plan: Plan;
  name?: string;
  perMinute?: number;
  perDay?: number;
  expiresIn?: Expiry;
  expiresAt?: Expiry;
  scopes?: string[];
}

interface RotateOptions extends JsonOption {
  grace?: number;
  expiresIn?: Expiry;
  expiresAt?: Expiry;
}

/** An option's term in help and usage as this tool writes it: `--grace DURATION`. */
function optionTerm(option: Option): string {
  return option.flags.replace(/<(\w+)>/, '$1');
}

/** A command in the program's list: its name and arguments (its options are in its own help). */
function subcommandTerm(command: Program): string {
  return [command.name(), ...command.registeredArguments.map((arg) => `<${arg.name()}>`)].join(' ');
}

/** A command's usage from what it takes: `rotate <id> [--grace DURATION] ... [--json]`. */
function commandUsage(command: Program): string {
  if (!command.parent) return `${command.name()} ${command.usage()}`;
  const options = command.options.map((option) =>
    option.mandatory ? optionTerm(option) : `[${optionTerm(option)}]`,
  );
  return [command.parent.name(), subcommandTerm(command), ...options].join(' ');
}

/**
 * Commander's messages as this tool has always worded them (scripts and people read them), after
 * `keys: `: an unknown option, an option without its value, and a value an option's own check
 * refuses, whose reason names the option.
 */
function inOurWords(text: string): string {
  return text
    .replace(/^error: unknown option '(.*)'/, 'keys: unknown option $1')
    .replace(/^error: option '(\S+)[^']*' argument missing/, 'keys: $1 needs a value')
    .replace(/^error: option '[^']*' argument '[\s\S]*' is invalid\. (?=--)/, 'keys: ')
    .replace(/^error: /, 'keys: ');
}

/** When a key made now with this expiry stops working. */
export function expiryDate(expiry: Expiry, now = Date.now()): Date {
  return 'at' in expiry ? expiry.at : new Date(now + expiry.inMs);
}

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** Longer than any key should live; keeps every computed date valid. */
const MAX_DURATION_MS = 36_500 * UNIT_MS.d;

/**
 * An option's parser: what `read` makes of the value, else the value refused by its rule
 * (commander prints it, after the option's name, with the command's usage).
 */
function parser<T>(option: string, rule: string, read: (value: string) => T | undefined) {
  return (value: string): T => {
    const parsed = read(value);
    if (parsed !== undefined) return parsed;
    throw new InvalidArgumentError(`${option} ${rule}; got "${printable(value)}"`);
  };
}

/** `90d`, `24h`, `15m`, `30s` (and `0` where zero is allowed). */
export function duration(option: string, value: string, zeroAllowed: boolean): number {
  const rule = `must be a ${zeroAllowed ? '' : 'positive '}number followed by s, m, h or d (e.g. 90d, 24h)`;
  return parser(option, rule, (text) => {
    const match = /^([0-9]+)([smhd])$/.exec(text) ?? (text === '0' ? ['0', '0', 's'] : null);
    const ms = match ? Number(match[1]) * UNIT_MS[match[2]] : NaN;
    return ms <= MAX_DURATION_MS && (ms > 0 || zeroAllowed) ? ms : undefined;
  })(value);
}

/**
 * An RFC 3339 date-time with its offset (`Z` or `±hh:mm`), as a real calendar time; a space may
 * stand for the `T`.
 */
export function rfc3339(option: string, value: string): Date {
  const rule = 'must be an RFC 3339 time with an offset, e.g. 2027-03-01T00:00:00Z';
  return parser(option, rule, (text) => {
    const instant = parseRfc3339(text, { spaceSeparator: true });
    return instant === undefined ? undefined : new Date(instant);
  })(value);
}

const oneOf = <T extends string>(option: string, values: readonly T[]) =>
  parser(option, `must be one of ${values.join(', ')}`, (value) => values.find((v) => v === value));

const nonEmpty = (option: string) =>
  parser(option, 'must not be empty', (value) => (value === '' ? undefined : value));

/** A decimal count as given on the command line; anything else is NaN (refused as a limit). */
const wholeNumber = (value: string): number => (/^[0-9]+$/.test(value) ? Number(value) : NaN);

const pageSize = parser(
  '--limit',
  `must be a whole number from 1 to ${MAX_AUDIT_PAGE_SIZE}`,
  (value) => {
    const size = wholeNumber(value);
    return size >= 1 && size <= MAX_AUDIT_PAGE_SIZE ? size : undefined;
  },
);

/** A name is printed by list, show and rotate: text a terminal shows as it is. */
const nameOption = parser(
  '--name',
  'must not contain control characters or bidirectional overrides',
  (value) => (hasControlCharacter(value) ? undefined : value),
);

/**
 * `--scopes a:b,c:d`: each a scope a feature declares, or `*`. Checked here, with the same rule
 * the keys' repository applies, so that a wrong one is a usage error.
 */
function scopesOption(value: string): string[] {
  const scopes = value
    .split(',')
    .map((scope) => scope.trim())
    .filter((scope) => scope !== '');
  const problem = scopesProblem(scopes);
  if (problem !== undefined) throw new InvalidArgumentError(`--scopes: ${problem}`);
  return scopes;
}
