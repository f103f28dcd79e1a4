import { Injectable, RequestMethod, type Type, VERSION_NEUTRAL } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, VERSION_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { match, type MatchFunction } from 'path-to-regexp';
import { API_VERSIONING, versionPrefix } from './versioning';

/** One route the application serves, as Nest mounts it. */
export interface ServedRoute {
  /** `GET`, `DELETE` ... */
  method: string;
  /** The Express path: `/v1/store/orders/:orderId`. */
  path: string;
  /** The API version it belongs to; undefined for version-neutral routes (health). */
  version?: string;
  controller: Type;
  handler: string;
}

type Version = string | typeof VERSION_NEUTRAL;

/**
 * Every route of every controller, read once at start from Nest's public discovery API
 * (controllers, their methods, and the path, method and version metadata their decorators set),
 * composed the way URI versioning mounts them. Used where Express has no answer of its own: which
 * methods a path takes (the `Allow` of a 405), and which routes each version's OpenAPI document
 * must hold. Routes mounted outside Nest's controllers (Swagger UI) are added by whoever mounts
 * them ({@link RouteTable.addMounted}), for the `Allow` only; global prefixes or RouterModule paths, which this service does not use.
 */
@Injectable()
export class RouteTable {
  private table?: { route: ServedRoute; matches: MatchFunction<object> }[];
  private readonly mounted: { method: string; matches: MatchFunction<object> }[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  /**
   * Read from the decorators on first use: once the modules are assembled, which is before
   * `init()` (the OpenAPI documents are built then).
   */
  private get entries(): { route: ServedRoute; matches: MatchFunction<object> }[] {
    this.table ??= this.discovery
      .getControllers()
      .flatMap((wrapper) => {
        const controller = wrapper.metatype as Type | null;
        return controller ? routesOf(controller, this.scanner) : [];
      })
      // Case-sensitive, as Express's router is set to be (createHttpAdapter): `/V1/...` is
      // an unknown path (404), not a known one with another method (405).
      .map((route) => ({
        route,
        matches: match(route.path, { decode: false, sensitive: true }),
      }));
    return this.table;
  }

  get routes(): readonly ServedRoute[] {
    return this.entries.map((entry) => entry.route);
  }

  /** Each route with its path's matcher (Express's own matching, case-sensitive). */
  get matchers(): readonly (ServedRoute & { matches: MatchFunction<object> })[] {
    return this.entries.map(({ route, matches }) => ({ ...route, matches }));
  }

  /**
   * A route mounted on the HTTP adapter outside Nest's controllers (the OpenAPI documents, Swagger
   * UI), so that another method on its path is answered 405 like on any other known path.
   */
  addMounted(method: string, path: string): void {
    this.mounted.push({ method, matches: match(path, { decode: false }) });
  }

  /**
   * The methods the routes accept on this path, sorted (`HEAD` with `GET`, as Express answers
   * it); empty for a path no route has. Only asked on the error path.
   */
  allowedMethods(path: string): string[] {
    const methods = new Set<string>();
    const candidates = [
      ...this.entries.map(({ route, matches }) => ({ method: route.method, matches })),
      ...this.mounted,
    ];
    for (const { method, matches } of candidates) {
      if (!matches(path)) continue;
      methods.add(method);
      if (method === 'GET') methods.add('HEAD');
    }
    return [...methods].sort();
  }
}

function routesOf(controller: Type, scanner: MetadataScanner): ServedRoute[] {
  const prototype = controller.prototype as Record<string, unknown>;
  const controllerPaths = asList(
    (Reflect.getMetadata(PATH_METADATA, controller) as string | string[] | undefined) ?? '/',
  );
  const controllerVersion = Reflect.getMetadata(VERSION_METADATA, controller) as
    Version | Version[] | undefined;
  return scanner.getAllMethodNames(prototype).flatMap((handler) => {
    const target = prototype[handler] as object;
    const requestMethod = Reflect.getMetadata(METHOD_METADATA, target) as RequestMethod | undefined;
    const handlerPaths = Reflect.getMetadata(PATH_METADATA, target) as
      string | string[] | undefined;
    if (requestMethod === undefined || handlerPaths === undefined) return [];
    const method = RequestMethod[requestMethod];
    const versions = asList<Version>(
      (Reflect.getMetadata(VERSION_METADATA, target) as Version | Version[] | undefined) ??
        controllerVersion ??
        API_VERSIONING.defaultVersion,
    );
    return versions.flatMap((version) =>
      controllerPaths.flatMap((controllerPath) =>
        asList(handlerPaths).map((handlerPath) => ({
          method,
          path: joinPath(
            version === VERSION_NEUTRAL ? '' : versionPrefix(version),
            controllerPath,
            handlerPath,
          ),
          version: version === VERSION_NEUTRAL ? undefined : version,
          controller,
          handler,
        })),
      ),
    );
  });
}

function asList<T>(value: T | T[]): T[] {
  return Array.isArray(value) ? value : [value];
}

function joinPath(...parts: string[]): string {
  const path = parts
    .map((part) => part.replace(/^\/+|\/+$/g, ''))
    .filter((part) => part !== '')
    .join('/');
  return `/${path}`;
}
