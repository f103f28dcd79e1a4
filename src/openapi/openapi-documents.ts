import type { INestApplication } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { registeredErrorCodes } from '../common/errors/error-code';
import { RouteTable } from '../common/http/route-table';
import { versionPrefix } from '../common/http/versioning';
import type { OpenApiSettings } from './openapi.settings';
import { describeApiLifecycle } from './api-lifecycle.openapi';
import { ApiTagDefinition } from './api-tag.decorator';
import { type ApiDocumentInfo, ApiVersionDocument } from './api-version-document.decorator';
import { BEARER_DESCRIPTION, errorCodeDescription } from './document-text';
import { describeRequiredScopes } from './required-scopes.openapi';
import { describeRouteThrottles } from './route-throttle.openapi';
import { versionedServerUrl } from './server-url';

/** The name of the bearer security scheme in the document. */
export const BEARER_SCHEME = 'bearer';

/**
 * One OpenAPI document per API version, generated from the controllers' decorators and the
 * schema classes. Nest's URI versioning puts `/vN` in every route; a version's document keeps it
 * in the servers instead (`https://api.example.com/v1`) and its paths relative to them
 * (`/store/orders`), as the specification writes them. Its tags are those of the controllers
 * served in that version. Routes outside every version (health) are in none.
 */
export function createOpenApiDocuments(
  app: INestApplication,
  settings: OpenApiSettings,
): Map<string, OpenAPIObject> {
  const routes = app.get(RouteTable).routes;
  const versions = [...new Set(routes.flatMap((route) => route.version ?? []))].sort();
  const discovery = app.get(DiscoveryService);
  const tagged = discovery.getControllers({ metadataKey: ApiTagDefinition.KEY });
  const declared = declaredDocuments(discovery);

  const documents = new Map(
    versions.map((version) => {
      const info = declared.get(version);
      if (!info) {
        throw new Error(
          `Routes are served under ${versionPrefix(version)} but no controller declares the v${version} document (@ApiVersionDocument)`,
        );
      }
      const builder = new DocumentBuilder().setTitle(info.title).setVersion(info.version);
      const seen = new Set<string>();
      for (const wrapper of tagged) {
        const tag = discovery.getMetadataByDecorator(ApiTagDefinition, wrapper);
        const servedHere = routes.some(
          (route) => route.controller === wrapper.metatype && route.version === version,
        );
        if (tag && servedHere && !seen.has(tag.name)) {
          seen.add(tag.name);
          builder.addTag(tag.name, tag.description);
        }
      }
      builder
        .addBearerAuth(
          {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'API key',
            description: BEARER_DESCRIPTION,
          },
          BEARER_SCHEME,
        )
        .addSecurityRequirements(BEARER_SCHEME);
      if (settings.PUBLIC_BASE_URL !== undefined) {
        builder.addServer(versionedServerUrl(settings.PUBLIC_BASE_URL, version), 'Production');
      }
      if (settings.STAGING_BASE_URL !== undefined) {
        builder.addServer(versionedServerUrl(settings.STAGING_BASE_URL, version), 'Staging');
      }
      const document = SwaggerModule.createDocument(app, builder.build());
      // Scopes first: the 403 they add is a response of the operation like the others.
      describeRequiredScopes(document, routes, version);
      describeApiLifecycle(document, routes, version);
      describeRouteThrottles(document, routes, version);
      return [version, versionDocument(document, version)];
    }),
  );
  describeErrorCodes(documents, declared);
  return documents;
}

/** The documents the controllers declare (@ApiVersionDocument), by API version. */
export function declaredDocuments(discovery: DiscoveryService): Map<string, ApiDocumentInfo> {
  const documents = new Map<string, ApiDocumentInfo>();
  for (const wrapper of discovery.getControllers({ metadataKey: ApiVersionDocument.KEY })) {
    const declaration = discovery.getMetadataByDecorator(ApiVersionDocument, wrapper);
    if (!declaration) continue;
    const { apiVersion, ...info } = declaration;
    const known = documents.get(apiVersion);
    if (known && (known.title !== info.title || known.version !== info.version)) {
      throw new Error(`Two controllers declare different v${apiVersion} documents`);
    }
    documents.set(apiVersion, known ?? info);
  }
  return documents;
}

/** The codes of the error examples of a document's operations. */
export function documentedCodes(document: OpenAPIObject): Set<string> {
  const codes = new Set<string>();
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item as Record<string, unknown>)) {
      const responses = (operation as { responses?: Record<string, unknown> }).responses ?? {};
      for (const response of Object.values(responses)) {
        const content = (response as { content?: Record<string, { examples?: object }> }).content;
        for (const media of Object.values(content ?? {})) {
          for (const example of Object.values(media.examples ?? {})) {
            const code = (example as { value?: { code?: unknown } }).value?.code;
            if (typeof code === 'string') codes.add(code);
          }
        }
      }
    }
  }
  return codes;
}

/**
 * Each document's description and Error schema list the registered codes, but not those that
 * only other versions' operations answer (v1's document does not list v2's `INVALID_CURSOR`).
 */
function describeErrorCodes(
  documents: Map<string, OpenAPIObject>,
  declared: Map<string, ApiDocumentInfo>,
): void {
  const documented = new Map([...documents].map(([v, doc]) => [v, documentedCodes(doc)]));
  for (const [version, document] of documents) {
    const own = documented.get(version) ?? new Set<string>();
    const codes = registeredErrorCodes().filter(
      ({ code }) => own.has(code) || ![...documented.values()].some((others) => others.has(code)),
    );
    document.info.description = declared.get(version)?.description(codes);
    const errorSchema = document.components?.schemas?.Error;
    const code = errorSchema && !('$ref' in errorSchema) ? errorSchema.properties?.code : undefined;
    if (code && !('$ref' in code)) {
      code.description = errorCodeDescription(codes);
    }
  }
}

/**
 * The operations of one version, relative to its prefix, with only the schemas they use (another
 * version's never show up here), and the Error schema completed.
 */
function versionDocument(document: OpenAPIObject, version: string): OpenAPIObject {
  const prefix = versionPrefix(version);
  document.paths = Object.fromEntries(
    Object.entries(document.paths)
      .filter(([path]) => path.startsWith(`${prefix}/`))
      .map(([path, item]) => [path.slice(prefix.length), item]),
  );
  pruneUnusedSchemas(document);
  const errorSchema = document.components?.schemas?.Error;
  // An error body has exactly these three fields (no decorator says so).
  if (errorSchema && !('$ref' in errorSchema)) errorSchema.additionalProperties = false;
  return document;
}

/** Drops the schemas no operation of the document reaches, directly or through another schema. */
function pruneUnusedSchemas(document: OpenAPIObject): void {
  const schemas = document.components?.schemas;
  if (!schemas) return;
  const used = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      value.forEach(visit);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        const match =
          key === '$ref' && typeof child === 'string'
            ? /^#\/components\/schemas\/(.+)$/.exec(child)
            : null;
        if (match && !used.has(match[1])) {
          used.add(match[1]);
          visit(schemas[match[1]]);
        } else {
          visit(child);
        }
      }
    }
  };
  visit(document.paths);
  for (const name of Object.keys(schemas)) {
    if (!used.has(name)) Reflect.deleteProperty(schemas, name);
  }
}
