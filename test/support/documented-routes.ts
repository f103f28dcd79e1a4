import type { Server } from 'node:http';
import request from 'supertest';
import type { ServedRoute } from '../../src/common/http/route-table';
import { versionPrefix } from '../../src/common/http/versioning';

interface VersionDocument {
  paths: Record<string, Record<string, unknown>>;
}

/**
 * Every route served under a version is an operation of that version's document: none is served
 * undocumented, whatever module it comes from. Asserted route by route, so the failure names it.
 */
export function expectEveryVersionedRouteDocumented(
  routes: readonly ServedRoute[],
  documents: ReadonlyMap<string, VersionDocument>,
): void {
  const versioned = routes.filter((route) => route.version !== undefined);
  expect(versioned.length).toBeGreaterThan(0);
  for (const route of versioned) {
    const version = route.version ?? '';
    const path = route.path.slice(versionPrefix(version).length).replace(/:(\w+)/g, '{$1}');
    const where = `${route.method} ${route.path} (${route.controller.name}.${route.handler})`;
    const document = documents.get(version);
    expect({ where, document: document !== undefined }).toEqual({ where, document: true });
    const operation = document?.paths[path]?.[route.method.toLowerCase()];
    expect({ where, documented: operation !== undefined }).toEqual({ where, documented: true });
  }
}

/** The document each version of the routes is served with, as served (`/openapi/vN.json`). */
export async function servedVersionDocuments(
  http: Server,
  routes: readonly ServedRoute[],
): Promise<Map<string, VersionDocument>> {
  const versions = [...new Set(routes.flatMap((route) => route.version ?? []))];
  const documents = new Map<string, VersionDocument>();
  for (const version of versions) {
    const res = await request(http).get(`/openapi/v${version}.json`);
    if (res.status === 200) documents.set(version, res.body as VersionDocument);
  }
  return documents;
}
