/**
 * The actions the audit trail records. Each module declares the actions of its own changes in its
 * folder, in a `*.audit.ts` file, with {@link defineAuditActions}: the trail, its filters, the
 * admin document and the keys tool know every action declared, and none is listed here.
 */

/** `<subject>.<past participle>` in lower case: `order.cancelled`, `key.created`. */
const ACTION_NAME = /^[a-z][a-z0-9_-]*\.[a-z][a-z0-9_-]*$/;

/** What each declared action means, by name, in the order declared. */
const registry = new Map<string, string>();
const names: string[] = [];

/**
 * Every action declared so far, in the order declared. The same array grows as modules declare
 * theirs, so a reader that keeps it (the admin document's enum) sees them all once the
 * application is assembled.
 */
export const AUDIT_ACTION_NAMES: readonly string[] = names;

/** An action's name, as the trail stores it. */
export type AuditAction = string;

/**
 * Declares a module's audit actions, each with what it records, and returns their names:
 *
 * ```ts
 * // src/pets/pet.audit.ts
 * export const PetAuditActions = defineAuditActions({
 *   ADOPTED: { name: 'pet.adopted', description: 'A pet was adopted' },
 * });
 * ```
 *
 * A name is one meaning: declaring it twice with another description is refused when the file
 * is loaded.
 */
export function defineAuditActions<K extends string>(
  definitions: Record<K, { name: string; description: string }>,
): { readonly [P in K]: AuditAction } {
  const declared = {} as Record<K, AuditAction>;
  for (const key of Object.keys(definitions) as K[]) {
    const { name, description } = definitions[key];
    if (!ACTION_NAME.test(name)) {
      throw new Error(
        `defineAuditActions: "${name}" is not an action: <subject>.<verb>, in lower case`,
      );
    }
    const known = registry.get(name);
    if (known !== undefined && known !== description) {
      throw new Error(`Audit action ${name} is already declared with another description`);
    }
    if (known === undefined) names.push(name);
    registry.set(name, description);
    declared[key] = name;
  }
  return Object.freeze(declared);
}

export function isAuditAction(value: string): boolean {
  return registry.has(value);
}

/** Every action declared so far, with what it records, in the order declared. */
export function auditActions(): { name: AuditAction; description: string }[] {
  return names.map((name) => ({ name, description: registry.get(name) ?? '' }));
}
