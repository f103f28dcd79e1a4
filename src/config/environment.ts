import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { declaredSettings, InvalidEnvironmentError } from './settings';

export { InvalidEnvironmentError } from './settings';

/** The source tree (`src/` run from TypeScript, `dist/` once built): where modules live. */
const MODULES_ROOT = join(__dirname, '..');

/** A module's settings file, `src/<module>/<name>.settings.ts` (`.js` once built). */
const SETTINGS_FILE = /\.settings\.(ts|js)$/;

/**
 * Loads every module's `*.settings.ts` under src/, so that each `defineSettings` declares its
 * namespace: start-up, the tools and the docs know every variable without the application (whose
 * modules import them) and without a list kept here. Found by their place in the module's
 * folder, as entities and migrations are.
 */
export function loadSettingsDeclarations(root: string = MODULES_ROOT): void {
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => SETTINGS_FILE.test(file))
    .sort();
  for (const file of files) {
    // Loaded for what it declares.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require(join(root, file));
  }
}

/** Every declared variable, the service's modules' and any other loaded (a test's fixture). */
export function environmentVariableNames(): string[] {
  loadSettingsDeclarations();
  return declaredSettings().flatMap((d) => Object.keys(d.settings));
}

/**
 * Validates every declared namespace at once (each problem naming its variable), before anything
 * starts; returns each namespace's values. Everything else in the environment is ignored.
 */
export function validateEnvironment(
  env: Record<string, unknown>,
): Record<string, Record<string, unknown>> {
  loadSettingsDeclarations();
  const problems = declaredSettings().flatMap((d) => d.problems(env));
  if (problems.length > 0) throw new InvalidEnvironmentError(problems);
  return Object.fromEntries(
    declaredSettings().map((d) => [d.namespace, d.read(env) as Record<string, unknown>]),
  );
}
