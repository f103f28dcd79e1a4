import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { Request } from 'express';
import { ErrorCode, ERROR_STATUS } from '../common/errors/error-code';
import { AppConfig } from '../config/app-config';
import { PLAN_LIMITS } from '../rate-limit/plan-limits';
import { versionedServerUrl } from './server-url';

export const OPENAPI_JSON_PATH = '/openapi.json';
export const SWAGGER_UI_PATH = '/docs';
/** The name of the bearer security scheme in the document. */
export const BEARER_SCHEME = 'bearer';

const thousands = (n: number): string => n.toLocaleString('en-US');

/** Codes only v2's operations answer: not part of v1's document. */
const V2_CODES: readonly ErrorCode[] = [ErrorCode.INVALID_QUERY, ErrorCode.INVALID_CURSOR];

/** Authentication, plans and errors: the same for every version. */
const commonSections = (codes: ErrorCode[]): string => `## Authentication
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
${codes.map((code) => `\`${code}\` (${ERROR_STATUS[code]})`).join(', ')}.

## Additions to the specification
- \`Order.status\` (\`pending\`, \`shipped\`, \`cancelled\`): without it a client cannot tell which
  orders can be cancelled.
- int64 values (\`id\`, \`petId\`) are exact JSON integers over the whole int64 range: a
  JavaScript client needs a big-integer-aware JSON parser for values beyond 2^53.`;

const V1_CODES = Object.values(ErrorCode).filter((code) => !V2_CODES.includes(code));
const ALL_CODES = Object.values(ErrorCode);

const V1_DESCRIPTION = `Lists a store's customer orders and cancels those not yet shipped.

${commonSections(V1_CODES)}

## Version 2
Filtering and pagination of the list come with v2 (\`/openapi/v2.json\`), beside this version,
which stays as it is. Every answer of \`listOrders\` names it:
\`Link: </v2/store/orders>; rel="successor-version"\` (RFC 5829).`;

const V2_DESCRIPTION = `Lists a store's customer orders, filtered, sorted and one page at a time,
and cancels those not yet shipped. Version 2 of the API; version 1 (\`/openapi/v1.json\`) stays
as it was, and counts against the same rate-limit windows of a key.

## Pages
\`GET /store/orders\` answers \`{data, hasMore, nextCursor}\`. While \`hasMore\` is true, pass
\`nextCursor\` as \`cursor\` with the same filters and sort (the limit may change) for the next
page, or follow the response's \`Link: <…>; rel="next"\` (RFC 8288). Pages are found by keyset,
never by offset: page 10,000 costs what page 1 costs. Walking all pages visits exactly once, in
sort order, every order that matched throughout the walk and whose sort key did not change,
whatever is placed, cancelled or shipped meanwhile. Cursors are opaque and do not expire; one
reused with other filters or another sort, or altered, is \`400 INVALID_CURSOR\`. Parameters are
strict: an unknown, repeated, empty or out-of-rule one is \`400 INVALID_QUERY\`, naming it.

${commonSections(ALL_CODES)}`;

/** The versions of the API: each has its own document, built from its controllers. */
export const API_VERSIONS = [
  {
    prefix: '/v1',
    version: '1.0.0',
    documentUrl: '/openapi/v1.json',
    description: V1_DESCRIPTION,
    codes: V1_CODES,
  },
  {
    prefix: '/v2',
    version: '2.0.0',
    documentUrl: '/openapi/v2.json',
    description: V2_DESCRIPTION,
    codes: ALL_CODES,
  },
] as const;
type ApiVersion = (typeof API_VERSIONS)[number];

/**
 * The OpenAPI document of one version, generated from the controllers' decorators and the schema
 * classes. Nest's URI versioning puts `/vN` in every route; the document keeps it in the servers
 * instead (`https://api.example.com/v2`) and its paths relative to them (`/store/orders`), as the
 * specification writes them. Routes of other versions and outside any (health) are not part of
 * it, nor are the schemas only they use.
 */
