/** Arguments of the `keys` tool, parsed and checked before anything touches the database. */
import { parseArgs } from 'node:util';
import { isPlan, Plan, planLimitsProblem, PLANS, type RateLimits } from '../plans/plans';

export const USAGE = `Usage: npm run keys -- <command>

Commands:
  create --plan <${PLANS.join('|')}> [--name TEXT] [--per-minute N --per-day N] [--json]
      Issue a key and print it once. Enterprise keys need both limits; other plans have fixed ones.
      --json prints one JSON object: {id, key, name, prefix, plan, perMinute, perDay, createdAt}.
  list [--json]        Every key: id, name, prefix, plan, limits, created, revoked, banned until.
  revoke <id>          Stop a key working (on every instance within 10 seconds).
  unban <id>           Lift a rate-limit ban from a key.
`;

/** Bad arguments: nothing was done. */
export class UsageError extends Error {}

export type Command =
  | {
      name: 'create';
      plan: Plan;
      label?: string;
      limits?: RateLimits;
      json: boolean;
    }
  | { name: 'list'; json: boolean }
  | { name: 'revoke' | 'unban'; id: string };

export function parseCommand(argv: string[]): Command {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        plan: { type: 'string' },
        name: { type: 'string' },
        'per-minute': { type: 'string' },
        'per-day': { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  const name = positionals[0] as string | undefined;
  const rest = positionals.slice(1);
  const onlyFor = (command: string, allowed: string[]): void => {
    const extra = Object.entries(values)
      .filter(
        ([option, value]) => (typeof value === 'string' || value) && !allowed.includes(option),
      )
      .map(([option]) => `--${option}`);
    if (extra.length > 0) throw new UsageError(`${command} does not take ${extra.join(', ')}`);
  };

  switch (name) {
    case 'create': {
      onlyFor('create', ['plan', 'name', 'per-minute', 'per-day', 'json']);
      if (rest.length > 0)
        throw new UsageError(`create takes no arguments, got: ${rest.join(' ')}`);
      const plan = values.plan;
      if (plan === undefined) throw new UsageError('create needs --plan');
      if (!isPlan(plan))
        throw new UsageError(`--plan must be one of ${PLANS.join(', ')}; got "${plan}"`);
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
        label: values.name,
        limits: limits as RateLimits | undefined,
        json: values.json,
      };
    }
    case 'list':
      onlyFor('list', ['json']);
      if (rest.length > 0) throw new UsageError(`list takes no arguments, got: ${rest.join(' ')}`);
      return { name, json: values.json };
    case 'revoke':
    case 'unban':
      onlyFor(name, []);
      if (rest.length !== 1) throw new UsageError(`${name} takes exactly one key id`);
      return { name, id: rest[0] };
    case undefined:
      throw new UsageError('a command is needed');
    default:
      throw new UsageError(`unknown command "${name}"`);
  }
}

/** A decimal count as given on the command line; anything else is NaN (refused as a limit). */
function optionalNumber(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  return /^[0-9]+$/.test(value) ? Number(value) : NaN;
}
