import {
  type ConfigFactory,
  type ConfigFactoryKeyHost,
  type ConfigObject,
  registerAs,
} from '@nestjs/config';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync } from 'class-validator';

/** A class whose properties are environment variables, with class-validator decorators. */
export type SettingsSchema<T extends object = object> = new () => T;

export class InvalidEnvironmentError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'InvalidEnvironmentError';
  }
}

/** Every module's settings declared so far, by namespace: what start-up validates and lists. */
const declarations = new Map<string, SettingsSchema>();

/**
 * The variables a schema reads: its properties that carry a class-validator decorator. The
 * schema is the one place a variable is named; no list is kept beside it.
 */
export function variablesOf(schema: SettingsSchema): string[] {
  return [
    ...new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(schema, '', true, false)
        .map((metadata) => metadata.propertyName),
    ),
  ];
}

/** The problems of one schema in this environment, each naming its variable (none: valid). */
export function settingsProblems<T extends object>(
  schema: SettingsSchema<T>,
  env: Record<string, unknown>,
): { settings: T; problems: string[] } {
  // Only the schema's own variables; empty strings count as unset, as in most deployment tools.
  const own: Record<string, unknown> = {};
  for (const name of variablesOf(schema)) {
    if (env[name] !== undefined && env[name] !== '') own[name] = env[name];
  }
  const settings = plainToInstance(schema, own);
  const errors = validateSync(settings, {
    skipMissingProperties: false,
    forbidUnknownValues: false,
  });
  const problems = errors.flatMap((e) =>
    Object.values(e.constraints ?? {}).length > 0
      ? [Object.values(e.constraints ?? {})[0]]
      : [`${e.property} is invalid`],
  );
  return { settings, problems };
}

/** One schema's settings from this environment; a bad value throws, naming its variable. */
export function validateSettings<T extends object>(
  schema: SettingsSchema<T>,
  env: Record<string, unknown>,
): T {
  const { settings, problems } = settingsProblems(schema, env);
  if (problems.length > 0) throw new InvalidEnvironmentError(problems);
  return settings;
}

/**
 * Declares a module's own settings, in its folder: a class-validator schema whose properties are
 * the environment variables, with their defaults. Returns `@nestjs/config`'s `registerAs`
 * namespace: the module imports `ConfigModule.forFeature(settings)` and injects
 * `@Inject(settings.KEY) settings: ConfigType<typeof settings>`. The variables are validated
 * with the service's own at start (`validateEnvironment`, before anything else starts), and
 * again when the module is created; a bad value stops the process with a message naming it.
 *
 * ```ts
 * class WidgetSettingsSchema {
 *   @Transform(toInt)
 *   @IsInt({ message: 'WIDGETS_PER_CRATE must be a positive integer' })
 *   @Min(1, { message: 'WIDGETS_PER_CRATE must be a positive integer' })
 *   WIDGETS_PER_CRATE: number = 12;
 * }
 * export const widgetSettings = defineSettings('widgets', WidgetSettingsSchema);
 * ```
 */
export function defineSettings<T extends ConfigObject>(
  namespace: string,
  schema: SettingsSchema<T>,
): ConfigFactory<T> & ConfigFactoryKeyHost<T> {
  const known = declarations.get(namespace);
  if (known && known !== schema) {
    throw new Error(`Settings namespace ${namespace} is already declared by ${known.name}`);
  }
  for (const [other, otherSchema] of declarations) {
    const shared = variablesOf(schema).filter((name) => variablesOf(otherSchema).includes(name));
    if (other !== namespace && shared.length > 0) {
      throw new Error(`${shared.join(', ')} already belongs to the ${other} settings`);
    }
  }
  declarations.set(namespace, schema);
  return registerAs(namespace, (): T => validateSettings(schema, process.env));
}

/** Every declared schema (the modules loaded so far), in the order of declaration. */
export function declaredSettings(): { namespace: string; schema: SettingsSchema }[] {
  return [...declarations].map(([namespace, schema]) => ({ namespace, schema }));
}

/** Transforms a decimal string into a number, leaving anything else for the validator to refuse. */
export const toInt = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value.trim()) : value;
