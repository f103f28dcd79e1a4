import type { INestApplication } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ErrorCode, registeredErrorCodes } from '../common/errors/error-code';
import { RouteTable } from '../common/http/route-table';
import { versionPrefix } from '../common/http/versioning';
import { AppConfig } from '../config/app-config';
import { PLAN_LIMITS } from '../plans/plans';
import { describeApiLifecycle } from './api-lifecycle.openapi';
import { ApiTagDefinition } from './api-tag.decorator';
import { describeRequiredScopes } from './required-scopes.openapi';
import { type ApiDocumentInfo, ApiVersionDocument } from './api-version-document.decorator';
import { describeRouteThrottles } from './route-throttle.openapi';
import { selfServerUrl, versionedServerUrl } from './server-url';

/** The v1 document, as it has always been served, and Swagger UI on it. */
export const OPENAPI_JSON_PATH = '/openapi.json';
export const SWAGGER_UI_PATH = '/docs';
/** Every version's document: `/openapi/v1.json`, `/openapi/v2.json` ... */
export const openApiVersionPath = (version: string): string => `/openapi/v${version}.json`;
/** The name of the bearer security scheme in the document. */
export const BEARER_SCHEME = 'bearer';

/**
 * Where a client reads what changed: the changelog as this server serves it, relative to the
 * server's root, so that Swagger UI's link works wherever the service is deployed.
 */
export const CHANGELOG_PATH = '/changelog';
/** The repository's CHANGELOG.md, beside `src/` and `dist/` (the image copies it there too). */
const CHANGELOG_FILE = join(__dirname, '..', '..', 'CHANGELOG.md');
const CHANGELOG_LINK = `[CHANGELOG](${CHANGELOG_PATH})`;

const thousands = (n: number): string => n.toLocaleString('en-US');

/** Authentication, plans and errors: the same in every version (each document's description has them). */
export const commonSections = (codes: readonly ErrorCode[]): string => `## Authentication
Every operation needs an API key, sent as a bearer token: \`Authorization: Bearer <API_KEY>\`
(keys look like \`sk_\` followed by 43 base62 characters and are issued by the operator).
A missing or invalid key is answered \`401 UNAUTHORIZED\` with a \`WWW-Authenticate\` challenge.

A key may be restricted to scopes (\`orders:read\`, \`orders:cancel\` ...). An operation that
needs one names it in its description and in \`x-required-scopes\`; a valid key without it is
answered \`403 INSUFFICIENT_SCOPE\` with \`WWW-Authenticate: Bearer realm="store-orders",
error="insufficient_scope", scope="<scope>"\`, and the request counts against the key's limits.

## Plans and rate limits
| plan | per minute | per day |
|---|---|---|
${Object.entries(PLAN_LIMITS)
  .map(([plan, l]) => `| ${plan} | ${thousands(l.perMinute)} | ${thousands(l.perDay)} |`)
  .join('\n')}
| enterprise | set per key | set per key |

A request is admitted only if both its minute and its day window have room; a refused request
consumes nothing. Requests without a valid key are limited per client IP with the free plan's
numbers. Every response carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and
\`X-RateLimit-Reset\` (Unix seconds) for the window that binds most. Over the limit: \`429\` with
\`Retry-After\` in seconds; wait, and back off exponentially. A key that keeps sending after its
429s is banned for a while (\`429 API_KEY_BANNED\`).

## Errors
Every error is \`application/json\` with exactly \`{code, message, status}\`:
${codes.map((error) => `\`${error.code}\` (${error.status})`).join(', ')}.

## Stability, deprecation and changes
An operation marked \`x-stability\` (\`experimental\` or \`beta\`) may still change or go
without notice; its responses carry \`X-API-Stability\`. A \`deprecated\` operation says its
sunset date, and its responses carry \`Deprecation\` (RFC 9745), \`Sunset\` (RFC 8594) and
\`Link: <migration notes>; rel="deprecation"\` when there are notes; it keeps working for at
least six months after it is deprecated, and from its sunset date on answers \`410 GONE\`.
Every release of the API, dated, newest first (what it added, changed, deprecated, removed or
fixed), is in the service's changelog: ${CHANGELOG_LINK}.

## Additions to the specification
- \`Order.status\` (\`pending\`, \`shipped\`, \`cancelled\`): without it a client cannot tell which
  orders can be cancelled.
- int64 values (\`id\`, \`petId\`) are exact JSON integers over the whole int64 range: a
  JavaScript client needs a big-integer-aware JSON parser for values beyond 2^53.`;

