/** Arguments of the `keys` tool, parsed and checked before anything touches the database. */
import { parseArgs } from 'node:util';
import { EVERY_SCOPE, KEYS_ADMIN, knownScopes, scopesProblem } from '../auth/scopes';
import { AUDIT_ACTIONS, isAuditAction } from '../audit/audit-event';
import {
  DEFAULT_AUDIT_PAGE_SIZE,
  MAX_AUDIT_PAGE_SIZE,
  type AuditQuery,
} from '../audit/audit-trail';
import { parseRfc3339 } from '../common/rfc3339';
import { isPlan, Plan, planLimitsProblem, PLANS, type RateLimits } from '../plans/plans';
import { hasControlCharacter, printable } from './terminal-text';

const COMMAND_NAMES = ['create', 'list', 'show', 'rotate', 'revoke', 'unban', 'audit'] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

/**
 * Each command's synopsis and help (a function where it lists what is known only once the
 * features' scopes are loaded), and the options it takes (besides --help).
 */
const COMMANDS: Record<
  CommandName,
  { synopsis: string; help: string | (() => string); options: string[] }
> = {
  create: {
    synopsis: `create --plan <${PLANS.join('|')}> [--name TEXT] [--per-minute N --per-day N] [--expires-in DURATION | --expires-at TIME] [--scopes LIST] [--json]`,
    help: () => `Issue a key and print it once. Enterprise keys need both limits; other plans have fixed ones.
  --expires-in 90d          The key stops working after this long (units: s, m, h, d).
  --expires-at TIME         ... or at this RFC 3339 time with an offset, e.g. 2027-03-01T00:00:00Z.
  --scopes LIST             Restrict the key to these scopes, comma-separated, e.g.
                            orders:read,orders:cancel. Without it the key has every scope (${EVERY_SCOPE}),
                            those added later included, but ${KEYS_ADMIN}, granted only by name
                            (--scopes '${EVERY_SCOPE},${KEYS_ADMIN}': every scope and the admin API).
  --json                    One JSON object: {id, key, name, prefix, plan, perMinute, perDay,
                            createdAt, expiresAt, familyId, scopes}.

Scopes:
${knownScopes()
  .map(({ name, description }) => `  ${name.padEnd(24)}  ${description}`.trimEnd())
  .join('\n')}`,
    options: [
      'plan',
      'name',
      'per-minute',
      'per-day',
      'expires-in',
      'expires-at',
      'scopes',
      'json',
    ],
  },
  list: {
    synopsis: 'list [--json]',
    help: `Every key: short id, name, prefix, plan, limits, status, created, last used, expires.
  --json                    A JSON array, one object per key, full ids and ISO 8601 times.`,
    options: ['json'],
  },
  show: {
    synopsis: 'show <id> [--json]',
    help: `One key in full, with the other keys of its rotation family.`,
    options: ['json'],
  },
  rotate: {
    synopsis: 'rotate <id> [--grace DURATION] [--expires-in DURATION | --expires-at TIME] [--json]',
    help: `Issue a replacement key (same name, plan and limits) and print it once. The old key keeps
working for the grace period, then is refused as expired. The two share one rate-limit budget
and one ban. The new key does not expire unless --expires-in or --expires-at says so.
  --grace 24h               How long the old key keeps working (default 24h; 0 ends it now).
  --json                    One JSON object: the new key as create prints it, plus
                            {rotated: {id, expiresAt}} for the old one.`,
    options: ['grace', 'expires-in', 'expires-at', 'json'],
  },
  revoke: {
    synopsis: 'revoke <id>',
    help: `Stop a key working: refused on every instance at once (within 5 seconds at worst).
Revoking a revoked key changes nothing.`,
    options: [],
  },
  unban: {
    synopsis: 'unban <id>',
    help: `Lift a rate-limit ban from a key (and the other keys of its rotation family): on every
instance at once (within 5 seconds at worst). Unbanning a key that is not banned changes nothing.`,
    options: [],
  },
  audit: {
    synopsis:
      'audit [--action ACTION] [--actor ACTOR] [--target TARGET] [--limit N] [--cursor CURSOR] [--json]',
    help: `The audit trail, newest first: every change to a key and every cancelled order, with who
made it and the request's id. A page at a time; the next cursor is printed when there are more.
  --action ACTION           One of ${AUDIT_ACTIONS.join(', ')}.
  --actor ACTOR             Exactly this actor: key:<key id> or cli:<OS user>.
  --target TARGET           Exactly this target: key:<key id> or order:<order id>.
  --limit N                 Events per page, 1 to ${MAX_AUDIT_PAGE_SIZE} (default ${DEFAULT_AUDIT_PAGE_SIZE}).
  --cursor CURSOR           The page after the one that printed this cursor (same filters).
  --json                    One JSON object: {data: [{id, at, actor, action, target, requestId}],
                            hasMore, nextCursor}.`,
    options: ['action', 'actor', 'target', 'limit', 'cursor', 'json'],
  },
};

