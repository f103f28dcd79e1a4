import { SetMetadata, type Type } from '@nestjs/common';
import { readRoute, type RouteDecorators } from '../common/http/route-metadata';

/**
 * Scopes: what a key may do, `<resource>:<action>` in lower case. A route that needs one says so
 * with `@RequireScope()`; a key without it is answered 403 `INSUFFICIENT_SCOPE`.
 *
 * Each feature declares its scopes in its own folder, in a `*.scopes.ts` file, with
 * {@link defineScopes}: the application knows them because the feature's controllers import them,
 * and the `keys` tool, which runs without the application, finds them by that file name
 * (`cli/module-declarations.ts`), so that it can issue keys restricted to them. A route naming a
 * scope that no module declares stops the start ({@link undeclaredScopeProblem}).
 */

/**
 * In a key's scopes: every scope, those modules add later included, except the administrative
 * ones ({@link KEYS_ADMIN} and any declared `byNameOnly`).
 */
export const EVERY_SCOPE = '*';

/** What a key issued without scopes has (stored as NULL, as are the keys older than scopes). */
export const DEFAULT_SCOPES: readonly string[] = Object.freeze([EVERY_SCOPE]);

const SCOPE_NAME = /^[a-z][a-z0-9_-]*:[a-z][a-z0-9_-]*$/;

/** Every scope declared so far, with what it grants. */
const registry = new Map<string, string>();

/** The scopes a key has only when granted by name: `*` never includes them. */
const byNameOnly = new Set<string>();

function checkedName(name: string, by: string): string {
  if (!SCOPE_NAME.test(name)) {
    throw new Error(`${by}: "${name}" is not a scope: <resource>:<action>, in lower case`);
  }
  return name;
}

/**
 * Declares a feature's scopes, each with what it grants (shown by `keys create --help`), and
 * returns their names, for `@RequireScope()`:
 *
 * ```ts
 * // src/pets/pet.scopes.ts
 * export const PetScopes = defineScopes({
 *   READ: { name: 'pets:read', description: 'Read the pets' },
 * });
 * // src/pets/pets.controller.ts
 * @RequireScope(PetScopes.READ)
 * ```
 *
 * A name is one meaning: declaring it twice with another description is refused when the file
 * is loaded.
 */
export function defineScopes<K extends string>(
  definitions: Record<K, { name: string; description: string; byNameOnly?: boolean }>,
): { readonly [P in K]: string } {
  const names = {} as Record<K, string>;
  for (const key of Object.keys(definitions) as K[]) {
    const { name, description } = definitions[key];
    // An administrative scope (`byNameOnly`) is never part of `*`: a key has it only when granted.
    if (definitions[key].byNameOnly === true) byNameOnly.add(name);
    checkedName(name, 'defineScopes');
    const known = registry.get(name);
    if (known && known !== description) {
      throw new Error(`Scope ${name} is already declared with another description`);
    }
    registry.set(name, description);
    names[key] = name;
  }
  return Object.freeze(names);
}

/** The admin API's: held only by a key granted it by name, never by `*`. */
export const { ADMIN: KEYS_ADMIN } = defineScopes({
  ADMIN: {
    name: 'keys:admin',
    description: 'The admin API: issue, rotate, revoke and unban keys, read the audit trail',
    byNameOnly: true,
  },
});

const SCOPE_KEY = 'store-orders:required-scope';

/**
 * The scope a route needs, on the route or on its controller (the route's own wins). A key
 * without it is answered 403 `INSUFFICIENT_SCOPE`, after authentication (401) and after the
 * request has counted against the key's rate limits. The operation shows it in its OpenAPI
 * document (`x-required-scopes`, its description, the 403). A route without one needs only a
 * valid key.
 *
 * Declare the scope with {@link defineScopes} in the feature's `*.scopes.ts`, so that the keys
 * tool can grant it: a route naming a scope no module declares stops the application's start.
 */
export function RequireScope(scope: string): ClassDecorator & MethodDecorator {
  return SetMetadata(SCOPE_KEY, checkedName(scope, '@RequireScope'));
}

/**
 * What stops the start when a route needs a scope that no module declares (a typo, or a
 * `*.scopes.ts` file missing), naming the scope and the route; undefined when every scope a
 * route needs is declared.
 */
export function undeclaredScopeProblem(
  routes: readonly { method: string; path: string; controller: Type; handler: string }[],
): string | undefined {
  for (const route of routes) {
    const handler = (route.controller.prototype as Record<string, object>)[route.handler];
    const scope = requiredScopeOf(handler, route.controller);
    if (scope !== undefined && !registry.has(scope)) {
      return (
        `Route ${route.method} ${route.path} requires scope "${scope}", which no module declares: ` +
        `declare it with defineScopes() in the module's *.scopes.ts file`
      );
    }
  }
  return undefined;
}

/** The scope a route needs: its handler's, else its controller's; none: undefined. */
export const requiredScope = (route: RouteDecorators): string | undefined =>
  route.get(SCOPE_KEY) as string | undefined;

/** The scope one handler of a controller needs: its own, else its controller's; none: undefined. */
export function requiredScopeOf(handler: object, controller: Type): string | undefined {
  return readRoute(requiredScope, controller, handler);
}

/** Whether a key with these scopes may use a route that needs `scope`. */
export function grantsScope(scopes: readonly string[], scope: string): boolean {
  return scopes.includes(scope) || (!byNameOnly.has(scope) && scopes.includes(EVERY_SCOPE));
}

/** Every scope known to this process, by name, with what it grants. */
export function knownScopes(): { name: string; description: string }[] {
  return [...registry]
    .map(([name, description]) => ({ name, description }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * What is wrong with the scopes a key is to be issued with, or undefined: each must be known (or
 * `*`), and there must be at least one.
 */
export function scopesProblem(scopes: readonly string[]): string | undefined {
  if (scopes.length === 0) return `a key needs at least one scope (${EVERY_SCOPE}: every scope)`;
  const unknown = scopes.filter((scope) => scope !== EVERY_SCOPE && !registry.has(scope));
  if (unknown.length === 0) return undefined;
  const known = knownScopes()
    .map((scope) => scope.name)
    .join(', ');
  return `unknown scope ${unknown.map((s) => `"${s}"`).join(', ')}: the known scopes are ${known} (and ${EVERY_SCOPE})`;
}

/**
 * The scopes as the database keeps them: sorted, once each; NULL for every scope (`*` alone), as
 * for the keys that existed before scopes.
 */
export function storedScopes(scopes: readonly string[] | undefined): string[] | null {
  if (scopes === undefined) return null;
  const stored = [...new Set(scopes)].sort();
  return stored.length === 1 && stored[0] === EVERY_SCOPE ? null : stored;
}

/** A key's scopes from its row: NULL is every scope ({@link DEFAULT_SCOPES}). */
export function scopesOf(key: { scopes: readonly string[] | null }): readonly string[] {
  return key.scopes ?? DEFAULT_SCOPES;
}