export function createOpenApiDocument(
  app: INestApplication,
  config: AppConfig,
  version: ApiVersion = API_VERSIONS[0],
): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Petstore API')
    .setVersion(version.version)
    .setDescription(version.description)
    .addTag('orders', "Place and manage customer orders: list the store's orders, cancel one.")
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
    builder.addServer(versionedServerUrl(config.publicBaseUrl, version.prefix), 'Production');
  }
  if (config.stagingBaseUrl !== undefined) {
    builder.addServer(versionedServerUrl(config.stagingBaseUrl, version.prefix), 'Staging');
  }
  const document = SwaggerModule.createDocument(app, builder.build());

  const prefix = `${version.prefix}/`;
  document.paths = Object.fromEntries(
    Object.entries(document.paths)
      .filter(([path]) => path.startsWith(prefix))
      .map(([path, item]) => [path.slice(version.prefix.length), item]),
  );
  pruneUnusedSchemas(document);
  // The contract: an error body has exactly these three fields (no decorator says so), and its
  // codes are this version's.
  const errorSchema = document.components?.schemas?.Error;
  if (errorSchema && !('$ref' in errorSchema)) {
    errorSchema.additionalProperties = false;
    const code = errorSchema.properties?.code;
    if (code && !('$ref' in code)) {
      code.description = `Machine-readable error code: ${version.codes.join(', ')}`;
    }
  }
  return document;
}

/** Drops the component schemas no path of the document reaches (other versions' schemas). */
function pruneUnusedSchemas(document: OpenAPIObject): void {
  const schemas = document.components?.schemas;
  if (!schemas) return;
  const used = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      value.forEach(visit);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        const name =
          key === '$ref' && typeof inner === 'string'
            ? /^#\/components\/schemas\/(.+)$/.exec(inner)?.[1]
            : undefined;
        if (name !== undefined && !used.has(name)) {
          used.add(name);
          visit(schemas[name]);
        }
        visit(inner);
      }
    }
  };
  visit(document.paths);
  for (const name of Object.keys(schemas)) {
    if (!used.has(name)) Reflect.deleteProperty(schemas, name);
  }
}

/**
 * Serves each version's document (v1's also at `/openapi.json`, where it always was) and Swagger
 * UI at `/docs` offering them all, everything public. Without PUBLIC_BASE_URL, the first server is
 * this server itself, as the client reached it, so that "Try it out" calls the right address
 * locally (and behind a proxy, with TRUST_PROXY).
 */
export function setupOpenApi(app: INestApplication): void {
  const config = app.get(AppConfig);
  for (const version of API_VERSIONS) {
    const document = createOpenApiDocument(app, config, version);
    const patchDocumentOnRequest = (
      req: unknown,
      _res: unknown,
      doc: OpenAPIObject,
    ): OpenAPIObject => {
      if (config.publicBaseUrl !== undefined) return doc;
      const { protocol } = req as Request;
      const host = (req as Request).get('host') ?? 'localhost';
      const self = {
        url: versionedServerUrl(`${protocol}://${host}`, version.prefix),
        description: 'This server',
      };
      return { ...doc, servers: [self, ...(doc.servers ?? [])] };
    };
    const documentOnly = { ui: false, raw: ['json'] as 'json'[], patchDocumentOnRequest };
    SwaggerModule.setup(version.documentUrl, app, document, {
      ...documentOnly,
      jsonDocumentUrl: version.documentUrl,
    });
    if (version !== API_VERSIONS[0]) continue;
    SwaggerModule.setup(SWAGGER_UI_PATH, app, document, {
      ...documentOnly,
      ui: true,
      jsonDocumentUrl: OPENAPI_JSON_PATH,
      customSiteTitle: 'Petstore API: Store Orders',
      explorer: true,
      swaggerOptions: {
        displayOperationId: true,
        tryItOutEnabled: false,
        urls: API_VERSIONS.map(({ prefix, version: semver, documentUrl }) => ({
          url: documentUrl,
          name: `${prefix.slice(1)} (${semver})`,
        })),
      },
    });
  }
}
