import type { INestApplication } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { registeredErrorCodes } from '../common/errors/error-code';
import { RouteTable } from '../common/http/route-table';
import { versionPrefix } from '../common/http/versioning';
import { AppConfig } from '../config/app-config';
import { PLAN_LIMITS } from '../plans/plans';
import { ApiTagDefinition } from './api-tag.decorator';
import { versionedServerUrl } from './server-url';

/** The v1 document, as it has always been served, and Swagger UI on it. */
export const OPENAPI_JSON_PATH = '/openapi.json';
export const SWAGGER_UI_PATH = '/docs';
/** Every version's document: `/openapi/v1.json`, `/openapi/v2.json` ... */
export const openApiVersionPath = (version: string): string => `/openapi/v${version}.json`;
/** The name of the bearer security scheme in the document. */
export const BEARER_SCHEME = 'bearer';

/** What a version's document says of itself. Its tags and operations come from the controllers. */
export interface ApiDocumentInfo {
  title: string;
  version: string;
  /** Built with the document, so that it can list what the running modules registered. */
  description: () => string;
}

const thousands = (n: number): string => n.toLocaleString('en-US');

const V1_DESCRIPTION =
  (): string => `Lists a store's customer orders and cancels those not yet shipped.

## Authentication
Every operation needs an API key, sent as a bearer token: \`Authorization: Bearer <API_KEY>\`
(keys look like \`sk_\` followed by 43 base62 characters and are issued by the operator).
A missing or invalid key is answered \`401 UNAUTHORIZED\` with a \`WWW-Authenticate\` challenge.

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
${registeredErrorCodes()
  .map((error) => `\`${error.code}\` (${error.status})`)
  .join(', ')}.

## Additions to the specification
- \`Order.status\` (\`pending\`, \`shipped\`, \`cancelled\`): without it a client cannot tell which
  orders can be cancelled.
- int64 values (\`id\`, \`petId\`) are exact JSON integers over the whole int64 range: a
  JavaScript client needs a big-integer-aware JSON parser for values beyond 2^53.

Filtering and pagination of the list are planned for v2.`;

/**
 * The documents, by API version. Every version a controller is served under must have its entry
 * (creating the documents fails otherwise): a new version of the API is a new entry here, and its
 * controllers.
 */
export const API_DOCUMENTS: Readonly<Record<string, ApiDocumentInfo>> = {
  '1': { title: 'Petstore API', version: '1.0.0', description: V1_DESCRIPTION },
};

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

  return new Map(
    versions.map((version) => {
      const info = API_DOCUMENTS[version] as ApiDocumentInfo | undefined;
      if (!info) {
        throw new Error(
          `Routes are served under ${versionPrefix(version)} but API_DOCUMENTS has no v${version} entry`,
        );
      }
      const builder = new DocumentBuilder()
        .setTitle(info.title)
        .setVersion(info.version)
        .setDescription(info.description());
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
      return [
        version,
        versionDocument(SwaggerModule.createDocument(app, builder.build()), version),
      ];
    }),
  );
}

/** The operations of one version, relative to its prefix, and the Error schema completed. */
function versionDocument(document: OpenAPIObject, version: string): OpenAPIObject {
  const prefix = versionPrefix(version);
  document.paths = Object.fromEntries(
    Object.entries(document.paths)
      .filter(([path]) => path.startsWith(`${prefix}/`))
      .map(([path, item]) => [path.slice(prefix.length), item]),
  );
  const errorSchema = document.components?.schemas?.Error;
  if (errorSchema && !('$ref' in errorSchema)) {
    // The contract: an error body has exactly these three fields (no decorator says so).
    errorSchema.additionalProperties = false;
    const code = errorSchema.properties?.code;
    if (code && !('$ref' in code)) {
      const codes = registeredErrorCodes().map((error) => error.code);
      code.description = `Machine-readable error code: ${codes.join(', ')}`;
    }
  }
  return document;
}

/**
 * Serves each version's document at `/openapi/vN.json`, v1's also at `/openapi.json` with Swagger
 * UI at `/docs`, all public. Without PUBLIC_BASE_URL, the first server is this server itself, as
 * the client reached it, so that "Try it out" calls the right address locally (and behind a
 * proxy, with TRUST_PROXY).
 */
export function setupOpenApi(app: INestApplication): void {
  const config = app.get(AppConfig);
  const documents = createOpenApiDocuments(app, config);
  const forRequest = (req: Request, doc: OpenAPIObject, version: string): OpenAPIObject => {
    if (config.publicBaseUrl !== undefined) return doc;
    const host = req.get('host') ?? 'localhost';
    const self = {
      url: versionedServerUrl(`${req.protocol}://${host}`, version),
      description: 'This server',
    };
    return { ...doc, servers: [self, ...(doc.servers ?? [])] };
  };

  const http = app.getHttpAdapter();
  for (const [version, document] of documents) {
    http.get(openApiVersionPath(version), (req: Request, res: Response) => {
      res.json(forRequest(req, document, version));
    });
  }
  const v1 = documents.get('1');
  if (!v1) return;
  SwaggerModule.setup(SWAGGER_UI_PATH, app, v1, {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    raw: ['json'],
    customSiteTitle: 'Petstore API: Store Orders',
    swaggerOptions: { displayOperationId: true, tryItOutEnabled: false },
    patchDocumentOnRequest: (req: unknown, _res: unknown, doc: OpenAPIObject): OpenAPIObject =>
      forRequest(req as Request, doc, '1'),
  });
}
