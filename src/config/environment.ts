import { loadDeclarations, MODULES_ROOT } from './declarations';
import { declaredSettings, InvalidEnvironmentError } from './settings';

export { InvalidEnvironmentError } from './settings';

/**
 * Loads every module's `*.settings.ts` under src/, so that each `defineSettings` declares its
 * namespace: start-up, the tools and the docs know every variable without the application (whose
 * modules import them).
 */
export function loadSettingsDeclarations(root: string = MODULES_ROOT): void {
  loadDeclarations('settings', root);
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