/**
 * One OpenAPI document per API version, generated from the controllers' decorators and the
 * schema classes. Nest's URI versioning puts `/vN` in every route; a version's document keeps it
 * in the servers instead (`https://api.example.com/v1`) and its paths relative to them
 * (`/store/orders`), as the specification writes them. Its tags are those of the controllers
 * served in that version. Routes outside every version (health) are in none.
 */
export function createOpenApiDocuments(
  app: INestApplication,
  config: AppConfig,
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
            description: 'An API key: `Authorization: Bearer sk_...`',
          },
          BEARER_SCHEME,
        )
        .addSecurityRequirements(BEARER_SCHEME);
      if (config.publicBaseUrl !== undefined) {
        builder.addServer(versionedServerUrl(config.publicBaseUrl, version), 'Production');
      }
      if (config.stagingBaseUrl !== undefined) {
        builder.addServer(versionedServerUrl(config.stagingBaseUrl, version), 'Staging');
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
      code.description = `Machine-readable error code: ${codes.map((e) => e.code).join(', ')}`;
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
  // The contract: an error body has exactly these three fields (no decorator says so).
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

/**
 * Serves each version's document at `/openapi/vN.json`, v1's also at `/openapi.json`, and Swagger
 * UI at `/docs` offering them all, everything public. Without PUBLIC_BASE_URL, the first server is
 * this server itself, as the client reached it, so that "Try it out" calls the right address locally (and behind a
 * proxy, with TRUST_PROXY).
 */
export function setupOpenApi(app: INestApplication): void {
  const config = app.get(AppConfig);
  const documents = createOpenApiDocuments(app, config);
  const declared = declaredDocuments(app.get(DiscoveryService));
  // Under TRUST_PROXY, Express reads the scheme from X-Forwarded-Proto.
  const dependsOn = config.trustProxy === undefined ? 'Host' : 'Host, X-Forwarded-Proto';
  const forRequest = (
    req: Request,
    res: Response,
    doc: OpenAPIObject,
    version: string,
  ): OpenAPIObject => {
    if (config.publicBaseUrl !== undefined) return doc;
    // The document differs by these request headers: a cache must not serve one for another.
    res.vary(dependsOn);
    const self = {
      url: selfServerUrl(req.protocol, req.get('host'), version),
      description: 'This server',
    };
    return { ...doc, servers: [self, ...(doc.servers ?? [])] };
  };

  const http = app.getHttpAdapter();
  const routes = app.get(RouteTable);
  for (const [version, document] of documents) {
    http.get(openApiVersionPath(version), (req: Request, res: Response) => {
      res.json(forRequest(req, res, document, version));
    });
    routes.addMounted('GET', openApiVersionPath(version));
  }
  for (const path of [OPENAPI_JSON_PATH, SWAGGER_UI_PATH]) routes.addMounted('GET', path);
  // Public like the documents that link to it. An install without the file serves none (404).
  if (existsSync(CHANGELOG_FILE)) {
    const changelog = readFileSync(CHANGELOG_FILE, 'utf8');
    http.get(CHANGELOG_PATH, (_req: Request, res: Response) => {
      res.type('text/markdown; charset=utf-8').send(changelog);
    });
    routes.addMounted('GET', CHANGELOG_PATH);
  }

  const v1 = documents.get('1');
  if (!v1) return;
  SwaggerModule.setup(SWAGGER_UI_PATH, app, v1, {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    raw: ['json'],
    customSiteTitle: 'Petstore API: Store Orders',
    // Every version's document, v1 first: "Select a definition" switches between them.
    explorer: true,
    swaggerOptions: {
      displayOperationId: true,
      tryItOutEnabled: false,
      urls: [...documents.keys()].map((version) => ({
        url: openApiVersionPath(version),
        name: `v${version} (${declared.get(version)?.version ?? ''})`,
      })),
    },
    patchDocumentOnRequest: (req: unknown, res: unknown, doc: OpenAPIObject): OpenAPIObject =>
      forRequest(req as Request, res as Response, doc, '1'),
  });
}