export const USAGE = `Usage: npm run keys -- <command> [options]

Commands:
${COMMAND_NAMES.map((name) => `  ${COMMANDS[name].synopsis}`).join('\n')}

An <id> is a key's id or its short id: any unique prefix of at least 4 characters (list shows 8).
Times are shown relative to now ("3 minutes ago", "in 89 days"); --json gives them in ISO 8601.
Run \`npm run keys -- <command> --help\` for a command's options; --version prints the version.
`;

/** The help of one command. */
export function usageOf(name: CommandName): string {
  const { synopsis, help } = COMMANDS[name];
  return `Usage: npm run keys -- ${synopsis}\n\n${typeof help === 'string' ? help : help()}\n`;
}

/** Bad arguments: nothing was done. Names the command whose usage to show, when known. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: CommandName,
  ) {
    super(message);
  }
}

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
  | { name: 'audit'; query: AuditQuery; json: boolean }
  | { name: 'help'; command?: CommandName }
  | { name: 'version' };

/** Default grace period of `rotate`: the old key keeps working for a day. */
export const DEFAULT_GRACE_MS = 24 * 3_600_000;

export function parseCommand(argv: string[]): Command {
  const first = argv.find((arg) => !arg.startsWith('-'));
  const named = isCommandName(first) ? first : undefined;
  if (argv.includes('--help') || argv.includes('-h')) return { name: 'help', command: named };
  if (argv.includes('--version')) return { name: 'version' };

  let parsed;
  try {
    parsed = parseOptions(argv);
  } catch (error) {
    throw new UsageError(parseArgsMessage(error), named);
  }
  const { values, positionals } = parsed;
  const name = positionals.at(0);
  const rest = positionals.slice(1);
  if (name === undefined) throw new UsageError('a command is needed');
  if (!isCommandName(name)) throw new UsageError(`unknown command "${name}"`);
  const given = Object.entries(values)
    .filter(([, value]) => typeof value === 'string' || value)
    .map(([option]) => option);
  const extra = given.filter((option) => !COMMANDS[name].options.includes(option));
  if (extra.length > 0) {
    throw new UsageError(`${name} does not take ${extra.map((o) => `--${o}`).join(', ')}`, name);
  }
  try {
    return commandOf(name, values, rest);
  } catch (error) {
    // The helpers below do not know the command: name it, so its usage is the one shown.
    if (error instanceof UsageError && !error.command) throw new UsageError(error.message, name);
    throw error;
  }
}

type Values = ReturnType<typeof parseOptions>['values'];

function parseOptions(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      plan: { type: 'string' },
      name: { type: 'string' },
      'per-minute': { type: 'string' },
      'per-day': { type: 'string' },
      'expires-in': { type: 'string' },
      'expires-at': { type: 'string' },
      grace: { type: 'string' },
      scopes: { type: 'string' },
      action: { type: 'string' },
      actor: { type: 'string' },
      target: { type: 'string' },
      limit: { type: 'string' },
      cursor: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
}

function commandOf(name: CommandName, values: Values, rest: string[]): Command {
  const oneId = (): string => {
    if (rest.length !== 1) throw new UsageError(`${name} takes exactly one key id`);
    return rest[0];
  };

  switch (name) {
    case 'create': {
      if (rest.length > 0)
        throw new UsageError(`create takes no arguments, got: ${rest.join(' ')}`, name);
      const plan = values.plan;
      if (plan === undefined) throw new UsageError('create needs --plan', name);
      if (!isPlan(plan))
        throw new UsageError(`--plan must be one of ${PLANS.join(', ')}; got "${plan}"`, name);
      const perMinute = values['per-minute'];
      const perDay = values['per-day'];
      const limits =
        perMinute !== undefined || perDay !== undefined
          ? { perMinute: optionalNumber(perMinute), perDay: optionalNumber(perDay) }
          : undefined;
      const problem = planLimitsProblem(plan, limits);
      if (problem !== undefined) throw new UsageError(problem);
      return {
        name,
        plan,
        label: nameOption(values.name),
        limits: limits as RateLimits | undefined,
        expiry: expiryOf(values['expires-in'], values['expires-at']),
        scopes: scopesOption(values.scopes),
        json: values.json,
      };
    }
    case 'list':
      if (rest.length > 0)
        throw new UsageError(`list takes no arguments, got: ${rest.join(' ')}`, name);
      return { name, json: values.json };
    case 'show':
      return { name, id: oneId(), json: values.json };
    case 'rotate':
      return {
        name,
        id: oneId(),
        graceMs:
          values.grace === undefined ? DEFAULT_GRACE_MS : duration('--grace', values.grace, true),
        expiry: expiryOf(values['expires-in'], values['expires-at']),
        json: values.json,
      };
    case 'revoke':
    case 'unban':
      return { name, id: oneId() };
    case 'audit':
      if (rest.length > 0)
        throw new UsageError(`audit takes no arguments, got: ${rest.join(' ')}`, name);
      return { name, query: auditQueryOf(values), json: values.json };
  }
}

