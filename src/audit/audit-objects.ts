import type { DataSource } from 'typeorm';

/**
 * What an event is about, as its consumers see it: the module that declares a subject's audit
 * actions declares, beside them, how the records of that subject read (`order:<id>` an Order as
 * v1 serves it, `key:<id>` a Key as the admin API shows it). A consumer asks for the objects of
 * the events' targets and never imports the module that emitted them.
 */
export type ObjectsReader = (
  ids: readonly string[],
  db: DataSource,
) => Promise<Map<string, string>>;

const readers = new Map<string, ObjectsReader>();

/**
 * Declares how the records of `subject` (the part of a target before its colon) read, by id,
 * many at once, each as its JSON text: an id with no record is left out of the map.
 *
 * ```ts
 * // src/pets/pet.audit.ts
 * defineEventObjects('pet', async (ids, db) =>
 *   new Map((await readPets(db, ids)).map((pet) => [pet.id, JSON.stringify(pet)])),
 * );
 * ```
 */
export function defineEventObjects(subject: string, read: ObjectsReader): void {
  if (readers.has(subject) && readers.get(subject) !== read) {
    throw new Error(`The objects of ${subject} are already declared`);
  }
  readers.set(subject, read);
}

/** A target `<subject>:<id>` split in two. */
export function subjectOf(target: string): [subject: string, id: string] {
  const colon = target.indexOf(':');
  return colon < 0 ? [target, ''] : [target.slice(0, colon), target.slice(colon + 1)];
}

/**
 * The objects of `targets` (JSON text), by target, as their subjects declare them, each subject
 * read once; a target with no declared subject or no record is `{"id": "<target>"}`.
 */
export async function eventObjectsOf(
  targets: readonly string[],
  db: DataSource,
): Promise<Map<string, string>> {
  const bySubject = new Map<string, Set<string>>();
  for (const target of targets) {
    const [subject, id] = subjectOf(target);
    if (!readers.has(subject)) continue;
    const ids = bySubject.get(subject) ?? new Set<string>();
    ids.add(id);
    bySubject.set(subject, ids);
  }
  const objects = new Map<string, string>();
  for (const [subject, ids] of bySubject) {
    const read = readers.get(subject) as ObjectsReader;
    for (const [id, object] of await read([...ids], db)) objects.set(`${subject}:${id}`, object);
  }
  for (const target of targets) {
    if (!objects.has(target)) objects.set(target, JSON.stringify({ id: target }));
  }
  return objects;
}
