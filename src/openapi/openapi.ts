import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ErrorCode, ERROR_STATUS } from '../common/errors/error-code';
import { AppConfig } from '../config/app-config';
import { PLAN_LIMITS } from '../rate-limit/plan-limits';
import { API_VERSION_PREFIX, selfServerUrl, versionedServerUrl } from './server-url';

export const OPENAPI_JSON_PATH = '/openapi.json';
export const SWAGGER_UI_PATH = '/docs';
/** The name of the bearer security scheme in the document. */
export const BEARER_SCHEME = 'bearer';

const thousands = (n: number): string => n.toLocaleString('en-US');

const DESCRIPTION = `Lists a store's customer orders and cancels those not yet shipped.

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
${Object.values(ErrorCode)
  .map((code) => `\`${code}\` (${ERROR_STATUS[code]})`)
  .join(', ')}.

## Additions to the specification
- \`Order.status\` (\`pending\`, \`shipped\`, \`cancelled\`): without it a client cannot tell which
  orders can be cancelled.
- int64 values (\`id\`, \`petId\`) are exact JSON integers over the whole int64 range: a
  JavaScript client needs a big-integer-aware JSON parser for values beyond 2^53.

Filtering and pagination of the list are planned for v2.`;

/**
 * The OpenAPI document of v1, generated from the controllers' decorators and the schema classes.
 * Nest's URI versioning puts `/v1` in every route; the document keeps it in the servers instead
 * (`https://api.example.com/v1`) and its paths relative to them (`/store/orders`), as the
 * specification writes them. Routes outside `/v1` (health) are not part of it.
 */
export function createOpenApiDocument(app: INestApplication, config: AppConfig): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Petstore API')
    .setVersion('1.0.0')
    .setDescription(DESCRIPTION)
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
    builder.addServer(versionedServerUrl(config.publicBaseUrl), 'Production');
  }
  if (config.stagingBaseUrl !== undefined) {
    builder.addServer(versionedServerUrl(config.stagingBaseUrl), 'Staging');
  }
  const document = SwaggerModule.createDocument(app, builder.build());

  const prefix = `${API_VERSION_PREFIX}/`;
  document.paths = Object.fromEntries(
    Object.entries(document.paths)
      .filter(([path]) => path.startsWith(prefix))
      .map(([path, item]) => [path.slice(API_VERSION_PREFIX.length), item]),
  );
  // The contract: an error body has exactly these three fields (no decorator says so).
  const errorSchema = document.components?.schemas?.Error;
  if (errorSchema && !('$ref' in errorSchema)) errorSchema.additionalProperties = false;
  return document;
}

/**
 * Serves the document at `/openapi.json` and Swagger UI at `/docs`, both public. Without
 * PUBLIC_BASE_URL, the first server is this server itself, as the client reached it, so that
 * "Try it out" calls the right address locally (and behind a proxy, with TRUST_PROXY).
 */
export function setupOpenApi(app: INestApplication): void {
  const config = app.get(AppConfig);
  const document = createOpenApiDocument(app, config);
  // Under TRUST_PROXY, Express reads the scheme from X-Forwarded-Proto.
  const dependsOn = config.trustProxy === undefined ? 'Host' : 'Host, X-Forwarded-Proto';
  SwaggerModule.setup(SWAGGER_UI_PATH, app, document, {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    raw: ['json'],
    customSiteTitle: 'Petstore API: Store Orders',
    swaggerOptions: { displayOperationId: true, tryItOutEnabled: false },
    patchDocumentOnRequest: (req: unknown, res: unknown, doc: OpenAPIObject): OpenAPIObject => {
      if (config.publicBaseUrl !== undefined) return doc;
      const request = req as Request;
      // The document differs by these request headers: a cache must not serve one for another.
      (res as Response).vary(dependsOn);
      const self = {
        url: selfServerUrl(request.protocol, request.get('host')),
        description: 'This server',
      };
      return { ...doc, servers: [self, ...(doc.servers ?? [])] };
    },
  });
}