function auditQueryOf(values: Values): AuditQuery {
  const { action, actor, target, limit, cursor } = values;
  if (action !== undefined && !isAuditAction(action)) {
    throw new UsageError(`--action must be one of ${AUDIT_ACTIONS.join(', ')}; got "${action}"`);
  }
  const size = limit === undefined ? undefined : optionalNumber(limit);
  if (size !== undefined && !(size >= 1 && size <= MAX_AUDIT_PAGE_SIZE)) {
    throw new UsageError(
      `--limit must be a whole number from 1 to ${MAX_AUDIT_PAGE_SIZE}; got "${limit ?? ''}"`,
    );
  }
  for (const [option, value] of Object.entries({ actor, target, cursor })) {
    if (value === '') throw new UsageError(`--${option} needs a value`);
  }
  return { action, actor, target, limit: size, cursor };
}

/** When a key made now with this expiry stops working. */
export function expiryDate(expiry: Expiry, now = Date.now()): Date {
  return 'at' in expiry ? expiry.at : new Date(now + expiry.inMs);
}

function isCommandName(value: string | undefined): value is CommandName {
  return (COMMAND_NAMES as readonly (string | undefined)[]).includes(value);
}

/** Our words for `parseArgs`' errors, whose text speaks of its own internals. */
function parseArgsMessage(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  const option = /'(-[^' ]*)/.exec(message ?? '')?.[1] ?? 'an option';
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${option}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return `${option} needs a value`;
    default:
      return message ?? String(error);
  }
}

function expiryOf(expiresIn?: string, expiresAt?: string): Expiry | undefined {
  if (expiresIn !== undefined && expiresAt !== undefined) {
    throw new UsageError('give --expires-in or --expires-at, not both');
  }
  if (expiresIn !== undefined) return { inMs: duration('--expires-in', expiresIn, false) };
  if (expiresAt !== undefined) return { at: rfc3339('--expires-at', expiresAt) };
  return undefined;
}

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** Longer than any key should live; keeps every computed date valid. */
const MAX_DURATION_MS = 36_500 * UNIT_MS.d;

/** `90d`, `24h`, `15m`, `30s` (and `0` where zero is allowed). */
export function duration(option: string, value: string, zeroAllowed: boolean): number {
  const match = /^([0-9]+)([smhd])$/.exec(value) ?? (value === '0' ? ['0', '0', 's'] : null);
  const ms = match ? Number(match[1]) * UNIT_MS[match[2]] : NaN;
  if (!(ms <= MAX_DURATION_MS) || (ms === 0 && !zeroAllowed)) {
    throw new UsageError(
      `${option} must be a ${zeroAllowed ? '' : 'positive '}number followed by s, m, h or d (e.g. 90d, 24h); got "${value}"`,
    );
  }
  return ms;
}

/**
 * An RFC 3339 date-time with its offset (`Z` or `±hh:mm`), as a real calendar time; a space may
 * stand for the `T`.
 */
export function rfc3339(option: string, value: string): Date {
  const instant = parseRfc3339(value, { spaceSeparator: true });
  if (instant === undefined) {
    throw new UsageError(
      `${option} must be an RFC 3339 time with an offset, e.g. 2027-03-01T00:00:00Z; got "${value}"`,
    );
  }
  return new Date(instant);
}

/**
 * `--scopes a:b,c:d`: each a scope a feature declares, or `*`. Checked here, with the same rule
 * the store applies, so that a wrong one is a usage error.
 */
function scopesOption(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const scopes = value
    .split(',')
    .map((scope) => scope.trim())
    .filter((scope) => scope !== '');
  const problem = scopesProblem(scopes);
  if (problem !== undefined) throw new UsageError(`--scopes: ${problem}`);
  return scopes;
}

/** `--name`: any text a terminal shows as it is (a name is printed by list, show, rotate). */
function nameOption(value: string | undefined): string | undefined {
  if (value !== undefined && hasControlCharacter(value)) {
    throw new UsageError(
      `--name must not contain control characters or bidirectional overrides; got "${printable(value)}"`,
    );
  }
  return value;
}

/** A decimal count as given on the command line; anything else is NaN (refused as a limit). */
function optionalNumber(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  return /^[0-9]+$/.test(value) ? Number(value) : NaN;
}
