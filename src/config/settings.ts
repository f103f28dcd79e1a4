import { isIP } from 'node:net';
import { type ConfigFactory, type ConfigFactoryKeyHost, registerAs } from '@nestjs/config';
import { isURL } from 'class-validator';

export class InvalidEnvironmentError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'InvalidEnvironmentError';
  }
}

/**
 * How a variable's text becomes its typed value: the value, or what the text must be, which
 * becomes the message naming the variable ("PORT must be " + expected). Each rule's wording is
 * written here once, for every variable that uses it.
 */
export interface Rule<T> {
  parse(raw: string): { value: T } | { expected: string };
}

/** One environment variable of a module, declared in the module's own folder. */
export interface Setting<T> {
  rule: Rule<T>;
  /** Its value when unset or empty; none: the setting is `undefined` when unset. */
  default?: T;
  /** What it does, as docs/configuration.md shows it (`npm run generate`). */
  description: string;
  /** A secret (a password, a key): its value is never printed, its default included. */
  sensitive?: boolean;
}

type Declarations = Record<string, Setting<unknown>>;

/** The typed value of one declared setting: the rule's type, `undefined` too unless defaulted. */
type ValueOf<S> = S extends { rule: Rule<infer T> }
  ? S extends { default: unknown }
    ? T
    : T | undefined
  : never;

/** The typed values of a namespace, inferred from its declaration: no interface kept beside it. */
export type SettingsOf<D extends Declarations> = { [K in keyof D]: ValueOf<D[K]> };

/** A namespace as `@nestjs/config` knows it, plus what start-up, tools and the docs need. */
export type SettingsNamespace<V> = ConfigFactory<V & object> &
  ConfigFactoryKeyHost<V> & {
    namespace: string;
    settings: Readonly<Record<string, Setting<unknown>>>;
    /** The validated values of this environment, for code outside Nest (main.ts, tools). */
    read(env: Record<string, unknown>): V;
    /** Every problem of this environment, each naming its variable (none: valid). */
    problems(env: Record<string, unknown>): string[];
  };

interface Declared {
  namespace: string;
  settings: Readonly<Record<string, Setting<unknown>>>;
  problems(env: Record<string, unknown>): string[];
  read(env: Record<string, unknown>): unknown;
}

/** Every namespace declared so far (the modules loaded), in the order of declaration. */
const declarations = new Map<string, Declared>();

/**
 * Declares a module's own settings, in its folder (`<module>.settings.ts`): each variable with
 * its rule, default, description and whether it is a secret; `check` adds rules between them.
 * Returns `@nestjs/config`'s `registerAs` namespace: the module imports
 * `ConfigModule.forFeature(settings)` and injects
 * `@Inject(settings.KEY) settings: ConfigType<typeof settings>`; code outside Nest calls
 * `settings.read(process.env)` for the same typed object. Every declared namespace is
 * validated at start (`validateEnvironment`), and again when its module is created; a bad
 * value stops the process with a message naming it.
 *
 * ```ts
 * export const widgetSettings = defineSettings('widgets', {
 *   WIDGETS_PER_CRATE: {
 *     rule: integer({ min: 1, max: 144 }),
 *     default: 12,
 *     description: 'widgets packed in one crate',
 *   },
 * });
 * ```
 */
export function defineSettings<D extends Declarations>(
  namespace: string,
  settings: D,
  check: (values: SettingsOf<D>) => string[] = () => [],
): SettingsNamespace<SettingsOf<D>> {
  const names = Object.keys(settings);
  const known = declarations.get(namespace);
  if (known && Object.keys(known.settings).join() !== names.join()) {
    throw new Error(`Settings namespace ${namespace} is already declared`);
  }
  for (const other of declarations.values()) {
    if (other.namespace === namespace) continue;
    const shared = names.filter((name) => name in other.settings);
    if (shared.length > 0) {
      throw new Error(`${shared.join(', ')} already belongs to the ${other.namespace} settings`);
    }
  }
  const parsed = (env: Record<string, unknown>) => {
    const values: Record<string, unknown> = {};
    const problems: string[] = [];
    for (const name of names) {
      const setting = settings[name];
      const raw = env[name];
      // Empty strings count as unset, as in most deployment tools.
      if (typeof raw !== 'string' || raw === '') {
        values[name] = setting.default;
        continue;
      }
      const result = setting.rule.parse(raw);
      if ('value' in result) values[name] = result.value;
      else problems.push(`${name} must be ${result.expected}`);
    }
    if (problems.length === 0) problems.push(...check(values as SettingsOf<D>));
    return { values: values as SettingsOf<D>, problems };
  };
  const read = (env: Record<string, unknown>): SettingsOf<D> => {
    const { values, problems } = parsed(env);
    if (problems.length > 0) throw new InvalidEnvironmentError(problems);
    return values;
  };
  const problems = (env: Record<string, unknown>): string[] => parsed(env).problems;
  declarations.set(namespace, { namespace, settings, problems, read });
  return Object.assign(
    registerAs(namespace, () => read(process.env)),
    { namespace, settings, read, problems },
  );
}

/** Every declared namespace (the modules loaded so far), in the order of declaration. */
export function declaredSettings(): readonly Declared[] {
  return [...declarations.values()];
}

/** A whole number, as written in decimal digits; `min` and `max` inclusive. */
export function integer({ min, max }: { min?: number; max?: number } = {}): Rule<number> {
  const expected =
    min !== undefined && max !== undefined
      ? `an integer between ${min} and ${max}`
      : min === 1
        ? 'a positive integer'
        : min === 0
          ? 'a non-negative integer'
          : min !== undefined
            ? `an integer of at least ${min}`
            : 'an integer';
  return {
    parse(raw) {
      const value = Number(raw.trim());
      const fits =
        /^\d+$/.test(raw.trim()) && !(value < (min ?? 0)) && !(value > (max ?? Infinity));
      return fits ? { value } : { expected };
    },
  };
}

/** An absolute URL of one of `protocols` (a host without a top-level domain allowed). */
export function url({ protocols }: { protocols: string[] }): Rule<string> {
  const schemes = protocols.map((p) => `${p}://`).join(' or ');
  const expected = `${/^[aeiouh]/.test(protocols[0]) ? 'an' : 'a'} ${schemes} URL`;
  return {
    parse: (raw) =>
      isURL(raw, { protocols, require_tld: false, require_protocol: true })
        ? { value: raw }
        : { expected },
  };
}

/** One of a few words. */
export function oneOf<const T extends string>(values: readonly T[]): Rule<T> {
  const expected =
    values.length === 2 ? `${values[0]} or ${values[1]}` : `one of ${values.join(', ')}`;
  return {
    parse: (raw) =>
      (values as readonly string[]).includes(raw) ? { value: raw as T } : { expected },
  };
}

/** An IPv4 or IPv6 address; `examples` completes the message. */
export function ip({ examples }: { examples: string[] }): Rule<string> {
  const expected = `an IP address, e.g. ${examples.slice(0, -1).join(', ')}${
    examples.length > 1 ? ' or ' : ''
  }${examples[examples.length - 1]}`;
  return { parse: (raw) => (isIP(raw) !== 0 ? { value: raw } : { expected }) };
}

/** Text matching `re`; `what` says what that is, for the message. */
export function pattern(re: RegExp, what: string): Rule<string> {
  return { parse: (raw) => (re.test(raw) ? { value: raw } : { expected: what }) };
}

/** Any text. */
export function text(): Rule<string> {
  return { parse: (raw) => ({ value: raw }) };
}
