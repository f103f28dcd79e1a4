import type { InjectionToken, Type } from '@nestjs/common';
import { loadDeclarations } from '../config/declarations';

/**
 * A module's routes on the admin API, declared in its own folder (`<module>.admin.ts`): the
 * controllers, and the providers of the API application they call (the admin application is a
 * Nest application of its own: it shares the API's instances rather than building its own).
 */
export interface AdminRoutes {
  readonly controllers: Type[];
  readonly fromApi: InjectionToken[];
}

const declared: AdminRoutes[] = [];

/**
 * Declares a module's admin routes; the admin application serves them when the module is loaded
 * by the API application (its providers are there), found by the file's name as settings are.
 *
 * ```ts
 * // src/pets/pets.admin.ts
 * export const PetsAdmin = defineAdminRoutes({
 *   controllers: [AdminPetsController],
 *   fromApi: [PetsService],
 * });
 * ```
 */
export function defineAdminRoutes(routes: AdminRoutes): AdminRoutes {
  declared.push(routes);
  return routes;
}

/** Every module's admin routes, in the order of their files' paths. */
export function declaredAdminRoutes(): readonly AdminRoutes[] {
  loadDeclarations('admin');
  return declared;
}
